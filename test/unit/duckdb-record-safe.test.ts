/**
 * DuckDB's record-safe form of a flow expression (dialects/duckdb/duckdb-record-evaluation.ts): a
 * zero divisor fails the record (never a silent null or infinity), and AND / OR evaluate their
 * later side only where the earlier one leaves the result open, as PostgreSQL does, so a guard
 * written first guards. NULL is "failed on this record".
 */
import { DuckDBInstance } from '@duckdb/node-api';
import { describe, expect, it } from 'vitest';
import { recordSafeForm } from '../../src/dialects/duckdb/duckdb-record-evaluation.js';

async function evaluated(exprs: string[]): Promise<Array<Array<boolean | null>>> {
  const db = await DuckDBInstance.create(':memory:');
  const c = await db.connect();
  const query = async (sql: string, params: unknown[] = []) => (await c.runAndReadAll(sql, params as never)).getRowObjectsJson() as Array<Record<string, unknown>>;
  await c.run(`CREATE TABLE t AS SELECT * FROM (VALUES (1, 0.0::DOUBLE, 'abc', 0), (2, 5.0::DOUBLE, '7', 4), (3, 20.0::DOUBLE, '-1', 0)) v(k, d, code, n)`);
  const out: Array<Array<boolean | null>> = [];
  for (const e of exprs) {
    const safe = await recordSafeForm({ query }, e);
    const rows = await query(`SELECT TRY(coalesce(${safe}, false)) AS x FROM t ORDER BY k`);
    out.push(rows.map((r) => r.x as boolean | null));
  }
  c.closeSync();
  return out;
}

describe('DuckDB evaluates a flow expression record-safe', () => {
  it('a division by zero fails its record, on a double and an integer divisor, with /, // and %', async () => {
    expect(await evaluated(['100 / d > 10', '100 // n > 10', '100 % n = 0'])).toEqual([
      [null, true, false],
      [null, true, null],
      [null, true, null],
    ]);
  });

  it('a guard written first guards: AND and OR stop at the side that decides, however many sides', async () => {
    expect(
      await evaluated(['d <> 0 AND 100 / d > 10', 'd = 0 OR 100 / d > 10', "code ~ '^[0-9]+$' AND CAST(code AS INTEGER) > 0 AND k > 0", 'n = 0 OR k = 9 OR 100 / n = 25']),
    ).toEqual([
      [false, true, false],
      [true, true, false],
      [false, true, false],
      [true, true, true],
    ]);
  });

  it('a cast that fails is that record failing; an expression with nothing to guard runs as written', async () => {
    expect(await evaluated(['CAST(code AS INTEGER) > 0'])).toEqual([[null, true, false]]);
    const db = await DuckDBInstance.create(':memory:');
    const c = await db.connect();
    const query = async (sql: string, params: unknown[] = []) => (await c.runAndReadAll(sql, params as never)).getRowObjectsJson() as Array<Record<string, unknown>>;
    expect(await recordSafeForm({ query }, "op = 'D'")).toBe("op = 'D'");
    c.closeSync();
  });
});
