import { type Dialect, exactDigits } from '../dialects/dialect.js';
import type { Lexical } from '../dialects/driver.js';
import { DATE, INSTANT, INTEGER, MAX_DOUBLE, NUMBER, type ValueClass, WALL_CLOCK } from './lexical.js';
import { microsecondText } from './time-fraction.js';

/** A staged column as the cast sees it: the reader's type, and its lexical form if it has one. */
export interface StagedColumn {
  type: string;
  lexical?: Lexical;
  /**
   * Every class (lexical.ts valueClass) of the column's non-null values, when they were counted
   * over the very rows the cast reads: the cast leaves out a check that every one of them passes.
   */
  classes?: ReadonlySet<ValueClass>;
  /**
   * A column of an inner query that holds the value's JSON text already (Dialect.jsonText of a
   * `json` lexical value): a cast reads it instead of extracting the text again at each use (a
   * time's cast uses it a dozen times, and DuckDB repeats a repeated expression inside a CASE).
   */
  text?: string;
}

/** How a value's text becomes a value of a type: `CAST`, NULL where it does not convert (Dialect.tryCast), or an error there (Dialect.castOrFail). */
export type TextCast = (text: string, type: string) => string;

/**
 * `expr` (a staged column) as a value of `type`, or NULL when it does not fit. A value fits when it
 * converts **without loss** (docs/TYPES.md): 204.7 does not fit an integer column (no rounding),
 * `true` does not fit a number, 2025-05-01T10:00:00 does not fit a date. `exact`: the conversion
 * cannot fail, so no fit check is needed. `zone`: where a wall-clock time becomes an instant.
 * `textCast` converts a text that has the type's shape (a lexical value's): the dialect's tryCast
 * unless the caller types optimistically (Dialect.castOrFail: the statement fails instead of a NULL).
 */
export function castStaged(
  d: Dialect,
  expr: string,
  staged: StagedColumn,
  type: string,
  zone: string,
  textCast: TextCast = (text, t) => d.tryCast(text, t),
): { expr: string; exact: boolean } {
  if (staged.lexical) return castLexical(d, expr, staged, type, zone, textCast);
  if (d.sameType(staged.type, type)) return { expr, exact: true };
  // A time in nanoseconds (DuckDB's reader of Parquet) keeps its microseconds, the digits beyond
  // dropped as from text (docs/TYPES.md "Times"): a microsecond time is cast from there.
  if (/^\s*TIMESTAMP_NS\s*$/i.test(staged.type) && !d.sameType(type, d.types.text) && !d.sameType(type, d.types.json))
    return castStaged(d, `CAST(${expr} AS ${d.types.timestamp})`, { type: d.types.timestamp }, type, zone);
  if (d.sameType(type, d.types.json)) return { expr: d.toJson(expr), exact: true };
  if (d.widens(staged.type, type)) return { expr: `CAST(${expr} AS ${type})`, exact: true };
  // An integer a reader typed (Parquet, a table) into a double column: the engine's conversion, as
  // a JSON number's is. (Not a widening: a stored integer column never becomes a double.)
  if (exactDigits(staged.type)?.scale === 0 && d.sameType(type, d.types.double)) return { expr: `CAST(${expr} AS ${type})`, exact: true };
  // A JSON document column (a reader that typed mixed values as JSON): the engine converts its values.
  if (d.sameType(staged.type, d.types.json)) return { expr: d.tryCast(expr, type), exact: false };
  const isBool = (t: string) => d.sameType(t, d.types.bool);
  if (isBool(staged.type) !== isBool(type) && !d.sameType(type, d.types.text)) return { expr: `CAST(NULL AS ${type})`, exact: false };
  // Anything else fits when it comes back unchanged (a double with a fraction into an integer does not).
  const cast = d.tryCast(expr, type);
  return { expr: `CASE WHEN CAST(${cast} AS ${staged.type}) = ${expr} THEN ${cast} END`, exact: false };
}

