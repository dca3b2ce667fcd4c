import type { Dialect } from '../dialects/dialect.js';
import type { Driver, Lexical } from '../dialects/driver.js';
import { CLASSES, jsonTextForClass, type ValueClass, valueClass } from './lexical.js';

/**
 * A column's type, decided by what its values say (docs/TYPES.md "Inferred types"):
 * the values fall into families (numbers, booleans, times, text, nested); the family of more than
 * half of the non-null values decides, and within it the narrowest type all of its values fit.
 * A value of another family that the type cannot hold is that record's problem (quarantined);
 * when no family holds more than half, the column is mixed and the caller stops.
 */
export type TypeDecision =
  | { kind: 'typed'; type: string }
  /** Integers and fractions: the type depends on their digits (typing/exact-numbers.ts). */
  | { kind: 'integersAndFractions' }
  | { kind: 'mixed'; samples: string[] }
  | { kind: 'textSequence'; samples: string[] };

type Family = 'number' | 'boolean' | 'time' | 'text' | 'nested';
const FAMILY: Record<ValueClass, Family> = {
  i: 'number',
  I: 'number',
  H: 'number',
  f: 'number',
  X: 'number',
  b: 'boolean',
  n: 'nested',
  d: 'time',
  w: 'time',
  z: 'time',
  si: 'text',
  sI: 'text',
  sH: 'text',
  sf: 'text',
  sX: 'text',
  sb: 'text',
  s: 'text',
};
const FAMILIES: Family[] = ['number', 'boolean', 'time', 'text', 'nested'];

export interface ColumnStats {
  counts: Record<ValueClass, number>;
  /** One value of each family present, for messages. */
  samples: Partial<Record<Family, string>>;
}

export function decideType(d: Dialect, stats: ColumnStats, lexical: Lexical, isSequence: boolean): TypeDecision {
  const c = stats.counts;
  const total = CLASSES.reduce((n, k) => n + c[k], 0);
  if (total === 0) return { kind: 'typed', type: lexical === 'json' ? d.types.json : d.types.text };
  const byFamily = new Map<Family, number>(FAMILIES.map((f) => [f, 0]));
  for (const k of CLASSES) byFamily.set(FAMILY[k], byFamily.get(FAMILY[k])! + c[k]);
  const ranked = FAMILIES.filter((f) => byFamily.get(f)! > 0).sort((a, b) => byFamily.get(b)! - byFamily.get(a)!);
  const samples = ranked.slice(0, 2).map((f) => stats.samples[f] ?? '');
  const primary = ranked[0]!;
  if (byFamily.get(primary)! * 2 <= total) return { kind: 'mixed', samples };
  switch (primary) {
    case 'number': {
      // Numeric text (JSON "12") takes part: it fits the column as the number it spells.
      // Integers with fractions: a double unless it would round an integer (exact-numbers.ts).
      // A number beyond every double (X) takes part in the family, never in the type: no number
      // type holds it, so its record is quarantined whichever type the others decide.
      if (c.f + c.sf > 0) return c.i + c.I + c.H + c.si + c.sI + c.sH > 0 ? { kind: 'integersAndFractions' } : { kind: 'typed', type: d.types.double };
      if (c.i + c.I + c.H + c.si + c.sI + c.sH === 0) return { kind: 'typed', type: d.types.double };
      if (c.I + c.sI > 0) return { kind: 'typed', type: d.decimal(38, 0) };
      return { kind: 'typed', type: d.types.bigint };
    }
    case 'boolean':
      return { kind: 'typed', type: d.types.bool };
    case 'time':
      return { kind: 'typed', type: c.z > 0 ? d.types.timestamptz : c.w > 0 ? d.types.timestamp : d.types.date };
    case 'nested':
      return { kind: 'typed', type: d.types.json };
    case 'text': {
      const numeric = c.i + c.I + c.H + c.f + c.X + c.si + c.sI + c.sH + c.sf + c.sX + c.d + c.w + c.z;
      if (isSequence && numeric > 0) {
        const sample = stats.samples.number ?? stats.samples.time ?? '';
        return { kind: 'textSequence', samples: [stats.samples.text ?? '', sample] };
      }
      return { kind: 'typed', type: d.types.text };
    }
  }
}

/** What the values of a staged column say: its type, and every class its non-null values have. */
export interface InferredType {
  decision: TypeDecision;
  classes: ReadonlySet<ValueClass>;
}

