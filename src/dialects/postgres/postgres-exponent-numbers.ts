import { RAW_COLUMN } from '../driver.js';
import { postgresDialect as d, sqlString } from './postgres-dialect.js';

const q = d.quote;

/** Whether a raw text may hold a number with an exponent (or a string that looks like one). */
export const EXPONENT_SHAPE = (raw: string) => `${raw} ~ '[0-9][eE][-+]?[0-9]'`;

/**
 * jsonb holds a JSON number as a numeric and writes it without an exponent: `1e308` becomes a
 * 309-digit integer, `2e3` the integer `2000`. A number with an exponent is a double
 * (docs/TYPES.md), as DuckDB's staging sees it, and its class is read from its text
 * (typing/lexical.ts: a point or an exponent makes a fraction). So a staged number written with an
 * exponent is given one digit after the point when it has none (`1e308` → `1000…0.0`): the same
 * value, classed as the double it was written as, never as an integer of hundreds of digits.
 *
 * Only records whose raw text has an exponent's shape are read again (as json, which keeps each
 * number as written); a string that merely looks like one is left as it is. `rawColumn`: the
 * column holding the text the values were staged from (RAW_COLUMN; a numbered copy's own line,
 * whose RAW_COLUMN is the original record, e.g. a Debezium envelope).
 */
export function exponentNumbersSql(part: string, keys: string[], rawColumn = RAW_COLUMN): string | undefined {
  if (!keys.length) return undefined;
  const raw = q(rawColumn);
  const sets = keys.map((k) => {
    const member = `CAST(${raw} AS json)->${sqlString(k)}`;
    const text = `(CAST(${raw} AS json)->>${sqlString(k)})`;
    return `${q(k)} = CASE WHEN json_typeof(${member}) = 'number' AND ${text} ~ '[eE]' AND scale(CAST(${text} AS numeric)) = 0
      THEN ${wholeWithPoint(text)} ELSE ${q(k)} END`;
  });
  return `UPDATE ${q(part)} SET ${sets.join(', ')} WHERE ${EXPONENT_SHAPE(raw)}`;
}

/**
 * `text`, a JSON number's text as written (a CSV value in a column another file holds as JSON),
 * as jsonb that keeps it a double when it has an exponent: `2.04e2` is `204.0`, never the integer
 * `204` (as exponentNumbersSql stages a JSON file's numbers).
 */
export function jsonNumberAsWritten(text: string): string {
  return `CASE WHEN ${text} ~ '[eE]' AND scale(CAST(${text} AS numeric)) = 0 THEN ${wholeWithPoint(text)} ELSE CAST(${text} AS jsonb) END`;
}

/** A whole number's text with one digit after the point, as jsonb (`2e3` → `2000.0`). */
const wholeWithPoint = (text: string) => `to_jsonb(round(CAST(${text} AS numeric), 1))`;
