/**
 * The values change data really holds, laid over the scenarios of ./arbitraries.ts.
 *
 * A scenario's columns hold small domains (id 1..3, seq 0..8, a 1..3, …). Here each column gets a
 * kind, and its domain is mapped one-to-one onto values of that kind: sequences as big integers,
 * instants written with zones and offsets in mixed styles, wall-clock times or dates; payloads as
 * integers beyond 2^53, exact decimals, doubles at the edges (±1e308, -0.0), unicode and empty
 * strings, instants, dates. The mapping keeps what the model decides by: equal domain values stay
 * equal, and order is kept where the model orders (keys, sequence, and the engine's text of a
 * value where ties are ordered by it).
 *
 * Each value exists in three forms:
 * - its canonical form, which the reference model works on (`Val`): a number for plain integers,
 *   else a string whose JS order is the engine's order of the value (fixed-width instants, dates
 *   and big integers) and which agrees with the engine's text of the value wherever two values of
 *   the domain first differ (so ties, ordered by that text, are ordered alike);
 * - a JSON text as a change file holds it, in one of several styles (offsets, `T` or a space,
 *   exponent forms, escapes, a decimal as a JSON string);
 * - a JS value as a library user passes it in rows (BigInt, -0, Date, ±Infinity).
 *
 * Some records get a number beyond a double (1e999, -1e999) in a double column: a value that does
 * not fit, which the model quarantines.
 */
import fc from 'fast-check';
import type { FlowInput } from '../../src/index.js';
import { ALL_COLUMNS, type Scenario, type ScenarioOptions, scenarioArb } from './arbitraries.js';
import { type ModelSpec, type Rec, toEvent, type Val } from './model.js';

export type Kind = 'int' | 'bigint' | 'decimal' | 'double' | 'ascii' | 'unicode' | 'zoned' | 'naive' | 'date';

/** The kinds each column may take (lsn and op stay as they are: op drives deletes and truncates). */
const KINDS_OF: Record<string, Kind[]> = {
  id: ['int', 'bigint'],
  reg: ['ascii', 'unicode'],
  seq: ['int', 'bigint', 'zoned', 'naive', 'date'],
  lsn: ['int'],
  op: ['ascii'],
  a: ['int', 'bigint', 'decimal', 'double'],
  b: ['ascii', 'unicode'],
  c: ['int', 'zoned', 'naive', 'date'],
};

/** A decimal column is declared (an inferred column of fractions is a double: TYPES.md). */
export const DECIMAL_TYPE = 'decimal(20,1)';

const BASE_MS = Date.UTC(2025, 4, 1, 9, 0, 0);

/** The canonical form of each kind's values, per column, indexed by the column's domain value. */
function canonicalDomain(column: string, kind: Kind): (v: Val) => Val {
  const at = (xs: Val[], from: number) => (v: Val) => xs[(v as number) - from]!;
  switch (column) {
    case 'id':
      return kind === 'bigint' ? at(['9007199254740993', '9007199254740995', '9223372036854775807'], 1) : (v) => v;
    case 'reg':
      return kind === 'unicode' ? (v) => (v === 'n' ? '' : 'Zürich') : (v) => v;
    case 'seq':
      switch (kind) {
        case 'bigint':
          return (v) => `90071992547409${90 + (v as number)}`;
        case 'zoned':
          return (v) => zonedCanon(BASE_MS + (v as number) * 1000);
        case 'naive':
          return (v) => zonedCanon(BASE_MS + (v as number) * 1000).slice(0, 19);
        case 'date':
          return (v) => `2025-05-0${(v as number) + 1}`;
        default:
          return (v) => v;
      }
    case 'a':
      switch (kind) {
        case 'bigint':
          return at(['-9007199254740993', '9007199254740993', '9223372036854775807'], 1);
        case 'decimal':
          return at(['-0.5', '1.5', '9007199254740993.0'], 1);
        case 'double':
          return at(['-0.0', '-1e+308', '1e+308'], 1);
        default:
          return (v) => v;
      }
    case 'b':
      return kind === 'unicode' ? (v) => (v === 'x' ? '' : 'é, "日本"\n😀') : (v) => v;
    case 'c':
      switch (kind) {
        case 'zoned':
          return at([zonedCanon(Date.UTC(2024, 11, 31, 23)), zonedCanon(Date.UTC(2025, 5, 30, 18, 30))], 0);
        case 'naive':
          return at(['2024-12-31 23:00:00', '2025-06-30 18:30:00'], 0);
        case 'date':
          return at(['2024-12-31', '2025-06-30'], 0);
        default:
          return (v) => v;
      }
    default:
      return (v) => v;
  }
}