function castLexical(d: Dialect, value: string, staged: StagedColumn, type: string, zone: string, textCast: TextCast): { expr: string; exact: boolean } {
  const lexical = staged.lexical!;
  // Whether every value is of one of these classes (when they were counted).
  const allOf = (classes: readonly ValueClass[]) => staged.classes !== undefined && [...staged.classes].every((k) => classes.includes(k));
  // A JSON number's text is its JSON text (no extraction).
  const jsonText = staged.text ?? d.jsonText(value);
  const t = lexical === 'json' ? (allOf(JSON_NUMBERS) ? d.toText(value) : jsonText) : value;
  const is = (other: string) => d.sameType(type, other);
  // The value's shape is checked before the engine's conversion, unless every value has it.
  const when = (regex: string, passes: readonly ValueClass[], then: string) => (allOf(passes) ? then : `CASE WHEN ${d.matches(t, regex)} THEN ${then} END`);
  if (is(d.types.text)) return { expr: lexical === 'json' ? jsonText : value, exact: true };
  if (is(d.types.json)) return { expr: lexical === 'json' ? value : d.toJson(t), exact: true };
  if (is(d.types.bool)) return { expr: `CASE lower(${t}) WHEN 'true' THEN true WHEN 'false' THEN false END`, exact: false };
  if (isInteger(d, type)) return { expr: when(INTEGER, INTEGERS, textCast(t, type)), exact: false };
  const decimal = decimalScale(type);
  if (decimal !== undefined)
    return {
      expr: `CASE WHEN ${d.matches(t, decimal === 0 ? INTEGER : `[+-]?([0-9]+[.]?[0-9]{0,${decimal}}|[.][0-9]{1,${decimal}})`)} THEN ${textCast(t, type)} END`,
      exact: false,
    };
  if (is(d.types.double) || /^(real|float4?|float8)$/i.test(type.trim())) {
    // A number beyond the type's range is no value of it (the engine would make it ±Infinity):
    // it does not fit. Every value of the NUMBERS classes is within a double's range.
    const number = when(NUMBER, NUMBERS, textCast(t, type));
    const checked = allOf(NUMBERS) && is(d.types.double);
    return { expr: checked ? number : `CASE WHEN abs(${number}) <= CAST('${MAX_DOUBLE}' AS ${d.types.double}) THEN ${number} END`, exact: false };
  }
  if (is(d.types.date)) return { expr: when(DATE, ['d'], textCast(t, type)), exact: false };
  const local = `${DATE}|${WALL_CLOCK}`;
  // A date-time's digits beyond microseconds are dropped before any engine reads it (it would round).
  const time = microsecondText(d, t);
  const instant = textCast(time, d.types.timestamptz);
  if (is(d.types.timestamp)) {
    if (allOf(['d', 'w'])) return { expr: textCast(time, type), exact: false };
    if (allOf(['z'])) return { expr: `CAST(${instant} AS ${type})`, exact: false };
    return { expr: `CASE WHEN ${d.matches(t, local)} THEN ${textCast(time, type)} WHEN ${d.matches(t, INSTANT)} THEN CAST(${instant} AS ${type}) END`, exact: false };
  }
  if (is(d.types.timestamptz)) {
    const wallClock = d.wallClockToInstant(textCast(time, d.types.timestamp), zone);
    if (allOf(['z'])) return { expr: textCast(time, type), exact: false };
    if (allOf(['d', 'w'])) return { expr: wallClock, exact: false };
    return { expr: `CASE WHEN ${d.matches(t, INSTANT)} THEN ${textCast(time, type)} WHEN ${d.matches(t, local)} THEN ${wallClock} END`, exact: false };
  }
  // Other stored types (nested, UUID, time, ...): the engine's own conversion of the text, or of the JSON.
  if (lexical === 'json') return { expr: `CASE WHEN ${d.jsonKind(value)} IN ('object', 'array') THEN ${d.tryCast(value, type)} ELSE ${textCast(t, type)} END`, exact: false };
  return { expr: textCast(t, type), exact: false };
}

/**
 * The classes whose text is integer syntax (INTEGER), number syntax (NUMBER) within a double's
 * range, a JSON number.
 */
const INTEGERS: readonly ValueClass[] = ['i', 'I', 'H', 'si', 'sI', 'sH'];
const NUMBERS: readonly ValueClass[] = [...INTEGERS, 'f', 'sf'];
const JSON_NUMBERS: readonly ValueClass[] = ['i', 'I', 'H', 'f', 'X'];

function isInteger(d: Dialect, type: string): boolean {
  return [d.types.bigint, d.types.int, d.types.smallint, 'HUGEINT', 'TINYINT', 'UBIGINT', 'UINTEGER', 'USMALLINT', 'UTINYINT'].some((t) => d.sameType(type, t));
}

/** The scale of a DECIMAL(p,s) / numeric(p,s) type; undefined for any other type. */
function decimalScale(type: string): number | undefined {
  const m = /^\s*(decimal|numeric)\s*\(\s*\d+\s*(?:,\s*(\d+)\s*)?\)\s*$/i.exec(type);
  return m ? Number(m[2] ?? 0) : undefined;
}
