/**
 * previousValues with the output options the reference model does not project (docs/FLOWS.md
 * "Previous values"), on every engine, expected rows written by hand: with tombstones the
 * tombstone is a version (its previous city is the deleted version's, and the version after it
 * has a null previous city); with an end sentinel and an is-current column; with a tuple
 * sequence, where a version meets the one before it on every part.
 */
import { describe, expect, it } from 'vitest';
import { applyRows, defineFlow, type FlowInput, readTargetWith, rebuild, ScdError } from '../../src/index.js';
import { engines } from '../engines.js';

const EVENTS = [
  { id: 1, city: 'Pune', tier: 'a', op: 'U', seq: 1, lsn: 0 },
  { id: 1, city: 'Pune', tier: 'b', op: 'U', seq: 2, lsn: 0 }, // tier is untracked: in place
  { id: 1, city: 'Goa', tier: 'b', op: 'U', seq: 3, lsn: 0 },
  { id: 1, city: null, tier: null, op: 'D', seq: 4, lsn: 0 },
  { id: 1, city: 'Agra', tier: 'c', op: 'U', seq: 6, lsn: 0 },
  { id: 1, city: 'Agra', tier: 'c', op: 'U', seq: 6, lsn: 1 }, // same values: no version
  { id: 1, city: 'Pune', tier: 'c', op: 'U', seq: 6, lsn: 2 },
];
const BASE: FlowInput = {
  target: 'dim_pv',
  keys: 'id',
  sequenceBy: 'seq',
  applyAsDeletes: "op = 'D'",
  exceptColumns: ['op', 'lsn', 'seq'],
  trackHistory: ['city'],
  previousValues: { city: 'prev_city', tier: 'prev_tier' },
};
const pick = (rows: Array<Record<string, unknown>>, cols: string[]) => rows.map((r) => cols.map((c) => (typeof r[c] === 'bigint' ? Number(r[c]) : r[c])));

for (const engine of engines) {
  describe(`${engine.name}: previousValues with output options`, () => {
    it('tombstones, an end sentinel and an is-current column; in one commit and one event per commit alike', async () => {
      const flow = defineFlow({ ...BASE, deletes: 'tombstone', endSentinel: 999, isCurrentColumn: 'is_current' });
      const want = [
        // id, city, tier, prev_city, prev_tier, start, end, is_current, deleted
        [1, 'Pune', 'b', null, null, 1, 3, false, false],
        [1, 'Goa', 'b', 'Pune', 'b', 3, 4, false, false],
        [1, null, null, 'Goa', 'b', 4, 6, false, true],
        [1, 'Pune', 'c', null, null, 6, 999, true, false],
      ];
      const cols = ['id', 'city', 'tier', 'prev_city', 'prev_tier', '__START_AT', '__END_AT', 'is_current', '__DELETED'];
      for (const batches of [[EVENTS.filter((e) => e.lsn === 0 || e.lsn === 2)], EVENTS.filter((e) => e.lsn === 0 || e.lsn === 2).map((e) => [e])]) {
        const driver = await engine.open();
        try {
          for (const b of batches) await applyRows(driver, flow, b);
          expect(pick(await readTargetWith(driver, flow), cols)).toEqual(want);
        } finally {
          await driver.close();
        }
      }
    });

    it('a tuple sequence: the previous version is the one ending at the start, every part compared', async () => {
      const flow = defineFlow({ ...BASE, sequenceBy: ['seq', 'lsn'] });
      const driver = await engine.open();
      try {
        // Late first: the walk re-links the chain when earlier events arrive.
        await applyRows(driver, flow, EVENTS.slice(4));
        await applyRows(driver, flow, EVENTS.slice(0, 4));
        const rows = await readTargetWith(driver, flow);
        const seq = (v: unknown) => (v === null ? null : [(v as { seq: unknown }).seq, (v as { lsn: unknown }).lsn].map(Number).join('.'));
        expect(rows.map((r) => [r.city, r.tier, r.prev_city, r.prev_tier, seq(r.__START_AT), seq(r.__END_AT)])).toEqual([
          ['Pune', 'b', null, null, '1.0', '3.0'],
          ['Goa', 'b', 'Pune', 'b', '3.0', '4.0'],
          ['Agra', 'c', null, null, '6.0', '6.2'],
          ['Pune', 'c', 'Agra', 'c', '6.2', null],
        ]);
      } finally {
        await driver.close();
      }
    });

    it('added to a flow: refused until a rebuild, which adds the column; a widened column widens it too', async () => {
      const driver = await engine.open();
      try {
        const plainFlow = defineFlow({ target: 'dim_pv2', keys: 'id', sequenceBy: 'seq' });
        await applyRows(driver, plainFlow, [
          { id: 1, n: 1, seq: 1 },
          { id: 1, n: 2, seq: 2 },
        ]);
        const withPrevious = defineFlow({ target: 'dim_pv2', keys: 'id', sequenceBy: 'seq', previousValues: { n: 'prev_n' } });
        const refused = await applyRows(driver, withPrevious, [{ id: 1, n: 3, seq: 3 }]).catch((e) => e);
        expect(refused).toBeInstanceOf(ScdError);
        expect((refused as ScdError).field).toBe('previousValues');
        await rebuild(driver, withPrevious);
        await applyRows(driver, withPrevious, [{ id: 1, n: 3.5, seq: 3 }]);
        const rows = await readTargetWith(driver, withPrevious);
        expect(rows.map((r) => [Number(r.n), r.prev_n === null ? null : Number(r.prev_n)])).toEqual([
          [1, null],
          [2, 1],
          [3.5, 2],
        ]);
      } finally {
        await driver.close();
      }
    });
  });
}
