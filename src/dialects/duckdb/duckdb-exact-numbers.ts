import { members, scanDocument, textOf } from '../../files/json-text.js';
import { sqlString } from '../dialect.js';
import { RAW_COLUMN } from '../driver.js';
import { duckdbDialect } from './duckdb-dialect.js';

const q = duckdbDialect.quote;

/**
 * Records that may hold a number DuckDB's JSON reader rounds: 16 or more digits, a point among
 * them allowed. DuckDB reads a JSON number with a point or an exponent as a double and writes the
 * double back (`9007199254740993.0` becomes `9007199254740992.0`); a double keeps any decimal of
 * up to 15 significant digits, so only longer ones can change. The pattern also matches long
 * integers and digits inside strings: those records are only read again, never changed.
 */
export const LONG_NUMBER = (raw: string) => `regexp_matches(${raw}, '([0-9]\\.?){16}')`;

/** A JSON number literal that a double may not hold as written: a point or exponent, 16+ digits. */
const mayRound = (text: string) => /[.eE]/.test(text) && (text.match(/\d/g)?.length ?? 0) >= 16;

/**
 * Give the part's top-level number values back their text as written, for the good records
 * (`reason` null) that LONG_NUMBER finds. Invariant afterwards: every staged top-level number is
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
  const rows = await db.query(`SELECT rowid AS r, ${q(RAW_COLUMN)} AS raw FROM ${q(part)} WHERE ${reason} IS NULL AND ${LONG_NUMBER(q(RAW_COLUMN))}`);
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
