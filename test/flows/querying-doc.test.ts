/**
 * docs/QUERYING.md's SQL runs as written on every engine (but Spark's blocks) against a target
 * scdkit built, and answers what the page says: the current state, the state at a point in time,
 * and the tier changes of the last 30 days — with LAG over every version (a change whose previous
 * version is older than 30 days keeps its previous tier), no first version, no return after a
 * delete, no version opened by another column — and the same from previousValues.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { applyRows, defineFlow, type FlowInput } from '../../src/index.js';
import { engines } from '../engines.js';

const DOC = path.join(path.dirname(fileURLToPath(import.meta.url)), '..', '..', 'docs', 'QUERYING.md');
const blocks = [...readFileSync(DOC, 'utf8').matchAll(/```sql\n([\s\S]*?)```/g)].map((m) => m[1]!);
/** Spark's blocks quote names in backticks (`__START_AT`); the others run on DuckDB and PostgreSQL. */
const isSpark = (sql: string) => sql.includes('`');
const [current, pointInTime, lagDoneRight, fromPreviousValues] = blocks.filter((b) => !isSpark(b));
const sparkBlocks = blocks.filter(isSpark);

/** A date `n` days from today (UTC), as ISO text. */
const day = (n: number) => new Date(Date.UTC(new Date().getUTCFullYear(), new Date().getUTCMonth(), new Date().getUTCDate() + n)).toISOString().slice(0, 10);

const row = (id: string, tier: string | null, region: string, at: number, op = 'U') => ({
  customer_id: id,
  email: `${id.toLowerCase()}@example.com`,
  tier,
  region,
  lifetime_value: 10,
  op,
  updated_at: day(at),
});
const ROWS = [
  row('C1', 'silver', 'north', -100),
  row('C1', 'gold', 'north', -10), // a tier change in the window; the version before is older
  row('C1', 'gold', 'south', -5), // a version opened by region: not a tier change
  row('C2', 'bronze', 'east', -60),
  row('C2', null, 'east', -40, 'D'),
  row('C2', 'gold', 'east', -20), // back after a delete: not a change
  row('C3', 'platinum', 'west', -3), // a first version: not a change
];
const FLOW: FlowInput = { target: 'customers_scd2', keys: 'customer_id', sequenceBy: 'updated_at', applyAsDeletes: "op = 'D'", exceptColumns: ['op', 'updated_at'] };
const plain = (rows: Array<Record<string, unknown>>) =>
  rows.map((r) => Object.fromEntries(Object.entries(r).map(([k, v]) => [k, v instanceof Date ? v.toISOString().slice(0, 10) : typeof v === 'bigint' ? Number(v) : v])));

for (const engine of engines) {
  describe(`${engine.name}: docs/QUERYING.md`, () => {
    it('has the SQL blocks the page describes: four for DuckDB and PostgreSQL, three for Spark, the same questions', () => {
      expect(blocks).toHaveLength(7);
      expect(sparkBlocks).toHaveLength(3);
      // Spark's blocks are the portable ones with backticks for double quotes (and Spark's functions in the LAG query).
      const asSpark = (sql: string) => sql.replaceAll('"', '`');
      expect(sparkBlocks[0]).toBe(asSpark(current!));
      expect(sparkBlocks[1]).toBe(asSpark(pointInTime!));
      for (const b of sparkBlocks) expect(b).not.toContain('"');
    });

    it('opens each database as the queries need: the schema for the psql session (psql -c runs one command and quits), DuckDB read-only', () => {
      const open = /```sh\n([\s\S]*?)```/.exec(readFileSync(DOC, 'utf8'))?.[1] ?? '';
      expect(open).toContain("PGOPTIONS='-c search_path=public' psql");
      expect(open).not.toMatch(/psql .*-c/);
      expect(open).toContain('duckdb -readonly scd.duckdb');
    });

    it('the current state, the state at a point in time, and the tier changes done right', async () => {
      const driver = await engine.open();
      try {
        await applyRows(driver, defineFlow(FLOW), ROWS);
        expect(plain(await driver.query(current!)).map((r) => [r.customer_id, r.tier, r.region])).toEqual([
          ['C1', 'gold', 'south'],
          ['C2', 'gold', 'east'],
          ['C3', 'platinum', 'west'],
        ]);
        const atDay = async (n: number) => plain(await driver.query(pointInTime!.replaceAll("DATE '2025-06-15'", `DATE '${day(n)}'`))).map((r) => [r.customer_id, r.tier]);
        expect(await atDay(-50)).toEqual([
          ['C1', 'silver'],
          ['C2', 'bronze'],
        ]);
        expect(await atDay(-40)).toEqual([['C1', 'silver']]); // C2 was deleted at -40 (an end is excluded)
        expect(await atDay(-10)).toEqual([
          ['C1', 'gold'],
          ['C2', 'gold'],
        ]);
        expect(plain(await driver.query(lagDoneRight!))).toEqual([{ customer_id: 'C1', previous_tier: 'silver', current_tier: 'gold', changed_at: day(-10) }]);
      } finally {
        await driver.close();
      }
    });

    it('the tier changes from previousValues', async () => {
      const driver = await engine.open();
      try {
        await applyRows(driver, defineFlow({ ...FLOW, previousValues: { tier: 'previous_tier' } }), ROWS);
        expect(plain(await driver.query(fromPreviousValues!))).toEqual([{ customer_id: 'C1', previous_tier: 'silver', current_tier: 'gold', changed_at: day(-10) }]);
      } finally {
        await driver.close();
      }
    });
  });
}
