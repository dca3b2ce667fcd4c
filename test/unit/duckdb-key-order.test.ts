/**
 * DuckDB stores a commit's rows in key order (Dialect.keyOrderUpTo, docs/decisions/
 * 0064-rows-in-key-order-on-duckdb.md): the target's new rows by identity (keys + start), the key state's by
 * key, whatever order the batch came in, so that a later small commit's lookups skip the row
 * groups that hold none of its keys. DuckDB numbers a table's rows in the order they were stored
 * (rowid), which is what these tests read.
 */
import { describe, expect, it } from 'vitest';
import { insertOrder } from '../../src/dialects/dialect.js';
import { duckdbDialect } from '../../src/dialects/duckdb/duckdb-dialect.js';
import { postgresDialect } from '../../src/dialects/postgres/postgres-dialect.js';
import { applyRows, type Driver, defineFlow, openDriver } from '../../src/index.js';

const flow = defineFlow({ target: 'dim', keys: 'id', sequenceBy: 'ts' });

/** `count` events over `keys` keys, in an order that is neither the keys' nor the sequence's. */
function shuffledBatch(keys: number, count: number, from: number): Array<Record<string, unknown>> {
  const rows = Array.from({ length: count }, (_, i) => ({ id: (i * 7919) % keys, ts: from + i, city: `c${(i * 31) % 17}` }));
  return rows.sort((a, b) => ((a.id * 2654435761) % 1000003) - ((b.id * 2654435761) % 1000003) || b.ts - a.ts);
}

/** `columns` of `table` in the order DuckDB stored its rows, from row `from` on. */
async function stored(driver: Driver, table: string, columns: string[], from = 0): Promise<unknown[][]> {
  const rows = await driver.query(`SELECT ${columns.map((c) => `"${c}"`).join(', ')} FROM "${table}" WHERE rowid >= ${from} ORDER BY rowid`);
  return rows.map((r) => columns.map((c) => r[c]));
}

const inOrder = (rows: unknown[][]) => rows.every((r, i) => i === 0 || compare(rows[i - 1]!, r) <= 0);
const compare = (a: unknown[], b: unknown[]): number => {
  for (let i = 0; i < a.length; i++) {
    const [x, y] = [Number(a[i]), Number(b[i])];
    if (x !== y) return x < y ? -1 : 1;
  }
  return 0;
};

describe('DuckDB stores rows in key order', () => {
  it('the target by keys and start, the key state by key, whatever order the batch came in', async () => {
    const driver = await openDriver(':memory:');
    try {
      const first = shuffledBatch(500, 1500, 0);
      expect(inOrder(first.map((r) => [r.id]))).toBe(false);
      await applyRows(driver, flow, first);
      const target = await stored(driver, 'dim', ['id', '__START_AT']);
      expect(target).toHaveLength(1500);
      expect(inOrder(target)).toBe(true);
      const state = await stored(driver, '_scd_dim_keys', ['id']);
      expect(state).toHaveLength(500);
      expect(inOrder(state)).toBe(true);

      // A second commit appends its own rows in key order after the first commit's.
      const before = target.length;
      await applyRows(driver, flow, shuffledBatch(500, 900, 10_000));
      const added = await stored(driver, 'dim', ['id', '__START_AT'], before);
      expect(added).toHaveLength(900);
      expect(inOrder(added)).toBe(true);
    } finally {
      await driver.close();
    }
  });

  it("an insert too large to sort beside a commit's scratch, or of rows not counted, is stored as it comes; PostgreSQL never sorts", () => {
    // docs/decisions/0064-rows-in-key-order-on-duckdb.md names this limit.
    expect(duckdbDialect.keyOrderUpTo).toBe(16_000_000);
    expect(insertOrder(duckdbDialect, ['id', 'start'], duckdbDialect.keyOrderUpTo)).toBe(' ORDER BY "id", "start"');
    expect(insertOrder(duckdbDialect, ['id', 'start'], duckdbDialect.keyOrderUpTo! + 1)).toBe('');
    expect(insertOrder(duckdbDialect, ['id'], undefined)).toBe('');
    expect(insertOrder(postgresDialect, ['id'], 10)).toBe('');
  });

  it('a join with up to 4096 keys on its small side filters the large side by them (dynamic_or_filter_threshold)', async () => {
    const driver = await openDriver(':memory:');
    try {
      const rows = await driver.query(`SELECT current_setting('dynamic_or_filter_threshold') AS t`);
      expect(Number(rows[0]!.t)).toBe(4096);
    } finally {
      await driver.close();
    }
  });
});
