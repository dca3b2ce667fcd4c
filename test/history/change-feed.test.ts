/**
 * The change data feed (SEMANTICS §5, Delta Lake's CDF schema): per commit, exactly the target rows it
 * changed. Every expected row below is written by hand from the walk of SEMANTICS §3.
 */
import { describe, expect, it } from 'vitest';
import { applyRows, changesQuery, commitLogQuery, type Driver, defineFlow, openDriver, readRows, versionQuery } from '../../src/index.js';
import { readFlowRecord } from '../../src/store/catalog.js';
import { materializeFeed, writtenShape } from '../../src/store/feed.js';
import { storeNames } from '../../src/store/names.js';
import { engines } from '../engines.js';
import { feed, type Row } from './fixtures/history.js';

type T = 'insert' | 'update_preimage' | 'update_postimage' | 'delete';

// ------------------------------------------------------------------ SCD2
// name is untracked (an in-place update), city is tracked.
const scd2 = defineFlow({
  target: 'dim_cf',
  keys: 'id',
  sequenceBy: 'seq',
  applyAsDeletes: "op = 'D'",
  exceptColumns: ['op', 'seq'],
  trackHistory: ['city'],
});
const up = (id: number, name: string, city: string, seq: number) => ({ id, name, city, seq, op: 'U' });
const del = (id: number, seq: number) => ({ id, name: null, city: null, seq, op: 'D' });
/** One change-feed row of dim_cf. */
const c2 = (v: number, t: T, id: number, name: string, city: string, start: number, end: number | null): Row => ({
  id,
  name,
  city,
  __START_AT: start,
  __END_AT: end,
  _change_type: t,
  _commit_version: v,
});

const B1 = [up(1, 'Ann', 'Goa', 10), up(2, 'Bob', 'Pune', 10)];
const B2 = [up(1, 'Ann', 'Delhi', 20), up(2, 'Bobby', 'Pune', 20), up(3, 'Cy', 'Agra', 20)];
const B3 = [up(1, 'Ann', 'Mumbai', 15)]; // late: falls inside id 1's [10, 20)
const B4 = [del(1, 17), del(2, 30)]; // a late delete (inside [15, 20)) and an in-order one
const B5 = B2; // a replay
const B6 = [del(3, 20)]; // a delete at the same sequence as id 3's only upsert: the version vanishes

// ------------------------------------------------------------------ SCD1
const scd1 = defineFlow({
  target: 'cur_cf',
  keys: 'id',
  sequenceBy: 'seq',
  applyAsDeletes: "op = 'D'",
  exceptColumns: ['op', 'seq'],
  storedAs: 'scd1',
});
const c1 = (v: number, t: T, id: number, name: string, city: string): Row => ({ id, name, city, _change_type: t, _commit_version: v });

async function withEngine(open: () => Promise<Driver>, fn: (d: Driver) => Promise<void>) {
  const driver = await open();
  try {
    await fn(driver);
  } finally {
    await driver.close();
  }
}