/** An instant's canonical form: the engine's text of it in UTC, `2025-05-01 09:00:00+00`. */
function zonedCanon(ms: number): string {
  const iso = new Date(ms).toISOString();
  const frac = iso.slice(19, 23) === '.000' ? '' : iso.slice(19, 23).replace(/0+$/, '');
  return `${iso.slice(0, 10)} ${iso.slice(11, 19)}${frac}+00`;
}

function msOfZonedCanon(c: string): number {
  return Date.parse(`${c.slice(0, 10)}T${c.slice(11, -3)}Z`);
}

/** The offsets an instant is written with (minutes east of UTC). */
const OFFSETS = [0, 120, -330, 330, -480];

/** An instant written in one of the ISO-8601 styles CDC exports mix, picked by `style`. */
function zonedText(canon: string, style: number): string {
  const ms = msOfZonedCanon(canon);
  const offset = OFFSETS[style % OFFSETS.length]!;
  const local = new Date(ms + offset * 60_000).toISOString().slice(0, 23);
  const sign = offset < 0 ? '-' : '+';
  const hh = String(Math.floor(Math.abs(offset) / 60)).padStart(2, '0');
  const mm = String(Math.abs(offset) % 60).padStart(2, '0');
  const t = Math.floor(style / OFFSETS.length) % 2 ? local.replace('T', ' ') : local;
  const whole = Math.floor(style / 10) % 2 ? t : t.slice(0, 19);
  if (offset === 0) return `${whole}${style % 3 === 0 ? 'Z' : '+00:00'}`;
  return `${whole}${sign}${hh}${style % 2 ? ':' : ''}${mm}`;
}

/** A value as a JSON text of a change file, in one of its kind's styles. */
function jsonText(kind: Kind, canon: Val, style: number): string {
  if (canon === null) return 'null';
  if (canon === UNFIT_HIGH || canon === UNFIT_LOW) return (canon === UNFIT_LOW ? '-' : '') + (style % 2 ? '1e999' : '1E+999');
  switch (kind) {
    case 'int':
      return String(canon);
    case 'bigint':
      return String(canon);
    case 'decimal':
      // An exact decimal as a JSON number or as a JSON string (a string in a number column is its number).
      return style % 2 ? String(canon) : JSON.stringify(canon);
    case 'double':
      if (canon === '-0.0') return style % 2 ? '-0.0' : '-0e0';
      return (canon as string).replace('e+', ['e', 'E', 'e+', 'E+'][style % 4]!);
    case 'zoned':
      return JSON.stringify(zonedText(canon as string, style));
    case 'naive':
      return JSON.stringify(style % 2 ? (canon as string).replace(' ', 'T') : canon);
    case 'date':
      return JSON.stringify(canon);
    case 'unicode':
      // Half the time with every non-ASCII character escaped (\u00e9, surrogate pairs).
      return style % 2 ? JSON.stringify(canon).replace(/[^\x20-\x7e]/g, (ch) => `\\u${ch.charCodeAt(0).toString(16).padStart(4, '0')}`) : JSON.stringify(canon);
    default:
      return JSON.stringify(canon);
  }
}

/** A value as a library user holds it in a row. */
function rowValue(kind: Kind, canon: Val, style: number): unknown {
  if (canon === null) return null;
  if (canon === UNFIT_HIGH) return Infinity;
  if (canon === UNFIT_LOW) return -Infinity;
  switch (kind) {
    case 'bigint':
      return BigInt(canon);
    case 'decimal':
      return canon; // an exact decimal in JS is its text
    case 'double':
      return canon === '-0.0' ? -0 : Number(canon);
    case 'zoned':
      return style % 2 ? new Date(msOfZonedCanon(canon as string)) : zonedText(canon as string, style);
    case 'naive':
    case 'date':
      return canon;
    default:
      return canon;
  }
}

