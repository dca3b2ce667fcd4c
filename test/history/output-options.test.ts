/**
 * Output options (SEMANTICS §4): renamed start/end, endSentinel, isCurrentColumn, surrogateKey,
 * deletes: tombstone, and the <target>_current view. Expected rows by hand.
 */
import { describe, expect, it } from 'vitest';
import { applyRows, asOfQuery, type Driver, defineFlow, type FlowInput, readRows, readTargetWith, rebuild, targetQuery } from '../../src/index.js';
import { engines } from '../engines.js';
import { feed, type Row } from './fixtures/history.js';

const OPT: FlowInput = {
  target: 'dim_opt',
  keys: 'id',
  sequenceBy: 'updated',
  applyAsDeletes: "op = 'D'",
  exceptColumns: ['op', 'updated'],
  startAtColumn: 'valid_from',
  endAtColumn: 'valid_to',
  endSentinel: '9999-12-31',
  isCurrentColumn: 'is_current',
  surrogateKey: 'sk',
};
const u = (id: number, city: string, updated: string) => ({ id, city, updated, op: 'U' });
const del = (id: number, updated: string) => ({ id, city: null, updated, op: 'D' });
const A = [u(1, 'A', '2024-01-01'), u(2, 'X', '2024-03-01')];
const B = [u(1, 'B', '2024-06-01'), del(2, '2024-09-01')];
const C = [u(1, 'A2', '2024-02-01')]; // late: splits id 1's [2024-01-01, 2024-06-01)

const o = (id: number, city: string, valid_from: string, valid_to: string, is_current: boolean) => ({ id, city, valid_from, valid_to, is_current });
/** The target after A, B, C without sk (checked on its own), by hand. */
const FINAL = [
  o(1, 'A', '2024-01-01', '2024-02-01', false),
  o(1, 'A2', '2024-02-01', '2024-06-01', false),
  o(1, 'B', '2024-06-01', '9999-12-31', true),
  o(2, 'X', '2024-03-01', '2024-09-01', false),
];
const noSk = (rows: Row[]) => rows.map(({ sk, ...r }) => r);
/** sk per version, named by key and start. */
const skOf = (rows: Row[]) => Object.fromEntries(rows.map((r) => [`${r.id}@${r.valid_from}`, r.sk]));

async function using<T>(open: () => Promise<Driver>, fn: (d: Driver) => Promise<T>): Promise<T> {
  const driver = await open();
  try {
    return await fn(driver);
  } finally {
    await driver.close();
  }
}

