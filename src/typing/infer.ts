import type { Dialect } from '../dialects/dialect.js';
import type { Driver } from '../dialects/driver.js';
import { CLASSES, valueClass, type Lexical, type ValueClass } from './lexical.js';

/**
 * A column's type, decided by what its values say (docs/TYPES.md "Inferred types"):
 * the values fall into families (numbers, booleans, times, text, nested); the family of more than
 * half of the non-null values decides, and within it the narrowest type all of its values fit.
 * A value of another family that the type cannot hold is that record's problem (quarantined);
 * when no family holds more than half, the column is mixed and the caller stops.
 */
export type TypeDecision =
  | { kind: 'typed'; type: string }
  | { kind: 'mixed'; samples: string[] }
  | { kind: 'textSequence'; samples: string[] };

type Family = 'number' | 'boolean' | 'time' | 'text' | 'nested';
const FAMILY: Record<ValueClass, Family> = {
  i: 'number', I: 'number', H: 'number', f: 'number',
  b: 'boolean', n: 'nested', d: 'time', w: 'time', z: 'time',
  si: 'text', sI: 'text', sH: 'text', sf: 'text', sb: 'text', s: 'text',
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
      if (c.f + c.sf > 0) return { kind: 'typed', type: d.types.double };
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
      const numeric = c.i + c.I + c.H + c.f + c.si + c.sI + c.sH + c.sf + c.d + c.w + c.z;
      if (isSequence && numeric > 0) {
        const sample = stats.samples.number ?? stats.samples.time ?? '';
        return { kind: 'textSequence', samples: [stats.samples.text ?? '', sample] };
      }
      return { kind: 'typed', type: d.types.text };
    }
  }
}

/** A staged column to type: its name, how it holds its values, whether it is a sequence part. */
export interface UntypedColumn {
  name: string;
  lexical: Lexical;
  isSequence: boolean;
}

/**
 * One pass over the staged records classes every value of the given columns and counts the
 * classes per column (all files of the commit together).
 */
export async function inferTypes(driver: Driver, table: string, columns: UntypedColumn[]): Promise<Map<string, TypeDecision>> {
  const out = new Map<string, TypeDecision>();
  if (!columns.length) return out;
  const d = driver.dialect;
  const q = d.quote;
  const inner = columns.flatMap((c, j) => [
    `${valueClass(d, q(c.name), c.lexical)} AS k${j}`,
    `left(${c.lexical === 'json' ? d.jsonText(q(c.name)) : q(c.name)}, 40) AS t${j}`,
  ]);
  const aggregates = columns.flatMap((c, j) => [
    ...CLASSES.map((k, i) => `count(*) FILTER (WHERE k${j} = '${k}') AS c${j}_${i}`),
    ...FAMILIES.map((f) => {
      const members = CLASSES.filter((k) => FAMILY[k] === f).map((k) => `'${k}'`);
      return `min(t${j}) FILTER (WHERE k${j} IN (${members.join(', ')})) AS s${j}_${f}`;
    }),
  ]);
  const row = (await driver.query(`SELECT ${aggregates.join(', ')} FROM (SELECT ${inner.join(', ')} FROM ${q(table)}) v`))[0] ?? {};
  for (const [j, c] of columns.entries()) {
    const counts = Object.fromEntries(CLASSES.map((k, i) => [k, Number(row[`c${j}_${i}`] ?? 0)])) as Record<ValueClass, number>;
    const samples: ColumnStats['samples'] = {};
    for (const f of FAMILIES) {
      const s = row[`s${j}_${f}`];
      if (s !== null && s !== undefined) samples[f] = String(s);
    }
    out.set(c.name, decideType(d, { counts, samples }, c.lexical, c.isSequence));
  }
  return out;
}