/** Canonical markers of a number beyond a double (1e999, -1e999): it does not fit its column. */
export const UNFIT_HIGH = '<1e999>';
export const UNFIT_LOW = '<-1e999>';
const unfit = (v: Val) => v === UNFIT_HIGH || v === UNFIT_LOW;

/** One record in its three forms. */
export interface WideRecord {
  /** Canonical values, for the model. */
  canon: Rec;
  /** One line of a change file, keys in source order. */
  line: string;
  /** The record as a library user's row. */
  row: Record<string, unknown>;
  /** The order its keys are written in. */
  order: string[];
}

export interface WideScenario {
  flow: FlowInput;
  spec: ModelSpec;
  /** The kind of every column, stored ones included (previous values, __START_AT/__END_AT). */
  kinds: Record<string, Kind>;
  records: WideRecord[];
  batches: WideRecord[][];
}

const wideArb = fc.record({
  kindPicks: fc.array(fc.nat(99), { minLength: ALL_COLUMNS.length, maxLength: ALL_COLUMNS.length }),
  styles: fc.array(fc.nat(1000), { minLength: 8, maxLength: 8 }),
  /** [record, high]: that record's `a`, where null, becomes 1e999 (or -1e999). */
  unfit: fc.array(fc.tuple(fc.nat(60), fc.boolean()), { maxLength: 2 }),
  /** Records write their keys rotated by `rotate` places per record (0: all in source order, as most exports do). */
  rotate: fc.oneof({ arbitrary: fc.constant(0), weight: 2 }, { arbitrary: fc.nat(7), weight: 1 }),
});

export function wideScenarioArb(opts: ScenarioOptions): fc.Arbitrary<WideScenario> {
  return fc.record({ sc: scenarioArb(opts), w: wideArb }).map(({ sc, w }) => {
    const wide = widen(sc, w);
    Object.defineProperty(wide, fc.toStringMethod, { value: () => describeWide(wide), enumerable: false });
    return wide;
  });
}

function widen(sc: Scenario, w: { kindPicks: number[]; styles: number[]; unfit: Array<[number, boolean]>; rotate: number }): WideScenario {
  const kinds: Record<string, Kind> = {};
  ALL_COLUMNS.forEach((c, i) => {
    const options = KINDS_OF[c]!;
    kinds[c] = options[w.kindPicks[i]! % options.length]!;
  });
  const maps = Object.fromEntries(ALL_COLUMNS.map((c) => [c, canonicalDomain(c, kinds[c]!)]));
  const payloadA = sc.spec.sourceColumns.includes('a') && (sc.spec.columns ? sc.spec.columns.includes('a') : !(sc.spec.exceptColumns ?? []).includes('a'));
  const unfitAt = new Map(kinds.a === 'double' && payloadA ? w.unfit.map(([i, high]) => [i % sc.records.length, high] as const) : []);
  // Records are shared between `records` and `batches` by identity: widen each object once.
  const done = new Map<Rec, WideRecord>();
  let n = 0;
  const wideOf = (r: Rec): WideRecord => {
    const hit = done.get(r);
    if (hit) return hit;
    const i = n++;
    const canon: Rec = {};
    for (const c of sc.spec.sourceColumns) canon[c] = r[c] === null || r[c] === undefined ? null : maps[c]!(r[c]!);
    const u = unfitAt.get(sc.records.indexOf(r));
    if (u !== undefined && canon.a === null) canon.a = u ? UNFIT_HIGH : UNFIT_LOW;
    const style = (j: number) => w.styles[j % w.styles.length]! + i * 7 + j;
    const columns = sc.spec.sourceColumns;
    const k = (w.rotate * i) % columns.length;
    const order = [...columns.slice(k), ...columns.slice(0, k)];
    const line = `{${order.map((c, j) => `${JSON.stringify(c)}:${jsonText(kinds[c]!, canon[c]!, style(j))}`).join(',')}}`;
    const row = Object.fromEntries(order.map((c, j) => [c, rowValue(kinds[c]!, canon[c]!, style(j))]));
    const wide = { canon, line, row, order };
    done.set(r, wide);
    return wide;
  };
  const records = sc.records.map(wideOf);
  const batches = sc.batches.map((b) => b.map(wideOf));
  const flow: FlowInput = { ...sc.flow, ...(kinds.a === 'decimal' ? { columnTypes: { a: DECIMAL_TYPE } } : {}) };
  const fits = (r: Rec) => !unfit(r.a ?? null);
  // A new target's columns (which order ties) are those of the first record its first commit applies, as written.
  const first = batches[0]?.find((r) => toEvent({ ...sc.spec, fits }, r.canon));
  const spec: ModelSpec = { ...sc.spec, sourceColumns: first ? first.order : sc.spec.sourceColumns, fits };
  const all: Record<string, Kind> = { ...kinds };
  for (const [of, as] of Object.entries(sc.spec.previousValues ?? {})) all[as] = kinds[of]!;
  all.__START_AT = kinds.seq!;
  all.__END_AT = kinds.seq!;
  return { flow, spec, kinds: all, records, batches };
}

