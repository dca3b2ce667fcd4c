import type { Driver } from '../dialects/driver.js';
import type { Flow } from '../flow/flow.js';
import type { CommitResult } from '../store/commits.js';
import { commitVersions, versionAfter } from '../store/engine-versions.js';
import { storeNames } from '../store/names.js';
import { commitLogQuery } from './history.js';
import { eachRow } from './output.js';

export interface ReadCommitLogOptions {
  /**
   * On an engine that versions the target (Delta), give each commit its `deltaVersion`, read from
   * the table's history: a round trip of its own. Default true; false where it is not shown.
   */
  engineVersions?: boolean;
}

/**
 * The commit log, newest first, each commit in the one schema a commit has everywhere: the
 * CommitResult that `apply()`, `rebuild()` and `scd apply --json` give (camelCase names, `inputs`
 * an array, `expectations` an object, `committedAt` ISO-8601 in UTC with milliseconds).
 * `scd log --json` prints exactly these objects (docs/decisions/0045-the-clis-commit-schema.md).
 */
export async function readCommitLog(driver: Driver, flow: Flow, onCommit?: (c: CommitResult) => void | Promise<void>, options: ReadCommitLogOptions = {}): Promise<CommitResult[]> {
  const out: CommitResult[] = [];
  const versions = driver.tableHistory && options.engineVersions !== false ? await commitVersions(driver, storeNames(flow.target)) : undefined;
  await eachRow(driver, await commitLogQuery(driver, flow), async (row) => {
    const c = commitOfRow(row);
    const deltaVersion = versions && versionAfter(versions, c.version);
    if (deltaVersion !== undefined) c.deltaVersion = deltaVersion;
    if (onCommit) await onCommit(c);
    else out.push(c);
  });
  return out;
}

/** One row of the commits table (commitLogQuery's snake_case columns, stored JSON as text) as a CommitResult. */
export function commitOfRow(r: Record<string, unknown>): CommitResult {
  const n = (v: unknown) => Number(v ?? 0);
  return {
    version: n(r.version),
    operation: String(r.operation) as CommitResult['operation'],
    committedAt: new Date(String(r.committed_at)).toISOString(),
    inputs: parsed(r.inputs, []),
    rowsRead: n(r.rows_read),
    eventsApplied: n(r.events_applied),
    duplicates: n(r.duplicates),
    ties: n(r.ties),
    quarantined: n(r.quarantined),
    dropped: n(r.dropped),
    skipped: n(r.skipped),
    expectations: parsed(r.expectations, {}),
    // The log's columns keep their first names (store/catalog.ts).
    keysChanged: n(r.keys_affected),
    versionsAdded: n(r.rows_inserted),
    versionsChanged: n(r.rows_updated),
    versionsRemoved: n(r.rows_deleted),
    versionsClosed: n(r.versions_closed),
    durationMs: n(r.duration_ms),
  };
}

function parsed<T>(v: unknown, empty: T): T {
  if (v === null || v === undefined || v === '') return empty;
  return (typeof v === 'string' ? JSON.parse(v) : v) as T;
}
