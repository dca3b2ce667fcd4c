import type { Dialect } from '../dialects/dialect.js';
import type { Lexical } from '../dialects/driver.js';

/** The lexical form (dialects/driver.ts Lexical) of each staged column that has one. */
export type LexicalColumns = ReadonlyMap<string, Lexical>;

/** Integer syntax: an optional sign and digits. */
export const INTEGER = '[+-]?[0-9]+';
/** Number syntax: integer, decimal fraction, exponent. */
export const NUMBER = '[+-]?([0-9]+[.]?[0-9]*|[.][0-9]+)([eE][+-]?[0-9]+)?';
/** An ISO-8601 calendar date. */
export const DATE = '[0-9]{4}-[0-9]{2}-[0-9]{2}';
/**
 * An ISO-8601 date and time without an offset: T or a space, minutes, optional seconds and any
 * fraction. A second is 00 to 59: a leap second (`23:59:60`) is no time on any engine (DuckDB and
 * Spark refuse it, PostgreSQL would read the next minute), so its record is quarantined.
 */
export const WALL_CLOCK = `${DATE}[Tt ][0-9]{2}:[0-9]{2}(:[0-5][0-9]([.][0-9]+)?)?`;
/** An ISO-8601 date and time with an offset: Z, ±hh, ±hhmm or ±hh:mm. */
export const INSTANT = `${WALL_CLOCK} ?([Zz]|[+-][0-9]{2}(:?[0-9]{2})?)`;

/**
 * The class of one value, by which a column's type is decided (typing/infer.ts), from its text
 * (`text`, computed once by the caller) and, for a JSON value, its kind (`kind`; undefined for
 * plain text, whose shape alone tells):
 * i integer in 64 bits, I wider integer (up to 38 digits), H wider still, f other number, X a
 * number beyond every double (1e999: it fits no number type),
 * b boolean, n object or array, d date, w date-time without offset, z date-time with offset,
 * and for strings that are not times: si / sI / sf / sX numeric text, sb true/false text, s other text.
 * NULL for a null. JSON numbers and booleans are classed by their kind; text (CSV), and JSON
 * strings, by their shape.
 */
export function valueClass(d: Dialect, text: string, kind: string | undefined): string {
  const t = text;
  // A number is an integer when it has no fraction and no exponent; its range decides the width.
  const integerClass = (prefix: string) =>
    `CASE WHEN length(${t}) <= 18 OR ${d.tryCast(t, d.types.bigint)} IS NOT NULL THEN '${prefix}i' WHEN length(${t}) <= 39 THEN '${prefix}I' WHEN ${beyondDouble(d, t)} THEN '${prefix}X' ELSE '${prefix}H' END`;
  const fractionClass = (prefix: string) => `CASE WHEN ${beyondDouble(d, t)} THEN '${prefix}X' ELSE '${prefix}f' END`;
  const jsonNumberClass = `CASE WHEN ${t} NOT LIKE '%.%' AND ${t} NOT LIKE '%e%' AND ${t} NOT LIKE '%E%' THEN ${integerClass('')} ELSE ${fractionClass('')} END`;
  const numericTextClass = (prefix: string) =>
    `CASE WHEN ${d.matches(t, NUMBER)} THEN CASE WHEN ${d.matches(t, INTEGER)} THEN ${integerClass(prefix)} ELSE ${fractionClass(prefix)} END ELSE 's' END`;
  // The first character decides which shapes a text may have (most text is none: one integer
  // comparison). A time starts with a digit and has a dash at its fifth place; a number starts with
  // a digit, a sign or a point; a boolean with t or f. No text is both a number and a time.
  const c = `ascii(${t})`;
  const textClass = (prefix: string) => `CASE
      WHEN ${c} BETWEEN 48 AND 57 THEN CASE WHEN ${t} LIKE '____-__-__%' THEN CASE
          WHEN length(${t}) = 10 THEN CASE WHEN ${d.matches(t, DATE)} AND ${d.tryCast(t, d.types.date)} IS NOT NULL THEN 'd' ELSE 's' END
          WHEN ${d.matches(t, WALL_CLOCK)} THEN CASE WHEN ${d.tryCast(t, d.types.timestamp)} IS NOT NULL THEN 'w' ELSE 's' END
          WHEN ${d.matches(t, INSTANT)} AND ${d.tryCast(t, d.types.timestamptz)} IS NOT NULL THEN 'z'
          ELSE 's' END
        ELSE ${numericTextClass(prefix)} END
      WHEN ${c} IN (43, 45, 46) THEN ${numericTextClass(prefix)}
      WHEN ${c} IN (70, 84, 102, 116) AND lower(${t}) IN ('true', 'false') THEN '${prefix}b'
      ELSE 's' END`;
  if (kind === undefined) return `CASE WHEN ${t} IS NULL THEN NULL ELSE ${textClass('')} END`;
  return `CASE WHEN ${kind} IS NULL THEN NULL ELSE CASE ${kind}
    WHEN 'null' THEN NULL
    WHEN 'number' THEN ${jsonNumberClass}
    WHEN 'boolean' THEN 'b'
    WHEN 'object' THEN 'n'
    WHEN 'array' THEN 'n'
    ELSE ${textClass('s')} END END`;
}

