import type { Dialect } from '../dialects/dialect.js';

/**
 * How a staged column holds its values before scdkit types them (docs/TYPES.md):
 * - `json`: each value is a JSON value as written in the record (NDJSON, JSON arrays): its kind
 *   (string, number, boolean, object/array) is known, its text is exact;
 * - `text`: each value is text as written (CSV): a number, a time or a word is told by its shape.
 * A staged column that is neither has the reader's own type (Parquet, tables) and is cast as such.
 */
export type Lexical = 'json' | 'text';

/** The lexical form of each staged column that has one. */
export type LexicalColumns = ReadonlyMap<string, Lexical>;

/** Integer syntax: an optional sign and digits. */
export const INTEGER = '[+-]?[0-9]+';
/** Number syntax: integer, decimal fraction, exponent. */
export const NUMBER = '[+-]?([0-9]+[.]?[0-9]*|[.][0-9]+)([eE][+-]?[0-9]+)?';
/** An ISO-8601 calendar date. */
export const DATE = '[0-9]{4}-[0-9]{2}-[0-9]{2}';
/** An ISO-8601 date and time without an offset: T or a space, minutes, optional seconds and any fraction. */
export const WALL_CLOCK = `${DATE}[Tt ][0-9]{2}:[0-9]{2}(:[0-9]{2}([.][0-9]+)?)?`;
/** An ISO-8601 date and time with an offset: Z, ±hh, ±hhmm or ±hh:mm. */
export const INSTANT = `${WALL_CLOCK} ?([Zz]|[+-][0-9]{2}(:?[0-9]{2})?)`;

/**
 * The class of one value, by which a column's type is decided (typing/infer.ts), from its text
 * (`text`, computed once by the caller) and, for a JSON value, its kind (`kind`; undefined for
 * plain text, whose shape alone tells):
 * i integer in 64 bits, I wider integer (up to 38 digits), H wider still, f other number,
 * b boolean, n object or array, d date, w date-time without offset, z date-time with offset,
 * and for strings that are not times: si / sI / sf numeric text, sb true/false text, s other text.
 * NULL for a null. JSON numbers and booleans are classed by their kind; text (CSV), and JSON
 * strings, by their shape.
 */
export function valueClass(d: Dialect, text: string, kind: string | undefined): string {
  const t = text;
  // A JSON number is an integer when it has no fraction and no exponent; its range decides the width.
  const numberClass = (prefix: string, syntaxChecked: boolean) =>
    `CASE WHEN ${syntaxChecked ? `strpos(${t}, '.') = 0 AND strpos(lower(${t}), 'e') = 0` : d.matches(t, INTEGER)} THEN CASE WHEN length(${t}) <= 18 OR ${d.tryCast(t, d.types.bigint)} IS NOT NULL THEN '${prefix}i' WHEN length(${t}) <= 39 THEN '${prefix}I' ELSE '${prefix}H' END ELSE '${prefix}f' END`;
  // Only a text that starts like a date is tried as one; only one that starts like a number, as a number.
  const textClass = (numberPrefix: string) => `CASE
      WHEN ${t} LIKE '____-__-__%' THEN CASE
        WHEN ${d.matches(t, DATE)} AND ${d.tryCast(t, d.types.date)} IS NOT NULL THEN 'd'
        WHEN ${d.matches(t, WALL_CLOCK)} AND ${d.tryCast(t, d.types.timestamp)} IS NOT NULL THEN 'w'
        WHEN ${d.matches(t, INSTANT)} AND ${d.tryCast(t, d.types.timestamptz)} IS NOT NULL THEN 'z'
        ELSE 's' END
      WHEN left(${t}, 1) IN ('0', '1', '2', '3', '4', '5', '6', '7', '8', '9', '-', '+', '.') AND ${d.matches(t, NUMBER)} THEN ${numberClass(numberPrefix, false)}
      WHEN lower(${t}) IN ('true', 'false') THEN '${numberPrefix}b'
      ELSE 's' END`;
  if (kind === undefined) return `CASE WHEN ${t} IS NULL THEN NULL ELSE ${textClass('')} END`;
  return `CASE WHEN ${kind} IS NULL THEN NULL ELSE CASE ${kind}
    WHEN 'null' THEN NULL
    WHEN 'number' THEN ${numberClass('', true)}
    WHEN 'boolean' THEN 'b'
    WHEN 'object' THEN 'n'
    WHEN 'array' THEN 'n'
    ELSE ${textClass('s')} END END`;
}

/** Every class valueClass gives, in a fixed order (the columns of the statistics). */
export const CLASSES = ['i', 'I', 'H', 'f', 'b', 'n', 'd', 'w', 'z', 'si', 'sI', 'sH', 'sf', 'sb', 's'] as const;
export type ValueClass = (typeof CLASSES)[number];
