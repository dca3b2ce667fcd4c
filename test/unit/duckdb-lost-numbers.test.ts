/**
 * DuckDB's JSON reader writes back a number with a point or an exponent as a double
 * (dialects/duckdb/duckdb-exact-numbers.ts): `lostNumbers` must find every record where that
 * changed a top-level value's text, or staging would keep the rounded text. Its first test looks
 * only at the staged values' first characters, so this checks the claim it rests on against the
 * engine: whatever literal DuckDB rewrites to another value, the record is found.
 */
import { DuckDBInstance } from '@duckdb/node-api';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RAW_COLUMN } from '../../src/dialects/driver.js';
import { lostNumbers } from '../../src/dialects/duckdb/duckdb-exact-numbers.js';

const digits = (min: number, max: number) => fc.stringMatching(new RegExp(`^[0-9]{${min},${max}}$`));
/** A JSON number literal: sign, integer part, optional fraction and exponent, up to 30 digits. */
const numberLiteral = fc
  .tuple(
    fc.boolean(),
    fc.oneof(
      fc.constant('0'),
      fc.tuple(fc.integer({ min: 1, max: 9 }), digits(0, 24)).map(([d, r]) => `${d}${r}`),
    ),
    fc.option(digits(1, 24)),
    fc.option(fc.tuple(fc.constantFrom('e', 'E', 'e+', 'E-', 'e-'), digits(1, 3))),
  )
  .map(([neg, int, frac, exp]) => `${neg ? '-' : ''}${int}${frac === null ? '' : `.${frac}`}${exp === null ? '' : `${exp[0]}${exp[1]}`}`);

/** A number literal's exact value, as sign, significant digits and the point's place (`1.50` and `15e-1` alike). */
function exactValue(text: string): string {
  const m = /^(-?)([0-9]+)(?:[.]([0-9]+))?(?:[eE]([-+]?[0-9]+))?$/.exec(text);
  if (!m) throw new Error(`not a JSON number: ${text}`);
  const all = `${m[2]}${m[3] ?? ''}`;
  const lead = all.length - all.replace(/^0+/, '').length;
  const digits = all.replace(/^0+/, '').replace(/0+$/, '');
  if (!digits) return '0';
  return `${m[1]}${digits}@${m[2]!.length + Number(m[4] ?? 0) - lead}`;
}

describe('DuckDB staging finds every number its JSON reader rewrote', () => {
  let db: DuckDBInstance;
  let run: (sql: string, params?: unknown[]) => Promise<Array<Record<string, unknown>>>;
  beforeAll(async () => {
    db = await DuckDBInstance.create(':memory:');
    const c = await db.connect();
    run = async (sql, params = []) => (await c.runAndReadAll(sql, params as never)).getRowObjectsJson() as Array<Record<string, unknown>>;
  });
  afterAll(() => db.closeSync());

  /** Stage one record `{"s": "text", "a": <literal>}` as staging does and ask lostNumbers. */
  async function staged(literal: string): Promise<{ text: string; found: boolean }> {
    const raw = `{"s":"x","a":${literal}}`;
    const part = `SELECT v."s" AS "s", v."a" AS "a", raw AS ${JSON.stringify(RAW_COLUMN)} FROM (SELECT json_transform(raw, '{"s":"JSON","a":"JSON"}') AS v, raw FROM (SELECT CAST($1 AS VARCHAR) AS raw))`;
    const [row] = await run(`SELECT CAST("a" AS VARCHAR) AS text, ${lostNumbers(['s', 'a'])} AS found FROM (${part})`, [raw]);
    return { text: String(row!.text), found: row!.found === true };
  }

  it('the literals that the reader rewrites are found; those it keeps are not', async () => {
    expect(await staged('9007199254740993.0')).toEqual({ text: '9007199254740992.0', found: true });
    expect(await staged('1.00000000000000001')).toEqual({ text: '1.0', found: true });
    expect(await staged('1234567890123456789e-2')).toEqual({ text: '12345678901234568.0', found: true });
    expect(await staged('123456789012345678901234')).toEqual({ text: '123456789012345678901234', found: false });
    expect(await staged('0.1')).toEqual({ text: '0.1', found: false });
  });

  it('any number literal the reader writes back as another value is found (property)', async () => {
    await fc.assert(
      fc.asyncProperty(numberLiteral, async (literal) => {
        const { text, found } = await staged(literal);
        // Trailing zeros may go (`1.50` is staged as `1.5`): the same value, which typing keeps.
        if (exactValue(text) !== exactValue(literal)) expect(found, `${literal} was staged as ${text}`).toBe(true);
      }),
      { numRuns: 300 },
    );
  });
});