/**
 * A stand-in for a JSON value's text (`json`, a staged JSON column) from which valueClass gives
 * the same class as from its text (Dialect.jsonText), extracted only where the class depends on
 * it. The value's JSON text is the engine's own and costs nothing; its text is a new string.
 * - A string whose first character (after the opening quote) is one a number, a time or a
 *   boolean may start with, or an escape (any character): its text.
 * - Any other string: its JSON text, whose first character (the quote) valueClass classes as
 *   other text (s), as it does every such string.
 * - A number: its JSON text. The class of a number looks for a point or an exponent and counts
 *   digits; a number's text as the engine writes it has a point or an exponent exactly when its
 *   JSON text has one, and the same digits (an integer keeps its digits, "-0" aside: both class i).
 * - Booleans, objects, arrays: their JSON text (their class is their kind's).
 */
export function jsonTextForClass(d: Dialect, json: string): string {
  const written = d.toText(json);
  // The characters textClass looks for first (digits, + - ., F T f t) and the escape; a search in
  // a constant costs a fifth of a list of comparisons (DuckDB).
  // Standard SQL's position() and chr() (every engine has them; a backslash is no literal on Spark).
  const second = `substr(${written}, 2, 1)`;
  return `CASE WHEN ascii(${written}) = 34 AND (position(${second} IN '+-.0123456789FTft') > 0 OR ${second} = chr(92)) THEN ${d.jsonText(json)} ELSE ${written} END`;
}

/** The largest finite double: a number beyond it (1e999) fits no number type. */
export const MAX_DOUBLE = '1.7976931348623157e308';

/**
 * Whether `text`, in number syntax, names a number beyond every double (±1e999): no number type
 * holds it (a double would make it ±Infinity; no decimal has its digits), so it is quarantined
 * from any number column and never decides a column's type. Cheap for the usual number: only
 * one with an exponent, or of more than 309 characters, is converted to tell.
 */
export function beyondDouble(d: Dialect, text: string): string {
  const finite = `COALESCE(abs(${d.tryCast(text, d.types.double)}) <= CAST('${MAX_DOUBLE}' AS ${d.types.double}), false)`;
  const suspect = `(${text} LIKE '%e%' OR ${text} LIKE '%E%' OR length(${text}) > 309)`;
  return `(CASE WHEN ${suspect} THEN NOT ${finite} ELSE false END)`;
}

/** Every class valueClass gives, in a fixed order (the columns of the statistics). */
export const CLASSES = ['i', 'I', 'H', 'f', 'X', 'b', 'n', 'd', 'w', 'z', 'si', 'sI', 'sH', 'sf', 'sX', 'sb', 's'] as const;
export type ValueClass = (typeof CLASSES)[number];
