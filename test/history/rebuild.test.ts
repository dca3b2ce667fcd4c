/**
 * Rebuild (full refresh from the kept events): a no-op right after incremental applies; after a
 * flow change that needs it, apply is refused and rebuild gives the new semantics over all history.
 */
import { describe, expect, it } from 'vitest';
import { applyRows, type Driver, defineFlow, type FlowInput, latestVersion, readRows, readTargetWith, rebuild, versionQuery } from '../../src/index.js';
import { engines } from '../engines.js';
import { commitLog, feed, type Row } from './fixtures/history.js';
import { TT_BATCHES, TT_FLOW } from './fixtures/timetravel.js';

async function using<T>(open: () => Promise<Driver>, fn: (d: Driver) => Promise<T>): Promise<T> {
  const driver = await open();
  try {
    return await fn(driver);
  } finally {
    await driver.close();
  }
}

const NAMES: FlowInput = {
  target: 'dim_rb',
  keys: 'id',
  sequenceBy: 'seq',
  applyAsDeletes: "op = 'D'",
  exceptColumns: ['op', 'seq'],
  trackHistory: ['city'],
};
const up = (id: number, name: string, city: string, seq: number) => ({ id, name, city, seq, op: 'U' });
const NAME_BATCHES = [[up(1, 'Ann', 'Goa', 1), up(2, 'Bob', 'Pune', 1)], [up(1, 'Anna', 'Goa', 2), up(2, 'Bob', 'Agra', 3)], [up(1, 'Anna', 'Delhi', 3)]];
const nr = (id: number, name: string, city: string, s: number, e: number | null): Row => ({ id, name, city, __START_AT: s, __END_AT: e });