export function describeWide(sc: WideScenario): string {
  const kinds = Object.entries(sc.kinds)
    .filter(([c]) => (ALL_COLUMNS as readonly string[]).includes(c))
    .map(([c, k]) => `${c}:${k}`)
    .join(' ');
  return [`flow: ${JSON.stringify(sc.flow)}`, `kinds: ${kinds}`, ...sc.batches.map((b, i) => `batch ${i + 1}:\n  ${b.map((r) => r.line).join('\n  ')}`)].join('\n');
}

// ---------------------------------------------------------------------------------------------
// Reading what scdkit wrote back into canonical values

/** A JSON number as written (its exact text), from parseJsonExact. */
export class JsonNumber {
  constructor(readonly raw: string) {}
}

/**
 * JSON.parse that keeps every number's text (a JS number would round 9007199254740993 and drop
 * the sign of -0.0 in `0`/`-0` comparisons): numbers become JsonNumber.
 */
export function parseJsonExact(text: string): unknown {
  let i = 0;
  const ws = () => {
    while (i < text.length && ' \t\r\n'.includes(text[i]!)) i++;
  };
  const value = (): unknown => {
    ws();
    const ch = text[i];
    if (ch === '{') {
      i++;
      const o: Record<string, unknown> = {};
      ws();
      if (text[i] === '}') {
        i++;
        return o;
      }
      for (;;) {
        ws();
        const k = value() as string;
        ws();
        i++; // ':'
        o[k] = value();
        ws();
        if (text[i++] === '}') return o;
      }
    }
    if (ch === '[') {
      i++;
      const a: unknown[] = [];
      ws();
      if (text[i] === ']') {
        i++;
        return a;
      }
      for (;;) {
        a.push(value());
        ws();
        if (text[i++] === ']') return a;
      }
    }
    if (ch === '"') {
      const start = i;
      i++;
      while (text[i] !== '"') i += text[i] === '\\' ? 2 : 1;
      i++;
      return JSON.parse(text.slice(start, i));
    }
    const m = /^(?:-?\d+(?:\.\d+)?(?:[eE][+-]?\d+)?|true|false|null|-?Infinity|NaN)/.exec(text.slice(i));
    if (!m) throw new Error(`not JSON at ${i}: ${text.slice(i, i + 20)}`);
    i += m[0].length;
    if (m[0] === 'true') return true;
    if (m[0] === 'false') return false;
    if (m[0] === 'null') return null;
    return new JsonNumber(m[0]);
  };
  const v = value();
  ws();
  if (i !== text.length) throw new Error(`not JSON: trailing text at ${i}`);
  return v;
}