for (const engine of engines) {
  describe(`${engine.name}: change feed`, () => {
    it('scd2: in-order, late split, late delete, replay, vanishing version — exactly the rows that changed', async () => {
      await withEngine(engine.open, async (d) => {
        for (const b of [B1, B2, B3, B4, B5, B6]) await applyRows(d, scd2, b);

        // Commit 1: two new keys.
        expect(await feed(d, scd2, 1, 1)).toEqual([c2(1, 'insert', 1, 'Ann', 'Goa', 10, null), c2(1, 'insert', 2, 'Bob', 'Pune', 10, null)]);
        // Commit 2, in order: id 1's tracked change closes [10,-) and opens [20,-); id 2's untracked
        // change updates its version in place; id 3 is new.
        expect(await feed(d, scd2, 2, 2)).toEqual([
          c2(2, 'update_preimage', 1, 'Ann', 'Goa', 10, null),
          c2(2, 'update_postimage', 1, 'Ann', 'Goa', 10, 20),
          c2(2, 'insert', 1, 'Ann', 'Delhi', 20, null),
          c2(2, 'update_preimage', 2, 'Bob', 'Pune', 10, null),
          c2(2, 'update_postimage', 2, 'Bobby', 'Pune', 10, null),
          c2(2, 'insert', 3, 'Cy', 'Agra', 20, null),
        ]);
        // Commit 3, a late event at 15 splits [10,20): pre/post of the split version and the new
        // one; the current Delhi version is not touched.
        expect(await feed(d, scd2, 3, 3)).toEqual([
          c2(3, 'update_preimage', 1, 'Ann', 'Goa', 10, 20),
          c2(3, 'update_postimage', 1, 'Ann', 'Goa', 10, 15),
          c2(3, 'insert', 1, 'Ann', 'Mumbai', 15, 20),
        ]);
        // Commit 4: the late delete at 17 ends Mumbai at 17 and leaves Delhi [20,-) alone; the
        // in-order delete closes id 2's current version.
        expect(await feed(d, scd2, 4, 4)).toEqual([
          c2(4, 'update_preimage', 1, 'Ann', 'Mumbai', 15, 20),
          c2(4, 'update_postimage', 1, 'Ann', 'Mumbai', 15, 17),
          c2(4, 'update_preimage', 2, 'Bobby', 'Pune', 10, null),
          c2(4, 'update_postimage', 2, 'Bobby', 'Pune', 10, 30),
        ]);
        // Commit 5 replays commit 2: nothing at all.
        expect(await feed(d, scd2, 5, 5)).toEqual([]);
        // Commit 6: upsert and delete at 20 give a version whose start equals its end: gone.
        expect(await feed(d, scd2, 6, 6)).toEqual([c2(6, 'delete', 3, 'Cy', 'Agra', 20, null)]);

        // A range is the union of its commits, in commit order.
        const range = await feed(d, scd2, 3, 4);
        expect(range.map((r) => r._commit_version)).toEqual([3, 3, 3, 4, 4, 4, 4]);
        expect(await feed(d, scd2, 5)).toEqual([c2(6, 'delete', 3, 'Cy', 'Agra', 20, null)]);
      });
    });

    it('scd2: added rows are stored by reference and read with the values they had, also after their row is rewritten (store/feed.ts)', async () => {
      await withEngine(engine.open, async (d) => {
        // Commit 1 inserts id 1; commits 2 and 3 rewrite its version in place (name is untracked);
        // commit 4 closes it (a tracked change) and opens [14,-); commit 5 deletes it at 15.
        await applyRows(d, scd2, [up(1, 'Ann', 'Goa', 10)]);
        await applyRows(d, scd2, [up(1, 'Annie', 'Goa', 12)]);
        await applyRows(d, scd2, [up(1, 'Anya', 'Goa', 13)]);
        await applyRows(d, scd2, [up(1, 'Anya', 'Pune', 14)]);
        await applyRows(d, scd2, [del(1, 15)]);
        // What is stored: every added row (insert, post-image, close) is a reference, with its
        // identity, end and is-current, and null values; every removed row is in full.
        const stored = await d.query(`SELECT _commit_version AS v, _change_type AS t, "__scd_ref" AS ref, name, city, "__START_AT" AS s FROM "_scd_dim_cf_changes" ORDER BY 1, 2`);
        expect(stored.map((r) => [Number(r.v), r.t, r.ref, r.name, r.city, Number(r.s)])).toEqual([
          [1, 'insert', true, null, null, 10],
          [2, 'update_postimage', true, null, null, 10],
          [2, 'update_preimage', null, 'Ann', 'Goa', 10],
          [3, 'update_postimage', true, null, null, 10],
          [3, 'update_preimage', null, 'Annie', 'Goa', 10],
          [4, 'close', true, null, null, 10],
          [4, 'insert', true, null, null, 14],
          [5, 'close', true, null, null, 14],
        ]);
        expect(await feed(d, scd2, 1, 5)).toEqual([
          c2(1, 'insert', 1, 'Ann', 'Goa', 10, null),
          c2(2, 'update_preimage', 1, 'Ann', 'Goa', 10, null),
          c2(2, 'update_postimage', 1, 'Annie', 'Goa', 10, null),
          c2(3, 'update_preimage', 1, 'Annie', 'Goa', 10, null),
          c2(3, 'update_postimage', 1, 'Anya', 'Goa', 10, null),
          c2(4, 'update_preimage', 1, 'Anya', 'Goa', 10, null),
          c2(4, 'update_postimage', 1, 'Anya', 'Goa', 10, 14),
          c2(4, 'insert', 1, 'Anya', 'Pune', 14, null),
          c2(5, 'update_preimage', 1, 'Anya', 'Pune', 14, null),
          c2(5, 'update_postimage', 1, 'Anya', 'Pune', 14, 15),
        ]);
        const at = async (n: number) => (await readRows(d, await versionQuery(d, scd2, n))).map((r) => [r.name, r.city, r.__START_AT, r.__END_AT]);
        expect(await at(1)).toEqual([['Ann', 'Goa', 10, null]]);
        expect(await at(2)).toEqual([['Annie', 'Goa', 10, null]]);
        expect(await at(4)).toEqual([
          ['Anya', 'Goa', 10, 14],
          ['Anya', 'Pune', 14, null],
        ]);
      });
    });

    it('scd2: a close is stored as one row and read as its two images (store/feed.ts)', async () => {
      await withEngine(engine.open, async (d) => {
        for (const b of [B1, B2, B3, B4]) await applyRows(d, scd2, b);
        const stored = await d.query(`SELECT _commit_version AS v, CAST(count(*) AS INTEGER) AS n FROM "_scd_dim_cf_changes" WHERE _change_type = 'close' GROUP BY 1 ORDER BY 1`);
        // Commit 2 closes id 1; commit 3 shortens [10,20); commit 4 shortens [15,20) and closes id 2.
        expect(stored.map((r) => [Number(r.v), Number(r.n)])).toEqual([
          [2, 1],
          [3, 1],
          [4, 2],
        ]);
        const all = await d.query(`SELECT CAST(count(*) AS INTEGER) AS n FROM "_scd_dim_cf_changes"`);
        expect(Number(all[0]!.n)).toBe(2 + 5 + 2 + 2);
        expect((await feed(d, scd2, 1, 4)).length).toBe(2 + 6 + 3 + 4);
      });
    });

    it('scd2: a feed written before closes were stored as one row gets the columns and reads the same', async () => {
      await withEngine(engine.open, async (d) => {
        for (const b of [B1, B2]) await applyRows(d, scd2, b);
        const before = await feed(d, scd2, 1, 2);
        // The feed as an earlier scdkit wrote it: every row in full, closes as two rows, no close
        // or reference columns.
        const names = storeNames('dim_cf');
        await materializeFeed(d, names, writtenShape((await readFlowRecord(d, names))!, ['id', 'name', 'city', '__START_AT', '__END_AT']), 'm');
        await d.run(`INSERT INTO "_scd_dim_cf_changes" (id, name, city, "__START_AT", "__END_AT", _change_type, _commit_version, _commit_timestamp)
          SELECT id, name, city, "__START_AT", "__scd_pre_end", 'update_preimage', _commit_version, _commit_timestamp FROM "_scd_dim_cf_changes" WHERE _change_type = 'close'`);
        await d.run(`UPDATE "_scd_dim_cf_changes" SET _change_type = 'update_postimage' WHERE _change_type = 'close'`);
        for (const c of ['__scd_pre_end', '__scd_pre_current', '__scd_ref']) await d.run(`ALTER TABLE "_scd_dim_cf_changes" DROP COLUMN "${c}"`);
        expect(await feed(d, scd2, 1, 2)).toEqual(before);
        await applyRows(d, scd2, B3);
        expect(await feed(d, scd2, 1, 2)).toEqual(before);
        expect(await feed(d, scd2, 3, 3)).toEqual([
          c2(3, 'update_preimage', 1, 'Ann', 'Goa', 10, 20),
          c2(3, 'update_postimage', 1, 'Ann', 'Goa', 10, 15),
          c2(3, 'insert', 1, 'Ann', 'Mumbai', 15, 20),
        ]);
      });
    });

    it('scd2: the schema is the target columns plus _change_type, _commit_version, _commit_timestamp (= the commit time)', async () => {
      await withEngine(engine.open, async (d) => {
        await applyRows(d, scd2, B1);
        await applyRows(d, scd2, B2);
        const q = await changesQuery(d, scd2, 1);
        expect(q.columns.map((c) => c.name)).toEqual(['id', 'name', 'city', '__START_AT', '__END_AT', '_change_type', '_commit_version', '_commit_timestamp']);
        const rows = await readRows(d, q);
        const log = await readRows(d, await commitLogQuery(d, scd2));
        const at = new Map(log.map((r) => [r.version, r.committed_at]));
        expect(rows).toHaveLength(8);
        for (const r of rows) {
          expect(typeof r._commit_timestamp).toBe('string');
          expect(Number.isNaN(Date.parse(String(r._commit_timestamp)))).toBe(false);
          expect(r._commit_timestamp).toBe(at.get(r._commit_version));
        }
        expect(Date.parse(String(at.get(2)))).toBeGreaterThanOrEqual(Date.parse(String(at.get(1))));
      });
    });

    it('scd1: update → pre/post image, delete → delete, stale and late-before-delete upserts → nothing, replay → nothing', async () => {
      await withEngine(engine.open, async (d) => {
        await applyRows(d, scd1, [up(1, 'Ann', 'Goa', 1), up(2, 'Bob', 'Pune', 1)]);
        await applyRows(d, scd1, [up(1, 'Ann', 'Delhi', 2), del(2, 3)]);
        // Older than id 1's current (seq 0 < 2) and older than id 2's delete (2 < 3).
        await applyRows(d, scd1, [up(1, 'Ann', 'Old', 0), up(2, 'Bob', 'Agra', 2)]);
        await applyRows(d, scd1, [up(2, 'Bo', 'Agra', 4)]);
        await applyRows(d, scd1, [up(1, 'Ann', 'Delhi', 2), del(2, 3)]); // replay of commit 2

        expect(await feed(d, scd1, 1)).toEqual([
          c1(1, 'insert', 1, 'Ann', 'Goa'),
          c1(1, 'insert', 2, 'Bob', 'Pune'),
          c1(2, 'update_preimage', 1, 'Ann', 'Goa'),
          c1(2, 'update_postimage', 1, 'Ann', 'Delhi'),
          c1(2, 'delete', 2, 'Bob', 'Pune'),
          c1(4, 'insert', 2, 'Bo', 'Agra'),
        ]);
        const q = await changesQuery(d, scd1, 1);
        expect(q.columns.map((c) => c.name)).toEqual(['id', 'name', 'city', '_change_type', '_commit_version', '_commit_timestamp']);
      });
    });

    it('a replayed batch writes no change rows and records a commit with zero changes', async () => {
      await withEngine(engine.open, async (d) => {
        await applyRows(d, scd2, B1);
        await applyRows(d, scd2, B2);
        const r = await applyRows(d, scd2, B2);
        expect(r.version).toBe(3);
        expect(await feed(d, scd2, 3)).toEqual([]);
        const log = await readRows(d, await commitLogQuery(d, scd2));
        expect(log[0]).toMatchObject({
          version: 3,
          operation: 'apply',
          rows_read: 3,
          events_applied: 0,
          duplicates: 3,
          keys_affected: 0,
          rows_inserted: 0,
          rows_updated: 0,
          rows_deleted: 0,
          versions_closed: 0,
        });
      });
    });
  });
}

// SQL shape where it matters (DuckDB's plan of the feed reader).
describe('duckdb: change feed reader plan', () => {
  it('reading the feed joins references with the target by hash (a regression: an IS NULL in the join condition made DuckDB loop over every pair)', async () => {
    await withEngine(
      () => openDriver(':memory:'),
      async (d) => {
        for (const b of [B1, B2]) await applyRows(d, scd2, b);
        const q = await changesQuery(d, scd2, 2, 2);
        const plan = (await d.query(`EXPLAIN SELECT count(*) FROM ${q.from} WHERE ${q.where}`, q.params)).map((r) => String(r.explain_value)).join('\n');
        expect(plan).toContain('HASH_JOIN');
        // The only loop join is the one that reads a close as two images (a two-row VALUES list).
        expect(plan.match(/NL_JOIN|NESTED_LOOP/g) ?? []).toHaveLength(1);
      },
    );
  });
});