/** A staged column to type: its name, how it holds its values, whether it is a sequence part. */
export interface UntypedColumn {
  name: string;
  lexical: Lexical;
  isSequence: boolean;
}

/**
 * One pass over the staged records classes every value of the given columns and counts the
 * classes per column (all files of the commit together). The samples a message quotes are looked
 * up afterwards, only for a column whose values stop the apply.
 */
export async function inferTypes(driver: Driver, table: string, columns: UntypedColumn[]): Promise<Map<string, InferredType>> {
  const out = new Map<string, InferredType>();
  if (!columns.length) return out;
  const d = driver.dialect;
  // One grouping by every column's class at once: real data has few combinations of classes, so
  // this hashes short keys into a handful of groups (a count per group).
  const ks = columns.map((_, j) => `k${j}`);
  const rows = await driver.query(`SELECT ${ks.join(', ')}, count(*) AS n FROM (${classesSql(d, table, columns, 'classes')}) c GROUP BY ${ks.join(', ')}`);
  for (const [j, c] of columns.entries()) {
    const counts = Object.fromEntries(CLASSES.map((k) => [k, 0])) as Record<ValueClass, number>;
    for (const r of rows) {
      const k = r[`k${j}`];
      if (k !== null && k !== undefined) counts[String(k) as ValueClass] += Number(r.n);
    }
    let decision = decideType(d, { counts, samples: {} }, c.lexical, c.isSequence);
    if (decision.kind !== 'typed') decision = decideType(d, { counts, samples: await samplesOf(driver, table, c) }, c.lexical, c.isSequence);
    out.set(c.name, { decision, classes: new Set(CLASSES.filter((k) => counts[k] > 0)) });
  }
  return out;
}

/**
 * Each value's class (k0, k1, ...) and its text (x0, x1, ...), per staged record: each value's text
 * and kind computed once (innermost), its class from them.
 *
 * `textOf`: which values' text the query extracts. `'all'` (for the samples a message quotes):
 * every value's, as written. `'classes'` (for the counts): only where the class depends on it
 * (lexical.ts jsonTextForClass): a JSON value's text is a new string per value, and most values'
 * classes are told without it.
 */
function classesSql(d: Dialect, table: string, columns: UntypedColumn[], textOf: 'all' | 'classes'): string {
  const q = d.quote;
  const texts = columns.flatMap((c, j) => {
    if (c.lexical !== 'json') return [`${q(c.name)} AS x${j}`];
    const text = textOf === 'all' ? d.jsonText(q(c.name)) : jsonTextForClass(d, q(c.name));
    return [`${text} AS x${j}`, `CASE WHEN ${q(c.name)} IS NOT NULL THEN ${d.jsonKind(q(c.name))} END AS j${j}`];
  });
  const classes = columns.flatMap((c, j) => [`${valueClass(d, `x${j}`, c.lexical === 'json' ? `j${j}` : undefined)} AS k${j}`, `x${j}`]);
  return `SELECT ${classes.join(', ')} FROM (SELECT ${texts.join(', ')} FROM ${q(table)}${d.computeOnce}) x${d.computeOnce}`;
}

/**
 * One value of each family in a column (the least of its first 40 characters), for messages,
 * spelled so that two families never read alike: a JSON string in quotes, a JSON number or
 * boolean bare (the string "2" beside the number 1); a CSV's values, all text, each in quotes.
 * Text that spells no other kind (class s) stands for the text family where there is some.
 */
async function samplesOf(driver: Driver, table: string, column: UntypedColumn): Promise<ColumnStats['samples']> {
  const rows = await driver.query(
    `SELECT k0 AS k, min(left(x0, 40)) AS t FROM (${classesSql(driver.dialect, table, [column], 'all')}) c WHERE k0 IS NOT NULL GROUP BY k0 ORDER BY k0`,
  );
  const found: Partial<Record<Family, { text: string; plain: boolean }>> = {};
  for (const r of rows) {
    const family = FAMILY[String(r.k) as ValueClass];
    if (r.t === null || r.t === undefined) continue;
    const text = String(r.t);
    const plain = String(r.k) === 's';
    const was = found[family];
    if (was === undefined || (plain && !was.plain) || (plain === was.plain && text < was.text)) found[family] = { text, plain };
  }
  const samples: ColumnStats['samples'] = {};
  for (const family of FAMILIES) {
    const f = found[family];
    if (f === undefined) continue;
    samples[family] = column.lexical === 'json' && family !== 'text' ? f.text : JSON.stringify(f.text);
  }
  return samples;
}
