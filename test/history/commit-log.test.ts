/**
 * The commit log (SEMANTICS §5): one commit per apply/rebuild, versions 1..n, counts by hand.
 */
import { describe, expect, it } from 'vitest';
import { applyRows, commitLogQuery, defineFlow, latestVersion, readRows, readTargetWith, rebuild } from '../../src/index.js';
import { engines } from '../engines.js';
import { commitLog, feed, LOG_FIELDS, logRow } from './fixtures/history.js';
import { LOG_BATCHES, LOG_EXPECTED, LOG_FEED_2, LOG_FLOW, LOG_TARGET } from './fixtures/log-scenario.js';
import { TT_BATCHES, TT_FLOW } from './fixtures/timetravel.js';

for (const engine of engines) {
  describe(`${engine.name}: commit log`, () => {
    it('versions 1..n, newest first, with the counts of each commit (quarantine, tie, duplicate, replay, late event, rebuild)', async () => {
      const flow = defineFlow(LOG_FLOW);
      const driver = await engine.open();
      try {
        const results = [];
        for (const b of LOG_BATCHES) results.push(await applyRows(driver, flow, b));
        results.push(await rebuild(driver, flow));

        expect(await readTargetWith(driver, flow)).toEqual(LOG_TARGET);
        expect(await feed(driver, flow, 2, 2)).toEqual(LOG_FEED_2);
        const log = await commitLog(driver, flow);
        expect(log).toEqual(LOG_EXPECTED);
        expect(await latestVersion(driver, flow)).toBe(5);

        // The log and each commit's result agree.
        // The log's columns keep their first names (store/catalog.ts); the result's fields say what they count.
        const renamed: Record<string, string> = { keys_affected: 'keysChanged', rows_inserted: 'versionsAdded', rows_updated: 'versionsChanged', rows_deleted: 'versionsRemoved' };
        const camel = (s: string) => renamed[s] ?? s.replace(/_([a-z])/g, (_, c: string) => c.toUpperCase());
        for (const r of results) {
          const row = log.find((l) => l.version === r.version)!;
          for (const f of LOG_FIELDS) expect(row[f], `${f} of commit ${r.version}`).toEqual((r as unknown as Record<string, unknown>)[camel(f)]);
          expect(r.rowsRead).toBe(r.eventsApplied + r.duplicates + r.quarantined);
        }

        // Every column the log promises, with a time, the inputs and a duration.
        const full = await readRows(driver, await commitLogQuery(driver, flow));
        expect(full.map((r) => r.version)).toEqual([5, 4, 3, 2, 1]);
        for (const r of full) {
          expect(Number.isNaN(Date.parse(String(r.committed_at)))).toBe(false);
          expect(typeof r.duration_ms).toBe('number');
          expect(typeof r.inputs).toBe('string');
        }
        const times = full.map((r) => Date.parse(String(r.committed_at))).reverse();
        expect([...times].sort((a, b) => a - b)).toEqual(times);
        expect(JSON.parse(String(full[0]!.inputs))).toEqual([]); // a rebuild reads no files
        expect(JSON.parse(String(full[1]!.inputs))).toHaveLength(1);
      } finally {
        await driver.close();
      }
    });

    it('counts of the time-travel scenario (late events, deletes, a truncate, a replay), and the truncate in the feed', async () => {
      const flow = defineFlow(TT_FLOW);
      const driver = await engine.open();
      try {
        for (const b of TT_BATCHES) await applyRows(driver, flow, b);
        const log = (await commitLog(driver, flow)).reverse();
        //                   version operation read events dup ties quar keys added changed removed closed
        expect(log[0]).toEqual(logRow([1, 'apply', 3, 3, 0, 0, 0, 3, 3, 0, 0, 0]));
        expect(log[1]).toEqual(logRow([2, 'apply', 3, 3, 0, 0, 0, 3, 2, 2, 0, 2]));
        // Closed: a1 and b2 added already ended, c ended by its delete.
        expect(log[2]).toEqual(logRow([3, 'apply', 3, 3, 0, 0, 0, 3, 2, 3, 0, 3]));
        // The truncate: every key is recomputed, the two with a live version change.
        expect(log[3]).toEqual(logRow([4, 'apply', 1, 1, 0, 0, 0, 2, 0, 2, 0, 2]));
        // Closed: d0 and f added already ended.
        expect(log[4]).toEqual(logRow([5, 'apply', 4, 4, 0, 0, 0, 4, 4, 1, 0, 2]));
        expect(log[5]).toEqual(logRow([6, 'apply', 3, 0, 3, 0, 0, 0, 0, 0, 0, 0]));
        expect(log[6]).toEqual(logRow([7, 'apply', 2, 2, 0, 0, 0, 2, 1, 1, 0, 1]));

        const c = (t: string, id: number, v: string, s: number, e: number | null) => ({ id, v, __START_AT: s, __END_AT: e, _change_type: t, _commit_version: 4 });
        expect(await feed(driver, flow, 4, 4)).toEqual([
          c('update_preimage', 1, 'a2', 20, null),
          c('update_postimage', 1, 'a2', 20, 30),
          c('update_preimage', 4, 'd', 20, null),
          c('update_postimage', 4, 'd', 20, 30),
        ]);
      } finally {
        await driver.close();
      }
    });

    it('each flow has its own log in a shared database', async () => {
      const a = defineFlow(LOG_FLOW);
      const b = defineFlow({ ...LOG_FLOW, target: 'dim_log_b' });
      const driver = await engine.open();
      try {
        await applyRows(driver, a, LOG_BATCHES[0]!);
        await applyRows(driver, b, LOG_BATCHES[0]!);
        await applyRows(driver, a, LOG_BATCHES[1]!);
        expect((await commitLog(driver, a)).map((r) => r.version)).toEqual([2, 1]);
        expect((await commitLog(driver, b)).map((r) => r.version)).toEqual([1]);
        expect(await feed(driver, b, 1)).toHaveLength(2);
        expect((await feed(driver, a, 1)).map((r) => r._commit_version)).toEqual([1, 1, 2, 2, 2, 2, 2]);
      } finally {
        await driver.close();
      }
    });
  });
}
