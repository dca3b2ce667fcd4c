/**
 * What scdkit tells the planner (docs/decisions/0060-postgresql-analyzes-a-commits-temporary-tables.md): a
 * temporary table it analyzes has statistics (PostgreSQL never analyzes temporary tables itself),
 * and an apply of 2,000 valid events or more analyzes its key list once it is made (fewer are
 * estimated well enough from their pages). DuckDB keeps statistics itself: a no-op.
 * And the SQL shape where it matters: on PostgreSQL the closes fetch their rows by ctid.
 */
import { describe, expect, it } from 'vitest';
import type { Driver } from '../../src/dialects/driver.js';
import { applyRows, defineFlow } from '../../src/index.js';
import { TMP } from '../../src/store/names.js';
import { engines } from '../engines.js';

for (const engine of engines)
  describe(`${engine.name}: analyzeTemporary`, () => {
    it('a temporary table it analyzed has the planner statistics of its rows', async () => {
      const driver = await engine.open();
      try {
        await driver.run(`CREATE TEMP TABLE "_scd_t" AS SELECT 1 AS x FROM (SELECT 1 FROM (VALUES (1), (2), (3)) a(v), (VALUES (1), (2), (3)) b(v)) s`);
        await driver.analyzeTemporary('_scd_t');
        if (engine.name !== 'duckdb') {
          const [row] = await driver.query(`SELECT reltuples AS n FROM pg_class WHERE relname = '_scd_t' AND relpersistence = 't'`);
          expect(Number(row!.n)).toBe(9);
        }
        expect(Number((await driver.query(`SELECT count(*) AS n FROM "_scd_t"`))[0]!.n)).toBe(9);
        // Some columns only: the table's size, and statistics of those columns alone.
        await driver.run(`CREATE TEMP TABLE "_scd_u" AS SELECT g.v AS x, g.v % 3 AS y FROM generate_series(1, 50) AS g(v)`);
        await driver.analyzeTemporary('_scd_u', ['x']);
        if (engine.name !== 'duckdb') {
          const [row] = await driver.query(`SELECT reltuples AS n FROM pg_class WHERE relname = '_scd_u' AND relpersistence = 't'`);
          expect(Number(row!.n)).toBe(50);
          const stats = await driver.query(`SELECT attname AS a FROM pg_stats WHERE tablename = '_scd_u' ORDER BY attname`);
          expect(stats.map((r) => r.a)).toEqual(['x']);
        }
      } finally {
        await driver.close();
      }
    });

    it("an apply of 2,000 valid events or more analyzes their keys and the commit's key list, and only those; a smaller one none", async () => {
      const driver = await engine.open();
      const analyzed: string[] = [];
      const orig = driver.analyzeTemporary.bind(driver);
      driver.analyzeTemporary = async (t: string, columns?: string[]) => {
        analyzed.push(columns ? `${t} (${columns.join(', ')})` : t);
        await orig(t, columns);
      };
      try {
        const flow = defineFlow({ target: 't', keys: 'id', sequenceBy: 'seq' });
        // Below 2,000 valid events PostgreSQL's estimate from the pages serves (plan/apply.ts ANALYZED_FROM).
        await applyRows(
          driver,
          flow,
          Array.from({ length: 2000 }, (_, i) => ({ id: i, v: 'a', seq: 1 })),
        );
        await applyRows(driver, flow, [...Array.from({ length: 1999 }, (_, i) => ({ id: i, v: 'b', seq: 2 })), { id: 5000, v: 'c', seq: 1 }]);
        expect(analyzed).toEqual([`${TMP.valid} (id)`, TMP.keys, `${TMP.valid} (id)`, TMP.keys]);
        await applyRows(driver, flow, [
          { id: 1, v: 'b', seq: 3 },
          { id: 2, v: 'c', seq: 3 },
        ]);
        expect(analyzed).toHaveLength(4);
      } finally {
        await driver.close();
      }
    });
  });

/** The plans (EXPLAIN) of the statements the driver runs that match `pattern`, as they run. */
function explained(driver: Driver, pattern: RegExp): string[] {
  const plans: string[] = [];
  const orig = driver.run.bind(driver);
  driver.run = async (sql: string, params?: unknown[]) => {
    if (pattern.test(sql)) plans.push((await driver.query(`EXPLAIN ${sql}`, params)).map((r) => String(Object.values(r)[0])).join('\n'));
    return orig(sql, params);
  };
  return plans;
}

for (const engine of engines.filter((e) => e.name !== 'duckdb'))
  describe(`${engine.name}: closes by row id`, () => {
    it('the closes of a commit fetch their target rows by ctid (a TID scan), not by a join over every row', async () => {
      const driver = await engine.open();
      const plans = explained(driver, /^UPDATE "t" SET/);
      try {
        const flow = defineFlow({ target: 't', keys: 'id', sequenceBy: 'seq' });
        const ids = Array.from({ length: 2000 }, (_, i) => i);
        await applyRows(
          driver,
          flow,
          ids.map((id) => ({ id, v: 'a', seq: 1 })),
        );
        const r = await applyRows(
          driver,
          flow,
          ids.filter((id) => id % 10 === 0).map((id) => ({ id, v: 'b', seq: 2 })),
        );
        expect(r.versionsClosed).toBe(200);
        expect(plans).toHaveLength(1);
        expect(plans[0]).toContain('Tid Scan on t');
        const [{ n }] = (await driver.query(`SELECT count(*) AS n FROM "t" WHERE "__END_AT" = 2`)) as Array<{ n: unknown }>;
        expect(Number(n)).toBe(200);
      } finally {
        await driver.close();
      }
    });
  });

for (const engine of engines.filter((e) => e.name !== 'duckdb'))
  describe(`${engine.name}: the key state by row id`, () => {
    it("a commit forgets its keys' rows of the state by ctid (a TID scan), and the state keeps one right row per key", async () => {
      const driver = await engine.open();
      const plans = explained(driver, /^DELETE FROM "_scd_t_keys"/);
      try {
        const flow = defineFlow({ target: 't', keys: 'id', sequenceBy: 'seq', applyAsDeletes: "op = 'D'" });
        const ids = Array.from({ length: 2000 }, (_, i) => i);
        await applyRows(
          driver,
          flow,
          ids.map((id) => ({ id, v: 'a', seq: 1, op: 'U' })),
        );
        // Known keys in order (fast), one late (slow), a delete, and new keys.
        await applyRows(
          driver,
          flow,
          [
            ...ids.filter((id) => id % 10 === 0).map((id) => ({ id, v: 'b', seq: 3 })),
            { id: 5, v: 'late', seq: 0 },
            { id: 7, v: 'gone', seq: 4, op: 'D' },
            { id: 5000, v: 'new', seq: 1 },
          ].map((r) => ({ op: 'U', ...r })),
        );
        expect(plans.length).toBeGreaterThan(0);
        for (const p of plans) expect(p).toContain('Tid Scan on _scd_t_keys');
        const state = await driver.query(`SELECT "id", CAST("__scd_l0" AS integer) AS l, "__scd_live" AS live FROM "_scd_t_keys" ORDER BY "id"`);
        expect(state).toHaveLength(2001);
        const of = (id: number) => state.find((r) => Number(r.id) === id);
        expect(of(10)).toMatchObject({ l: 3, live: true });
        expect(of(5)).toMatchObject({ l: 1, live: true });
        expect(of(7)).toMatchObject({ l: 4, live: false });
        expect(of(1)).toMatchObject({ l: 1, live: true });
        expect(of(5000)).toMatchObject({ l: 1, live: true });
      } finally {
        await driver.close();
      }
    });
  });