for (const engine of engines) {
  describe(`${engine.name}: output options`, () => {
    it('renamed start/end, end sentinel on current rows, is_current, surrogate key column: the whole table', async () => {
      await using(engine.open, async (d) => {
        const flow = defineFlow(OPT);
        for (const b of [A, B, C]) await applyRows(d, flow, b);
        const q = await targetQuery(d, flow);
        expect(q.columns.map((c) => c.name)).toEqual(['sk', 'id', 'city', 'valid_from', 'valid_to', 'is_current']);
        const rows = await readTargetWith(d, flow);
        expect(noSk(rows)).toEqual(FINAL);
        for (const r of rows) expect(typeof r.sk === 'string' && r.sk.length > 0).toBe(true);
        expect(new Set(rows.map((r) => r.sk)).size).toBe(rows.length);
        // The current view: one row per live key (id 2 is deleted).
        const cur = await d.query(`SELECT CAST(id AS INTEGER) AS id, city FROM dim_opt_current ORDER BY id`);
        expect(cur).toEqual([{ id: 1, city: 'B' }]);
      });
    });

    it('as-of works with the sentinel and renamed columns', async () => {
      await using(engine.open, async (d) => {
        const flow = defineFlow(OPT);
        for (const b of [A, B, C]) await applyRows(d, flow, b);
        const at = async (t: string) => (await readRows(d, await asOfQuery(d, flow, t))).map((r) => [r.id, r.city]);
        expect(await at('2024-04-01')).toEqual([
          [1, 'A2'],
          [2, 'X'],
        ]);
        expect(await at('2024-06-01')).toEqual([
          [1, 'B'],
          [2, 'X'],
        ]);
        expect(await at('2024-09-01')).toEqual([[1, 'B']]);
        expect(await at('2030-01-01')).toEqual([[1, 'B']]);
        expect(await at('9999-12-30')).toEqual([[1, 'B']]);
        expect(await at('2023-12-31')).toEqual([]);
      });
    });

    it("the change feed carries the sentinel in a closed version's pre-image and the same surrogate key in pre and post", async () => {
      await using(engine.open, async (d) => {
        const flow = defineFlow(OPT);
        await applyRows(d, flow, A);
        await applyRows(d, flow, B);
        const rows = await feed(d, flow, 2, 2);
        expect(noSk(rows)).toEqual([
          { ...o(1, 'A', '2024-01-01', '9999-12-31', true), _change_type: 'update_preimage', _commit_version: 2 },
          { ...o(1, 'A', '2024-01-01', '2024-06-01', false), _change_type: 'update_postimage', _commit_version: 2 },
          { ...o(1, 'B', '2024-06-01', '9999-12-31', true), _change_type: 'insert', _commit_version: 2 },
          { ...o(2, 'X', '2024-03-01', '9999-12-31', true), _change_type: 'update_preimage', _commit_version: 2 },
          { ...o(2, 'X', '2024-03-01', '2024-09-01', false), _change_type: 'update_postimage', _commit_version: 2 },
        ]);
        expect(rows[0]!.sk).toBe(rows[1]!.sk);
        expect(rows[3]!.sk).toBe(rows[4]!.sk);
      });
    });

    it('surrogate key: the same version keeps its key through a late split, a rebuild, and a replay in other batches into a fresh database', async () => {
      const flow = defineFlow(OPT);
      const first = await using(engine.open, async (d) => {
        await applyRows(d, flow, A);
        await applyRows(d, flow, B);
        const beforeSplit = skOf(await readTargetWith(d, flow));
        await applyRows(d, flow, C);
        const after = await readTargetWith(d, flow);
        // The split version still starts at 2024-01-01: the same version, the same key.
        expect(skOf(after)['1@2024-01-01']).toBe(beforeSplit['1@2024-01-01']);
        expect(skOf(after)['1@2024-06-01']).toBe(beforeSplit['1@2024-06-01']);
        expect(skOf(after)['2@2024-03-01']).toBe(beforeSplit['2@2024-03-01']);
        const r = await rebuild(d, flow);
        expect([r.versionsAdded, r.versionsChanged, r.versionsRemoved]).toEqual([0, 0, 0]);
        expect(await readTargetWith(d, flow)).toEqual(after);
        return after;
      });
      // All events at once, in reverse order.
      const once = await using(engine.open, async (d) => {
        await applyRows(d, flow, [...C, ...B, ...A].reverse());
        return readTargetWith(d, flow);
      });
      // One event per commit, newest first.
      const each = await using(engine.open, async (d) => {
        for (const e of [...A, ...B, ...C].reverse()) await applyRows(d, flow, [e]);
        return readTargetWith(d, flow);
      });
      expect(once).toEqual(first);
      expect(each).toEqual(first);
      expect(new Set(first.map((r) => r.sk)).size).toBe(4);
    });

    it('surrogate keys of distinct versions differ also across keys with look-alike values', async () => {
      await using(engine.open, async (d) => {
        const flow = defineFlow({ ...OPT, target: 'dim_sk', keys: ['a', 'b'], exceptColumns: ['op', 'updated'] });
        // (a, b) = ('1', '2x') and ('12', 'x'): a naive concatenation would collide.
        await applyRows(d, flow, [
          { a: '1', b: '2x', city: 'P', updated: '2024-01-01', op: 'U' },
          { a: '12', b: 'x', city: 'P', updated: '2024-01-01', op: 'U' },
          { a: '1', b: '2x', city: 'Q', updated: '2024-01-02', op: 'U' },
        ]);
        const rows = await readTargetWith(d, flow);
        expect(rows).toHaveLength(3);
        expect(new Set(rows.map((r) => r.sk)).size).toBe(3);
      });
    });

    it('deletes: tombstone — a delete opens a null version with __DELETED; a later upsert closes it; deleting nothing does nothing', async () => {
      await using(engine.open, async (d) => {
        const flow = defineFlow({ target: 'dim_tomb', keys: 'id', sequenceBy: 'seq', applyAsDeletes: "op = 'D'", exceptColumns: ['op', 'seq'], deletes: 'tombstone' });
        const up = (id: number, v: string, seq: number) => ({ id, v, seq, op: 'U' });
        const dl = (id: number, seq: number) => ({ id, v: null, seq, op: 'D' });
        const t = (id: number, v: string | null, s: number, e: number | null, del: boolean) => ({ id, v, __START_AT: s, __END_AT: e, __DELETED: del });
        const current = async () => (await d.query(`SELECT CAST(id AS INTEGER) AS id, v FROM dim_tomb_current ORDER BY id`)).map((r) => [r.id, r.v]);

        await applyRows(d, flow, [up(1, 'a', 1), up(2, 'b', 1)]);
        await applyRows(d, flow, [dl(1, 3)]);
        expect(await readTargetWith(d, flow)).toEqual([t(1, 'a', 1, 3, false), t(1, null, 3, null, true), t(2, 'b', 1, null, false)]);
        expect(await feed(d, flow, 2, 2)).toEqual([
          { ...t(1, 'a', 1, null, false), _change_type: 'update_preimage', _commit_version: 2 },
          { ...t(1, 'a', 1, 3, false), _change_type: 'update_postimage', _commit_version: 2 },
          { ...t(1, null, 3, null, true), _change_type: 'insert', _commit_version: 2 },
        ]);
        expect(await current()).toEqual([[2, 'b']]);

        await applyRows(d, flow, [up(1, 'b1', 5)]);
        expect(await readTargetWith(d, flow)).toEqual([t(1, 'a', 1, 3, false), t(1, null, 3, 5, true), t(1, 'b1', 5, null, false), t(2, 'b', 1, null, false)]);
        expect(await feed(d, flow, 3, 3)).toEqual([
          { ...t(1, null, 3, null, true), _change_type: 'update_preimage', _commit_version: 3 },
          { ...t(1, null, 3, 5, true), _change_type: 'update_postimage', _commit_version: 3 },
          { ...t(1, 'b1', 5, null, false), _change_type: 'insert', _commit_version: 3 },
        ]);
        expect(await current()).toEqual([
          [1, 'b1'],
          [2, 'b'],
        ]);

        // A delete of a key that was never live, and a second delete after a delete: nothing.
        await applyRows(d, flow, [dl(3, 2), dl(1, 7), dl(1, 8)]);
        expect(await readTargetWith(d, flow)).toEqual([
          t(1, 'a', 1, 3, false),
          t(1, null, 3, 5, true),
          t(1, 'b1', 5, 7, false),
          t(1, null, 7, null, true),
          t(2, 'b', 1, null, false),
        ]);
        expect(await current()).toEqual([[2, 'b']]);
      });
    });

    it('the <target>_current view of a plain scd2 target: one row per live key, also after a late event', async () => {
      await using(engine.open, async (d) => {
        const flow = defineFlow({ target: 'dim_cv', keys: 'id', sequenceBy: 'seq', applyAsDeletes: "op = 'D'", exceptColumns: ['op', 'seq'] });
        const current = async () =>
          (await d.query(`SELECT CAST(id AS INTEGER) AS id, v, CAST("__START_AT" AS INTEGER) AS s FROM dim_cv_current ORDER BY id`)).map((r) => [r.id, r.v, r.s]);
        await applyRows(d, flow, [
          { id: 1, v: 'a', seq: 1, op: 'U' },
          { id: 1, v: 'b', seq: 5, op: 'U' },
          { id: 2, v: 'x', seq: 1, op: 'U' },
          { id: 3, v: 'y', seq: 1, op: 'U' },
          { id: 3, v: null, seq: 2, op: 'D' },
        ]);
        expect(await current()).toEqual([
          [1, 'b', 5],
          [2, 'x', 1],
        ]);
        await applyRows(d, flow, [{ id: 1, v: 'c', seq: 3, op: 'U' }]); // late: not current
        expect(await current()).toEqual([
          [1, 'b', 5],
          [2, 'x', 1],
        ]);
        const n = await d.query(`SELECT CAST(count(*) AS INTEGER) AS n, CAST(count(DISTINCT id) AS INTEGER) AS k FROM dim_cv_current`);
        expect(n).toEqual([{ n: 2, k: 2 }]);
      });
    });
  });
}