for (const engine of engines) {
  describe(`${engine.name}: rebuild`, () => {
    for (const storedAs of ['scd2', 'scd1'] as const) {
      it(`${storedAs}: right after incremental applies, rebuild changes nothing`, async () => {
        await using(engine.open, async (d) => {
          const flow = defineFlow({ ...TT_FLOW, storedAs });
          for (const b of TT_BATCHES) await applyRows(d, flow, b);
          const before = await readTargetWith(d, flow);
          const r = await rebuild(d, flow);
          expect(r).toMatchObject({
            version: 8,
            operation: 'rebuild',
            inputs: [],
            rowsRead: 0,
            eventsApplied: 0,
            duplicates: 0,
            keysChanged: 0, // an unchanged rebuild changes no key
            versionsAdded: 0,
            versionsChanged: 0,
            versionsRemoved: 0,
            versionsClosed: 0,
          });
          expect(await readTargetWith(d, flow)).toEqual(before);
          expect(await feed(d, flow, 8)).toEqual([]);
          expect((await commitLog(d, flow))[0]).toMatchObject({ version: 8, operation: 'rebuild', rows_inserted: 0, rows_updated: 0, rows_deleted: 0 });
          // Applying goes on after a rebuild.
          const next = await applyRows(d, flow, [{ id: 7, v: 'g', seq: 50, op: 'U' }]);
          expect(next.version).toBe(9);
          expect(next.versionsAdded).toBe(1);
        });
      });
    }

    it('trackHistory changed: apply is refused (needs a rebuild); rebuild gives the new semantics over all history', async () => {
      await using(engine.open, async (d) => {
        const old = defineFlow(NAMES);
        for (const b of NAME_BATCHES) await applyRows(d, old, b);
        // name is untracked: Ann → Anna at 2 was an in-place update.
        const oldTarget = [nr(1, 'Anna', 'Goa', 1, 3), nr(1, 'Anna', 'Delhi', 3, null), nr(2, 'Bob', 'Pune', 1, 3), nr(2, 'Bob', 'Agra', 3, null)];
        expect(await readTargetWith(d, old)).toEqual(oldTarget);

        const now = defineFlow({ ...NAMES, trackHistory: undefined }); // every column tracked
        await expect(applyRows(d, now, [up(1, 'Ann', 'Delhi', 4)])).rejects.toThrow(/trackHistory[\s\S]*rebuild|rebuild[\s\S]*trackHistory/);
        expect(await latestVersion(d, now)).toBe(3);
        expect(await readTargetWith(d, old)).toEqual(oldTarget);

        const r = await rebuild(d, now);
        expect(r).toMatchObject({ version: 4, operation: 'rebuild', keysChanged: 1, versionsAdded: 1, versionsChanged: 1, versionsRemoved: 0, versionsClosed: 1 });
        expect(await readTargetWith(d, now)).toEqual([
          nr(1, 'Ann', 'Goa', 1, 2),
          nr(1, 'Anna', 'Goa', 2, 3),
          nr(1, 'Anna', 'Delhi', 3, null),
          nr(2, 'Bob', 'Pune', 1, 3),
          nr(2, 'Bob', 'Agra', 3, null),
        ]);
        expect(await feed(d, now, 4)).toEqual([
          { ...nr(1, 'Anna', 'Goa', 1, 3), _change_type: 'update_preimage', _commit_version: 4 },
          { ...nr(1, 'Ann', 'Goa', 1, 2), _change_type: 'update_postimage', _commit_version: 4 },
          { ...nr(1, 'Anna', 'Goa', 2, 3), _change_type: 'insert', _commit_version: 4 },
        ]);

        // The new flow applies now; the old one is refused.
        const next = await applyRows(d, now, [up(1, 'Ann', 'Delhi', 4)]);
        expect(next.version).toBe(5);
        expect((await readTargetWith(d, now)).filter((x) => x.id === 1)).toEqual([
          nr(1, 'Ann', 'Goa', 1, 2),
          nr(1, 'Anna', 'Goa', 2, 3),
          nr(1, 'Anna', 'Delhi', 3, 4),
          nr(1, 'Ann', 'Delhi', 4, null),
        ]);
        await expect(applyRows(d, old, [up(2, 'Bob', 'Agra', 9)])).rejects.toThrow(/rebuild/);
      });
    });

    for (const variant of ['exceptColumns', 'columns'] as const) {
      it(`${variant} changed to bring back a column: the rebuilt target has it with its historical values`, async () => {
        await using(engine.open, async (d) => {
          const base: FlowInput = { target: 'dim_rc', keys: 'id', sequenceBy: 'seq', exceptColumns: ['seq', 'phone'] };
          const old = defineFlow(variant === 'exceptColumns' ? base : { ...base, exceptColumns: undefined, columns: ['city'] });
          const now = defineFlow(variant === 'exceptColumns' ? { ...base, exceptColumns: ['seq'] } : { ...base, exceptColumns: undefined, columns: ['city', 'phone'] });
          const e = (city: string, phone: string, seq: number) => ({ id: 1, city, phone, seq });
          await applyRows(d, old, [e('Goa', '111', 1)]);
          await applyRows(d, old, [e('Goa', '222', 2), e('Delhi', '222', 3)]);
          const c = (city: string, s: number, en: number | null) => ({ id: 1, city, __START_AT: s, __END_AT: en });
          expect(await readTargetWith(d, old)).toEqual([c('Goa', 1, 3), c('Delhi', 3, null)]);

          await expect(applyRows(d, now, [e('Delhi', '333', 4)])).rejects.toThrow(new RegExp(`${variant}[\\s\\S]*rebuild`));
          const r = await rebuild(d, now);
          expect(r.operation).toBe('rebuild');
          const p = (city: string, phone: string, s: number, en: number | null) => ({ id: 1, city, phone, __START_AT: s, __END_AT: en });
          expect(await readTargetWith(d, now)).toEqual([p('Goa', '111', 1, 2), p('Goa', '222', 2, 3), p('Delhi', '222', 3, null)]);
          // Time travel across the reshape: the old commits keep their rows (on the columns they had).
          const at = async (v: number) => (await readRows(d, await versionQuery(d, now, v))).map(({ phone, ...rest }) => rest);
          expect(await at(1)).toEqual([c('Goa', 1, null)]);
          expect(await at(2)).toEqual([c('Goa', 1, 3), c('Delhi', 3, null)]);
          expect(await readRows(d, await versionQuery(d, now, 3))).toEqual(await readTargetWith(d, now));

          // And it goes on incrementally with the new column.
          await applyRows(d, now, [e('Delhi', '333', 4)]);
          expect(await readTargetWith(d, now)).toEqual([p('Goa', '111', 1, 2), p('Goa', '222', 2, 3), p('Delhi', '222', 3, 4), p('Delhi', '333', 4, null)]);
        });
      });
    }

    it('an output option changed (isCurrentColumn, endSentinel added): apply refused; rebuild projects all history with them', async () => {
      await using(engine.open, async (d) => {
        const old = defineFlow(NAMES);
        for (const b of NAME_BATCHES) await applyRows(d, old, b);
        const now = defineFlow({ ...NAMES, isCurrentColumn: 'is_current', endSentinel: 999 });
        await expect(applyRows(d, now, [up(3, 'Cy', 'Agra', 5)])).rejects.toThrow(/rebuild/);
        await rebuild(d, now);
        const ic = (id: number, name: string, city: string, s: number, e: number, cur: boolean) => ({ ...nr(id, name, city, s, e), is_current: cur });
        expect(await readTargetWith(d, now)).toEqual([
          ic(1, 'Anna', 'Goa', 1, 3, false),
          ic(1, 'Anna', 'Delhi', 3, 999, true),
          ic(2, 'Bob', 'Pune', 1, 3, false),
          ic(2, 'Bob', 'Agra', 3, 999, true),
        ]);
        const cur = await d.query(`SELECT CAST(id AS INTEGER) AS id, city FROM dim_rb_current ORDER BY id`);
        expect(cur).toEqual([
          { id: 1, city: 'Delhi' },
          { id: 2, city: 'Agra' },
        ]);
      });
    });

    it('applyAsDeletes added: stored events are re-read as deletes over all history; a replay is still a duplicate', async () => {
      await using(engine.open, async (d) => {
        const old = defineFlow({ target: 'dim_rd', keys: 'id', sequenceBy: 'seq', exceptColumns: ['seq'] });
        const now = defineFlow({ target: 'dim_rd', keys: 'id', sequenceBy: 'seq', exceptColumns: ['seq', 'op'], applyAsDeletes: "op = 'D'" });
        const ev = [
          { id: 1, v: 'a', seq: 1, op: 'U' },
          { id: 1, v: null, seq: 2, op: 'D' },
          { id: 2, v: 'b', seq: 1, op: 'U' },
        ];
        await applyRows(d, old, ev);
        expect(await readTargetWith(d, old)).toEqual([
          { id: 1, v: 'a', op: 'U', __START_AT: 1, __END_AT: 2 },
          { id: 1, v: null, op: 'D', __START_AT: 2, __END_AT: null },
          { id: 2, v: 'b', op: 'U', __START_AT: 1, __END_AT: null },
        ]);
        await expect(applyRows(d, now, ev)).rejects.toThrow(/rebuild/);
        await rebuild(d, now);
        expect(await readTargetWith(d, now)).toEqual([
          { id: 1, v: 'a', __START_AT: 1, __END_AT: 2 },
          { id: 2, v: 'b', __START_AT: 1, __END_AT: null },
        ]);
        const again = await applyRows(d, now, ev);
        expect([again.eventsApplied, again.duplicates, again.versionsAdded, again.versionsChanged, again.versionsRemoved]).toEqual([0, 3, 0, 0, 0]);
      });
    });

    it('ignoreNullUpdates turned on: rebuild fills nulls over all history', async () => {
      await using(engine.open, async (d) => {
        const base: FlowInput = { target: 'dim_rn', keys: 'id', sequenceBy: 'seq', exceptColumns: ['seq'] };
        await applyRows(d, defineFlow(base), [
          { id: 1, a: 'x', b: 'p', seq: 1 },
          { id: 1, a: null, b: 'q', seq: 2 },
        ]);
        const now = defineFlow({ ...base, ignoreNullUpdates: true });
        await expect(applyRows(d, now, [{ id: 1, a: null, b: 'r', seq: 3 }])).rejects.toThrow(/ignoreNullUpdates[\s\S]*rebuild/);
        await rebuild(d, now);
        expect(await readTargetWith(d, now)).toEqual([
          { id: 1, a: 'x', b: 'p', __START_AT: 1, __END_AT: 2 },
          { id: 1, a: 'x', b: 'q', __START_AT: 2, __END_AT: null },
        ]);
      });
    });

    it('start/end renamed: rebuild renames them; time travel to commits before the rename keeps their start and end values', async () => {
      await using(engine.open, async (d) => {
        const base: FlowInput = { target: 'dim_rr', keys: 'id', sequenceBy: 'seq', exceptColumns: ['seq'] };
        await applyRows(d, defineFlow(base), [{ id: 1, v: 'a', seq: 1 }]);
        await applyRows(d, defineFlow(base), [{ id: 1, v: 'b', seq: 5 }]);
        const now = defineFlow({ ...base, startAtColumn: 'valid_from', endAtColumn: 'valid_to' });
        await rebuild(d, now);
        expect(await readTargetWith(d, now)).toEqual([
          { id: 1, v: 'a', valid_from: 1, valid_to: 5 },
          { id: 1, v: 'b', valid_from: 5, valid_to: null },
        ]);
        // Commit 1 had one row [1, -); commit 2 had [1, 5) and [5, -). Whatever the column is called
        // in the answer, the values must be there.
        const at = async (n: number) =>
          (await readRows(d, await versionQuery(d, now, n))).map((r) => [r.v, r.valid_from ?? r.__START_AT ?? 'missing', r.valid_to ?? r.__END_AT ?? null]);
        expect(await at(1)).toEqual([['a', 1, null]]);
        expect(await at(2)).toEqual([
          ['a', 1, 5],
          ['b', 5, null],
        ]);
      });
    });

    it('rebuild = incremental on pseudo-random streams (any batching): zero changes', async () => {
      let seed = 20240601;
      const rnd = (n: number) => {
        seed = (seed * 1103515245 + 12345) % 2147483648;
        return seed % n;
      };
      for (let run = 0; run < 4; run++) {
        const flow = defineFlow({
          target: 'dim_rand',
          keys: 'id',
          sequenceBy: 'seq',
          applyAsDeletes: "op = 'D'",
          exceptColumns: ['op'],
          ...(run % 2 ? { storedAs: 'scd1' as const } : { trackHistory: ['a'] }),
        });
        const events = Array.from({ length: 24 }, () => ({ id: rnd(4), a: ['x', 'y', null][rnd(3)], b: rnd(3), seq: rnd(12), op: rnd(5) === 0 ? 'D' : 'U' }));
        const cuts = [rnd(24), rnd(24)].sort((x, y) => x - y);
        const batches = [events.slice(0, cuts[0]), events.slice(cuts[0], cuts[1]), events.slice(cuts[1])].filter((b) => b.length);
        await using(engine.open, async (d) => {
          for (const b of batches) await applyRows(d, flow, b);
          const before = await readTargetWith(d, flow);
          const r = await rebuild(d, flow);
          const why = JSON.stringify({ storedAs: flow.storedAs, batches });
          expect([r.versionsAdded, r.versionsChanged, r.versionsRemoved, r.versionsClosed], why).toEqual([0, 0, 0, 0]);
          expect(await readTargetWith(d, flow), why).toEqual(before);
          expect(await feed(d, flow, r.version), why).toEqual([]);
        });
      }
    });
  });
}