const INSTANT = /^(\d{4}-\d\d-\d\d)[T ](\d\d:\d\d:\d\d)(\.\d+)?(Z|[+-]\d\d(?::?\d\d)?)?$/;

/** The canonical form of a value scdkit wrote (JSON, CSV or a table cell), read as its column's kind. */
export function canonOf(kind: Kind, v: unknown): unknown {
  if (v === null || v === undefined) return null;
  if (typeof v === 'object' && !(v instanceof JsonNumber)) return v; // a struct: canonRow handles it
  const text = v instanceof JsonNumber ? v.raw : String(v);
  switch (kind) {
    case 'int':
      return /^-?\d+$/.test(text) ? Number(text) : `not an integer: ${text}`;
    case 'bigint':
      return /^-?\d+$/.test(text) ? text : `not an integer: ${text}`;
    case 'decimal': {
      const m = /^(-?)(\d+)(?:\.(\d*))?$/.exec(text);
      if (!m) return `not a decimal: ${text}`;
      const frac = (m[3] ?? '').replace(/0+$/, '').padEnd(1, '0');
      return frac.length > 1 ? text : `${m[1]}${m[2]}.${frac}`;
    }
    case 'double': {
      if (!/^-?\d+(\.\d+)?([eE][+-]?\d+)?$/.test(text)) return `not a number: ${text}`;
      const x = Number(text);
      return Object.is(x, -0) ? '-0.0' : String(x);
    }
    case 'zoned': {
      const m = INSTANT.exec(text);
      if (!m?.[4]) return `not an instant: ${text}`;
      const zone = m[4] === 'Z' ? 'Z' : m[4].length === 3 ? `${m[4]}:00` : m[4].includes(':') ? m[4] : `${m[4].slice(0, 3)}:${m[4].slice(3)}`;
      return zonedCanon(Date.parse(`${m[1]}T${m[2]}${(m[3] ?? '').slice(0, 4)}${zone}`));
    }
    case 'naive': {
      const m = INSTANT.exec(text);
      if (!m || m[4]) return `not a wall-clock time: ${text}`;
      const frac = (m[3] ?? '').replace(/\.?0+$/, '');
      return `${m[1]} ${m[2]}${frac}`;
    }
    case 'date':
      return /^\d{4}-\d\d-\d\d$/.test(text) ? text : `not a date: ${text}`;
    default:
      return typeof v === 'string' ? v : text;
  }
}

/** A row scdkit wrote, as the model's canonical row (a tuple sequence's struct read part by part). */
export function canonRow(kinds: Record<string, Kind>, row: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [c, v] of Object.entries(row)) {
    const kind = kinds[c] ?? 'ascii';
    if ((c === '__START_AT' || c === '__END_AT') && v !== null && typeof v === 'object' && !(v instanceof JsonNumber))
      out[c] = Object.fromEntries(Object.entries(v as Record<string, unknown>).map(([k, x]) => [k, canonOf(kinds[k] ?? 'int', x)]));
    else out[c] = canonOf(kind, v);
  }
  return out;
}

/** Rows in one order (by their JSON text): the paths are compared as sets of rows, and keys in PostgreSQL's collation may sort unicode differently. */
export function sortedRows<T>(rows: T[]): T[] {
  return [...rows].sort((x, y) => {
    const a = JSON.stringify(x);
    const b = JSON.stringify(y);
    return a < b ? -1 : a > b ? 1 : 0;
  });
}

/** Engines whose JSON staging has no negative zero (PostgreSQL's jsonb numeric): a JSON -0.0 is 0 there (decision 0170). */
const NO_NEGATIVE_ZERO = new Set(['pglite', 'postgres']);

/** A record's canonical values as the engine stores them: on PostgreSQL a double's -0.0 is 0 (decision 0170). */
export function canonOn(engine: string, sc: WideScenario, rec: WideRecord): Rec {
  if (!NO_NEGATIVE_ZERO.has(engine)) return rec.canon;
  return Object.fromEntries(Object.entries(rec.canon).map(([c, v]) => [c, sc.kinds[c] === 'double' && v === '-0.0' ? '0' : v])) as Rec;
}
