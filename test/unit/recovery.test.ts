/**
 * Finding and undoing an interrupted commit on Delta (execute/delta/recovery.ts) when the target's tables
 * also hold Delta commits scdkit did not make: an OPTIMIZE (a person's job, Databricks' predictive
 * optimization) carries no label and changes no row, and must not hide an interrupted commit's
 * writes under it. The Spark suite checks the same against a server (spark-maintenance.suite.ts).
 */
import { describe, expect, it } from 'vitest';
import type { Driver, TableVersion } from '../../src/dialects/driver.js';
import { sparkDialect } from '../../src/dialects/spark/spark-dialect.js';
import { dropUnfinishedCreation, interruptedBy, LOOK_BACK, latestWrites, undoInterruptedCommit, versionBefore } from '../../src/execute/delta/recovery.js';
import { commitLabel } from '../../src/store/commit-labels.js';
import { storeNames } from '../../src/store/names.js';

const names = storeNames('dim');
const label = (n: number) => commitLabel('dim', n);
const v = (version: number, l: string | null, restoredTo?: number, operation?: string): TableVersion => ({
  version,
  label: l,
  ...(restoredTo === undefined ? {} : { restoredTo }),
  ...(operation === undefined ? {} : { operation }),
});

/** A driver over fixed histories (oldest first) that records what it reads and restores. */
function over(histories: Record<string, TableVersion[]>) {
  const reads: string[] = [];
  const restores: string[] = [];
  const runs: string[] = [];
  const driver = {
    dialect: sparkDialect,
    location: 'test',
    columns: async (t: string) => (histories[t] ? [{ name: 'x', type: 'INT' }] : undefined),
    run: async (sql: string) => void runs.push(sql),
    tableHistory: async (t: string, latest?: number) => {
      reads.push(`${t} ${latest ?? 'all'}`);
      const h = histories[t];
      if (!h) throw new Error(`[TABLE_OR_VIEW_NOT_FOUND] ${t}`);
      return latest ? h.slice(-latest) : h;
    },
    restoreTable: async (t: string, version: number) => void restores.push(`${t} ${version}`),
  } as unknown as Driver;
  return { driver, reads, restores, runs };
}

const all = (h: TableVersion[]) => ({ [names.events]: h, [names.quarantine]: h, [names.state]: h, [names.target]: h });

describe('an interrupted Delta commit under commits scdkit did not make', () => {
  it("is found under an OPTIMIZE of every table: the label is that of scdkit's newest write, the version the newest", async () => {
    const { driver, reads } = over(all([v(0, label(1)), v(1, label(2)), v(2, label(3)), v(3, null)]));
    const latest = await latestWrites(driver, names);
    expect(latest[names.target]).toEqual({ version: 3, label: label(3) });
    expect(interruptedBy(latest, names, 3)).toBe(true);
    expect(interruptedBy(latest, names, 4)).toBe(false);
    // Read again further back only because the newest version is someone else's.
    expect(reads.filter((r) => r.endsWith(` ${LOOK_BACK}`))).toHaveLength(4);
  });

  it("a table whose newest version is scdkit's is read once, one version deep", async () => {
    const { driver, reads } = over(all([v(0, label(1)), v(1, null), v(2, label(2))]));
    expect((await latestWrites(driver, names))[names.target]).toEqual({ version: 2, label: label(2) });
    expect(reads.every((r) => r.endsWith(' 1'))).toBe(true);
  });

  it("another target's label or a person's own is looked past like no label; none within the look-back is none", async () => {
    const { driver } = over(all([v(0, label(2)), v(1, 'scdkit commit 9 of other'), v(2, 'nightly compaction')]));
    const latest = await latestWrites(driver, names);
    expect(latest[names.events]).toEqual({ version: 2, label: label(2) });
    expect(interruptedBy(latest, names, 2)).toBe(true);
    const deep = over(all([v(0, label(2)), ...Array.from({ length: LOOK_BACK }, (_, i) => v(i + 1, null))]));
    expect((await latestWrites(deep.driver, names))[names.target]).toEqual({ version: LOOK_BACK, label: null });
  });

  it('a restore newer than the label (an undo already done) ends it: nothing interrupted, nothing to undo', async () => {
    const history = [v(0, label(1)), v(1, label(2)), v(2, null, 0), v(3, null)];
    const { driver } = over(all(history));
    expect(interruptedBy(await latestWrites(driver, names), names, 2)).toBe(false);
    expect(versionBefore(history, 'dim', label(2))).toBeUndefined();
  });

  it('is put back to the version before its first labelled write, the OPTIMIZEs after it undone with it', async () => {
    expect(versionBefore([v(0, label(1)), v(1, null), v(2, label(2)), v(3, null), v(4, label(2)), v(5, null)], 'dim', label(2))).toBe(1);
    // A restore labelled like the commit it undid (the session still carried the label), then a redo, interrupted again.
    expect(versionBefore([v(0, label(1)), v(1, label(2)), v(2, label(2), 0), v(3, label(2)), v(4, null)], 'dim', label(2))).toBe(0);
    // Nothing labelled so, or a first write at version 0 (a table the commit made: dropped, not restored).
    expect(versionBefore([v(0, label(1)), v(1, null)], 'dim', label(2))).toBeUndefined();
    expect(versionBefore([v(0, label(2)), v(1, null)], 'dim', label(2))).toBeUndefined();
    const { driver, restores } = over({
      [names.events]: [v(0, label(1)), v(1, label(2)), v(2, null)],
      [names.quarantine]: [v(0, label(1)), v(1, null)],
      [names.state]: [v(0, label(1)), v(1, label(2))],
      [names.target]: [v(0, label(1)), v(1, null), v(2, label(2)), v(3, null)],
      // The shared flows table, its record last written by commit 1 (commit 2 changed no column).
      [names.flows]: [v(0, label(1))],
    });
    expect(await undoInterruptedCommit(driver, names, 2)).toEqual([names.events, names.state, names.target]);
    expect(restores).toEqual([`${names.events} 0`, `${names.state} 0`, `${names.target} 1`]);
  });

  it("an interrupted first commit's tables go even with an OPTIMIZE among their versions; a table with someone's data write stays", async () => {
    const made = v(0, label(1), undefined, 'CREATE TABLE');
    const { driver, runs } = over({
      [names.events]: [made, v(1, label(1), undefined, 'WRITE'), v(2, null, undefined, 'OPTIMIZE')],
      [names.quarantine]: [made],
      [names.state]: [made, v(1, null, undefined, 'WRITE')],
      [names.target]: [made, v(1, null, undefined, 'VACUUM START'), v(2, null, undefined, 'VACUUM END')],
    });
    expect(await dropUnfinishedCreation(driver, names, 1)).toEqual([names.events, names.quarantine, names.target]);
    expect(runs.filter((r) => r.startsWith('DROP TABLE'))).toEqual([names.events, names.quarantine, names.target].map((t) => `DROP TABLE \`${t}\``));
    // A table of only someone's upkeep (none of the commit's writes) is not the commit's.
    const foreign = over({ [names.target]: [v(0, null, undefined, 'OPTIMIZE')] });
    expect(await dropUnfinishedCreation(foreign.driver, names, 1)).toEqual([]);
  });
});
