/**
 * Time travel: versionQuery(N) reproduces the target exactly as it stood after commit N, for every
 * N of a scenario with late events, deletes, a truncate and a replay. Checked against the export
 * taken right after each commit AND against the states written by hand.
 */
import { describe, expect, it } from 'vitest';
import { applyRows, defineFlow, readRows, readTargetWith, versionQuery } from '../../src/index.js';
import { engines } from '../engines.js';
import type { Row } from './fixtures/history.js';
import { TT_BATCHES, TT_FLOW, TT_STATES, ttRows } from './fixtures/timetravel.js';

for (const engine of engines) {
  describe(`${engine.name}: time travel`, () => {
    it('versionQuery(N) = the export taken right after commit N = the hand-written state, for every N', async () => {
      const flow = defineFlow(TT_FLOW);
      const driver = await engine.open();
      try {
        const captured: Row[][] = [];
        for (const [i, b] of TT_BATCHES.entries()) {
          const r = await applyRows(driver, flow, b);
          expect(r.version).toBe(i + 1);
          captured.push(await readTargetWith(driver, flow));
        }
        for (const [i, state] of TT_STATES.entries()) expect(captured[i], `export after commit ${i + 1}`).toEqual(ttRows(state));
        for (let n = 1; n <= TT_BATCHES.length; n++) {
          const q = await versionQuery(driver, flow, n);
          expect(q.columns.map((c) => c.name)).toEqual(['id', 'v', '__START_AT', '__END_AT']);
          expect(await readRows(driver, q), `version ${n}`).toEqual(captured[n - 1]);
        }
        // The latest version is the target itself; versions that do not exist are refused.
        expect(await readRows(driver, await versionQuery(driver, flow, 7))).toEqual(await readTargetWith(driver, flow));
        await expect(versionQuery(driver, flow, 0)).rejects.toThrow(/no commit 0/);
        await expect(versionQuery(driver, flow, 8)).rejects.toThrow(/no commit 8.*latest is 7/);
      } finally {
        await driver.close();
      }
    });

    it('time travel of an scd1 target, with the same batches', async () => {
      const flow = defineFlow({ ...TT_FLOW, target: 'cur_tt', storedAs: 'scd1' });
      const driver = await engine.open();
      try {
        const captured: Row[][] = [];
        for (const b of TT_BATCHES) {
          await applyRows(driver, flow, b);
          captured.push(await readTargetWith(driver, flow));
        }
        // By hand: the live value of each key after commits 1, 3, 4, 5, 7.
        expect(captured[0]).toEqual([
          { id: 1, v: 'a' },
          { id: 2, v: 'b' },
          { id: 3, v: 'c' },
        ]);
        expect(captured[2]).toEqual([
          { id: 1, v: 'a2' },
          { id: 4, v: 'd' },
        ]);
        expect(captured[3]).toEqual([]);
        expect(captured[4]).toEqual([
          { id: 1, v: 'a3' },
          { id: 5, v: 'e' },
        ]);
        expect(captured[6]).toEqual([
          { id: 2, v: 'b3' },
          { id: 5, v: 'e' },
        ]);
        for (let n = 1; n <= TT_BATCHES.length; n++) expect(await readRows(driver, await versionQuery(driver, flow, n)), `version ${n}`).toEqual(captured[n - 1]);
      } finally {
        await driver.close();
      }
    });
  });
}
