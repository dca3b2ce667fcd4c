/**
 * asOfJoin: the SQL joining each fact to the ONE dimension version valid at the fact's time
 * (the seed's Fact_Sales ⋈ Dim_Customer_SCD2), run on the engine itself.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sparkDialect } from '../../src/dialects/spark/spark-dialect.js';
import { applyRows, asOfJoin, type Driver, defineFlow, duckdbDialect, postgresDialect } from '../../src/index.js';
import { engines } from '../engines.js';
import { CUSTOMER_BATCHES, CUSTOMER_FLOW, FACT_DDL, FACT_INSERT, FACT_SALES } from './fixtures/customers.js';

const flow = defineFlow(CUSTOMER_FLOW);
const tomb = defineFlow({ ...CUSTOMER_FLOW, target: 'dim_customer_t', deletes: 'tombstone' });
const sentinel = defineFlow({ ...CUSTOMER_FLOW, target: 'dim_customer_s', endSentinel: '9999-12-31', startAtColumn: 'valid_from', endAtColumn: 'valid_to' });

/** sale_id → [city, customer_name] by hand; null = no version valid at the sale's date. */
const EXPECTED: Record<number, [string, string] | null> = {
  1: ['Bengaluru', 'Rahul Mehta'],
  2: ['Pune', 'Rahul Mehta'],
  3: ['Pune', 'Rahul Mehta'],
  4: null,
  5: ['Pune', 'Anita Sharma'],
  6: ['Delhi', 'Vikram Rao'],
  7: null,
  8: null,
  9: null,
  10: ['Chennai', 'Priya Nair'],
  11: ['Bengaluru', 'Rahul Mehta'],
  12: ['Pune', 'Rahul M. Mehta'],
  13: ['Pune', 'Rahul M. Mehta'],
};
const left = FACT_SALES.map(([id]) => [id, EXPECTED[id]?.[0] ?? null, EXPECTED[id]?.[1] ?? null]);
const inner = left.filter((r) => r[1] !== null);

for (const engine of engines) {
  describe(`${engine.name}: asOfJoin (Fact_Sales ⋈ dim_customer)`, () => {
    let driver: Driver;
    beforeAll(async () => {
      driver = await engine.open();
      for (const b of CUSTOMER_BATCHES) for (const f of [flow, tomb, sentinel]) await applyRows(driver, f, b);
      await driver.run(FACT_DDL);
      await driver.run(FACT_INSERT);
    });
    afterAll(() => driver?.close());

    const run = async (sql: string) =>
      (await driver.query(`SELECT sale_id, city, customer_name FROM (${sql}) j ORDER BY sale_id`)).map((r) => [Number(r.sale_id), r.city, r.customer_name]);

    it("the seed's query: a 2024 sale is Bengaluru, a 2026 sale is Pune", async () => {
      const rows = await run(asOfJoin(flow, { fact: 'Fact_Sales', time: 'sale_date', columns: ['city', 'customer_name'], dialect: driver.dialect }));
      expect(rows.find((r) => r[0] === 1)).toEqual([1, 'Bengaluru', 'Rahul Mehta']);
      expect(rows.find((r) => r[0] === 2)).toEqual([2, 'Pune', 'Rahul Mehta']);
    });

    it('left join: every fact exactly once, with the version valid at its time (boundaries go to the version starting then)', async () => {
      const sql = asOfJoin(flow, { fact: 'Fact_Sales', time: 'sale_date', columns: ['city', 'customer_name'], dialect: driver.dialect });
      expect(await run(sql)).toEqual(left);
      const n = await driver.query(`SELECT count(*)::INTEGER AS n, count(DISTINCT sale_id)::INTEGER AS d FROM (${sql}) j`);
      expect(n).toEqual([{ n: FACT_SALES.length, d: FACT_SALES.length }]);
    });

    it('the fact columns come through unchanged (f.*)', async () => {
      const sql = asOfJoin(flow, { fact: 'Fact_Sales', time: 'sale_date', columns: ['city'], dialect: driver.dialect });
      const rows = await driver.query(`SELECT sale_id, customer_id, CAST(sale_date AS VARCHAR) AS sale_date, amount, city FROM (${sql}) j ORDER BY sale_id`);
      expect(rows.map((r) => [r.sale_id, r.customer_id, r.sale_date, r.amount])).toEqual(FACT_SALES);
    });

    it('inner join: facts with no valid version are dropped (before the first version, deleted key, unknown key)', async () => {
      const sql = asOfJoin(flow, { fact: 'Fact_Sales', time: 'sale_date', columns: ['city', 'customer_name'], join: 'inner', dialect: driver.dialect });
      expect(await run(sql)).toEqual(inner);
      expect(inner.map((r) => r[0])).toEqual([1, 2, 3, 5, 6, 10, 11, 12, 13]);
    });

    it('tombstone dimension: the tombstone never matches, so later facts of a deleted key get null', async () => {
      expect(await run(asOfJoin(tomb, { fact: 'Fact_Sales', time: 'sale_date', columns: ['city', 'customer_name'], dialect: driver.dialect }))).toEqual(left);
      expect(await run(asOfJoin(tomb, { fact: 'Fact_Sales', time: 'sale_date', columns: ['city', 'customer_name'], join: 'inner', dialect: driver.dialect }))).toEqual(inner);
    });

    it('renamed start/end and an end sentinel: same result', async () => {
      expect(await run(asOfJoin(sentinel, { fact: 'Fact_Sales', time: 'sale_date', columns: ['city', 'customer_name'], dialect: driver.dialect }))).toEqual(left);
    });

    it('keys maps a differently named fact column to the dimension key', async () => {
      await driver.run(`CREATE TABLE sales_by_cust AS SELECT sale_id, customer_id AS cust, sale_date FROM "Fact_Sales"`);
      const sql = asOfJoin(flow, { fact: 'sales_by_cust', time: 'sale_date', columns: ['city', 'customer_name'], keys: { cust: 'customer_id' }, dialect: driver.dialect });
      expect(await run(sql)).toEqual(left);
    });
  });
}

