import type { Driver, TableVersion } from '../dialects/driver.js';
import { commitOfLabel } from './commit-labels.js';
import type { StoreNames } from './names.js';

/** One engine version of the target and the scdkit commit that wrote it. */
export interface CommitVersion {
  commit: number;
  engineVersion: number;
}

/**
 * The engine versions of the target that scdkit commits wrote and that still stand, oldest first
 * (an engine that versions its tables, and records their changes: Delta). A commit may write the
 * target in one version or none. The versions a restore undid (an interrupted commit put back by
 * execute/delta/recovery.ts, or a person's RESTORE) are left out, and so are the restore's own, whose
 * recorded changes re-add and remove files rather than rows.
 */
export function standingVersions(target: string, history: TableVersion[]): CommitVersion[] {
  let standing: CommitVersion[] = [];
  for (const v of history) {
    if (v.restoredTo !== undefined) {
      const to = v.restoredTo;
      standing = standing.filter((s) => s.engineVersion <= to);
      continue;
    }
    const commit = commitOfLabel(target, v.label);
    if (commit !== undefined) standing.push({ commit, engineVersion: v.version });
  }
  return standing;
}

/** The target's standing versions, read from the engine (Driver.tableHistory). */
export async function commitVersions(driver: Driver, names: StoreNames): Promise<CommitVersion[]> {
  if (!driver.tableHistory) throw new Error(`the ${driver.dialect.name} driver keeps no table versions: read scdkit's own feed`);
  return standingVersions(names.target, await driver.tableHistory(names.target));
}

/** The target's engine version as it stood after scdkit commit `commit` (undefined: not written yet). */
export function versionAfter(versions: CommitVersion[], commit: number): number | undefined {
  let at: number | undefined;
  for (const v of versions) if (v.commit <= commit) at = Math.max(at ?? v.engineVersion, v.engineVersion);
  return at;
}
