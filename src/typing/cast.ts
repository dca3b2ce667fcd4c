import { exactDigits, type Dialect } from '../dialects/dialect.js';
import { DATE, INSTANT, INTEGER, NUMBER, WALL_CLOCK, type Lexical } from './lexical.js';

/** A staged column as the cast sees it: the reader's type, and its lexical form if it has one. */
export interface StagedColumn {
  type: string;
  lexical?: Lexical;
}

/**
 * `expr` (a staged column) as a value of `type`, or NULL when it does not fit. A value fits when it
 * converts **without loss** (docs/TYPES.md): 204.7 does not fit an integer column (no rounding),
 * `true` does not fit a number, 2025-05-01T10:00:00 does not fit a date. `exact`: the conversion
 * cannot fail, so no fit check is needed. `zone`: where a wall-clock time becomes an instant.
 */
export function castStaged(d: Dialect, expr: string, staged: StagedColumn, type: string, zone: string): { expr: string; exact: boolean } {
  if (staged.lexical) return castLexical(d, expr, staged.lexical, type, zone);
  if (d.sameType(staged.type, type)) return { expr, exact: true };
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

function castLexical(d: Dialect, value: string, lexical: Lexical, type: string, zone: string): { expr: string; exact: boolean } {
  const t = lexical === 'json' ? d.jsonText(value) : value;
  const is = (other: string) => d.sameType(type, other);
  const when = (regex: string, then: string) => `CASE WHEN ${d.matches(t, regex)} THEN ${then} END`;
  if (is(d.types.text)) return { expr: t, exact: true };
  if (is(d.types.json)) return { expr: lexical === 'json' ? value : d.toJson(t), exact: true };
  if (is(d.types.bool)) return { expr: `CASE lower(${t}) WHEN 'true' THEN true WHEN 'false' THEN false END`, exact: false };
  if (isInteger(d, type)) return { expr: when(INTEGER, d.tryCast(t, type)), exact: false };
  const decimal = decimalScale(type);
  if (decimal !== undefined)
    return { expr: when(decimal === 0 ? INTEGER : `[+-]?([0-9]+[.]?[0-9]{0,${decimal}}|[.][0-9]{1,${decimal}})`, d.tryCast(t, type)), exact: false };
  if (is(d.types.double) || /^(real|float4?|float8)$/i.test(type.trim())) return { expr: when(NUMBER, d.tryCast(t, type)), exact: false };
  if (is(d.types.date)) return { expr: when(DATE, d.tryCast(t, type)), exact: false };
  const local = `${DATE}|${WALL_CLOCK}`;
  if (is(d.types.timestamp))
    return {
      expr: `CASE WHEN ${d.matches(t, local)} THEN ${d.tryCast(t, type)} WHEN ${d.matches(t, INSTANT)} THEN CAST(${d.tryCast(t, d.types.timestamptz)} AS ${type}) END`,
      exact: false,
    };
  if (is(d.types.timestamptz))
    return {
      expr: `CASE WHEN ${d.matches(t, INSTANT)} THEN ${d.tryCast(t, type)} WHEN ${d.matches(t, local)} THEN ${d.wallClockToInstant(d.tryCast(t, d.types.timestamp), zone)} END`,
      exact: false,
    };
  // Other stored types (nested, UUID, time, ...): the engine's own conversion of the text, or of the JSON.
  if (lexical === 'json')
    return { expr: `CASE WHEN ${d.jsonKind(value)} IN ('object', 'array') THEN ${d.tryCast(value, type)} ELSE ${d.tryCast(t, type)} END`, exact: false };
  return { expr: d.tryCast(t, type), exact: false };
}

function isInteger(d: Dialect, type: string): boolean {
  return [d.types.bigint, d.types.int, d.types.smallint, 'HUGEINT', 'TINYINT', 'UBIGINT', 'UINTEGER', 'USMALLINT', 'UTINYINT'].some((t) => d.sameType(type, t));
}

/** The scale of a DECIMAL(p,s) / numeric(p,s) type; undefined for any other type. */
function decimalScale(type: string): number | undefined {
  const m = /^\s*(decimal|numeric)\s*\(\s*\d+\s*(?:,\s*(\d+)\s*)?\)\s*$/i.exec(type);
  return m ? Number(m[2] ?? 0) : undefined;
}