/**
 * The dialect by default (the engine of the flow's database) or by name, as well as a Dialect
 * object: the same SQL as the driver's dialect, and on each engine the same rows.
 */
describe("asOfJoin's dialect: default from the flow's database, or an engine name", () => {
  const opts = { fact: 'Fact_Sales', time: 'sale_date', columns: ['city', 'customer_name'] };
  const onPostgres = defineFlow({ ...CUSTOMER_FLOW, database: 'postgres://u@127.0.0.1:5432/db' });
  const onPGlite = defineFlow({ ...CUSTOMER_FLOW, database: 'pglite://./data' });
  const onSpark = defineFlow({ ...CUSTOMER_FLOW, database: 'sc://localhost:15002' });
  const onDuckdb = defineFlow({ ...CUSTOMER_FLOW, database: 'shop.duckdb' });

  it('without a dialect: the SQL of the engine the flow names (DuckDB, PostgreSQL, PGlite, Spark)', () => {
    expect(asOfJoin(onDuckdb, opts)).toBe(asOfJoin(onDuckdb, { ...opts, dialect: duckdbDialect }));
    expect(asOfJoin(onPostgres, opts)).toBe(asOfJoin(onPostgres, { ...opts, dialect: postgresDialect }));
    expect(asOfJoin(onPGlite, opts)).toBe(asOfJoin(onPGlite, { ...opts, dialect: postgresDialect }));
    expect(asOfJoin(onSpark, opts)).toBe(asOfJoin(onSpark, { ...opts, dialect: sparkDialect }));
  });

  it("an engine name: each engine's quoting (Spark's backticks)", () => {
    const spark = asOfJoin(flow, { ...opts, dialect: 'spark' });
    expect(spark).toBe(asOfJoin(flow, { ...opts, dialect: sparkDialect }));
    expect(spark).toContain('FROM `Fact_Sales` f');
    expect(spark).toContain('LEFT JOIN `dim_customer` d');
    expect(spark).toContain('f.`customer_id` = d.`customer_id`');
    for (const name of ['duckdb', 'postgres'] as const) {
      const sql = asOfJoin(flow, { ...opts, dialect: name });
      expect(sql).toContain('FROM "Fact_Sales" f');
      expect(sql).toContain('d."__START_AT" <= f."sale_date"');
    }
  });

  it('an unknown engine name or a non-dialect is refused in one line with the names', () => {
    expect(() => asOfJoin(flow, { ...opts, dialect: 'oracle' as never })).toThrow(/"oracle" is not an engine scdkit writes SQL for/);
    expect(() => asOfJoin(flow, { ...opts, dialect: {} as never })).toThrow(/neither an engine name nor a Dialect/);
  });

  for (const engine of engines) {
    it(`${engine.name}: by name and by default (database of its engine), the same rows as with driver.dialect`, async () => {
      const driver = await engine.open();
      try {
        for (const b of CUSTOMER_BATCHES) await applyRows(driver, flow, b);
        await driver.run(FACT_DDL);
        await driver.run(FACT_INSERT);
        const rows = async (sql: string) => driver.query(`SELECT sale_id, city, customer_name FROM (${sql}) j ORDER BY sale_id`);
        const expected = await rows(asOfJoin(flow, { ...opts, dialect: driver.dialect }));
        const own = driver.dialect.name === 'duckdb' ? onDuckdb : onPostgres;
        expect(await rows(asOfJoin(flow, { ...opts, dialect: driver.dialect.name as 'duckdb' | 'postgres' }))).toEqual(expected);
        expect(await rows(asOfJoin(own, opts))).toEqual(expected);
        expect(expected.map((r) => [Number(r.sale_id), r.city, r.customer_name])).toEqual(left);
      } finally {
        await driver.close();
      }
    });
  }
});
