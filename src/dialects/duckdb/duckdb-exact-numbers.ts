import { members, scanDocument, textOf } from '../../files/json-text.js';
import { sqlString } from '../dialect.js';
import { RAW_COLUMN } from '../driver.js';
import { duckdbDialect } from './duckdb-dialect.js';

const q = duckdbDialect.quote;
/** An exponent of three digits or more: beyond a double's normal range, where digits go. */
const LONG_EXPONENT = '[eE][-+]?[0-9]{3}';
const LONG_EXPONENT_RE = new RegExp(LONG_EXPONENT);

/**
 * Whether a good record's staged values lost a number's text. DuckDB reads a JSON number with a
 * point or an exponent as a double and writes the double back (`9007199254740993.0` becomes
 * `9007199254740992.0`, `1e-400` becomes `0.0`); a double keeps any decimal of up to 15
 * significant digits whose exponent has two digits, so only longer literals and three-digit
 * exponents can change, and an integer literal is kept as written whatever its length.
 * A record is found in three steps, each only for the records the one before it kept (a CASE:
 * DuckDB evaluates both sides of an AND for every row of a count's FILTER):
 * 1. one of its staged values is a double as DuckDB writes one: a number (its text starts with a
 *    digit or `-`) with a point or an exponent — a test of each value's first characters, cheaper
 *    than a regular expression over the record's whole text;
 * 2. its raw text has 16 digits in a row (a point allowed among them) or a three-digit exponent
 *    (one regular expression);
 * 3. one of its literals of that kind with a point or an exponent is none of its staged values
 *    (most such literals are a double's own shortest text, `0.3333333333333333`, which DuckDB
 *    writes back as it was).
 * A literal inside a string only makes a record be read again: it is never a number, so nothing
 * changes.
 */
export function lostNumbers(columns: string[]): string {
  if (!columns.length) return 'false';
  const raw = q(RAW_COLUMN);
  const doubles = columns.map((c) => stagedDouble(`CAST(${q(c)} AS VARCHAR)`)).join(' OR ');
  const literals = `list_filter(regexp_extract_all(${raw}, '-?[0-9]+(?:[.][0-9]+(?:[eE][-+]?[0-9]+)?|[eE][-+]?[0-9]+)'), x -> length(x) >= 17 OR regexp_matches(x, '${LONG_EXPONENT}'))`;
  const staged = `[${columns.map((c) => `CAST(${q(c)} AS VARCHAR)`).join(', ')}]`;
  return `CASE WHEN ${doubles} THEN CASE WHEN regexp_matches(${raw}, '([0-9][.]?){16}|${LONG_EXPONENT}') THEN NOT list_has_all(${staged}, ${literals}) ELSE false END ELSE false END`;
}

/** A staged JSON value (text) that is a number DuckDB wrote as a double: a point or an exponent. */
function stagedDouble(text: string): string {
  return `CASE WHEN ascii(${text}) BETWEEN 48 AND 57 OR ascii(${text}) = 45 THEN contains(${text}, '.') OR contains(${text}, 'e') OR contains(${text}, 'E') ELSE false END`;
}

/** A JSON number literal that a double may not hold as written: a point or exponent, and 16+ digits or a three-digit exponent. */
const mayRound = (text: string) => /[.eE]/.test(text) && ((text.match(/\d/g)?.length ?? 0) >= 16 || LONG_EXPONENT_RE.test(text));

/**
 * Give the part's top-level number values back their text as written, for the good records
 * (`reason` null) that lostNumbers finds. Invariant afterwards: every staged top-level number is
 * the record's own literal, as PostgreSQL's staging keeps it. A number nested in an object or an
 * array is staged as DuckDB writes it.
 */
export async function restoreLongNumbers(
  db: { run(sql: string, params?: unknown[]): Promise<void>; query(sql: string, params?: unknown[]): Promise<Array<Record<string, unknown>>> },
  part: string,
  columns: string[],
  reason: string,
): Promise<void> {
  const known = new Set(columns);
  const rows = await db.query(`SELECT rowid AS r, ${q(RAW_COLUMN)} AS raw FROM ${q(part)} WHERE ${reason} IS NULL AND ${lostNumbers(columns)}`);
  for (const row of rows) {
    const raw = String(row.raw);
    const values = new Map<string, string>();
    for (const m of members(raw, scanDocument(raw))) {
      const text = textOf(raw, m.value);
      if (known.has(m.name)) values.set(m.name, text);
    }
    const exact = [...values].filter(([, text]) => mayRound(text) && !text.startsWith('"') && /^-?\d/.test(text));
    if (!exact.length) continue;
    await db.run(`UPDATE ${q(part)} SET ${exact.map(([name, text]) => `${q(name)} = CAST(${sqlString(text)} AS JSON)`).join(', ')} WHERE rowid = ${String(row.r)}`);
  }
}
