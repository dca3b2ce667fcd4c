import { existsSync, statSync } from 'node:fs';
import type { Driver } from '../dialects/driver.js';
import { isObjectStoreUrl } from '../files/object-store.js';
import type { Flow } from '../flow/flow.js';
import { folderFiles } from '../sources/files.js';
import { pendingCount } from '../sources/landing.js';
import { readFlowRecord } from '../store/catalog.js';
import type { CommitResult } from '../store/commits.js';
import { storeNames } from '../store/names.js';
import { readCommitLog } from './commit-log.js';
import { engineOfDatabase } from './engine-of.js';

/** One flow at a glance (`scd status`): what `scd serve`'s overview shows, for a terminal or a script. */
export interface FlowStatus {
  target: string;
  engine: string;
  database: string;
  storedAs: Flow['storedAs'];
  /** False before the first commit: the counts below are then zero and lastCommit absent. */
  applied: boolean;
  keys: string[];
  rows: number;
  distinctKeys: number;
  currentRows: number;
  commits: number;
  lastCommit?: CommitResult;
  /** Files of source.path not applied yet (undefined for a table or query source). */
  pendingFiles?: number;
  /** Files of source.path that changed after a commit applied them (never applied again). */
  changedFiles?: string[];
  quarantined: number;
  /** Events kept in the event log (what a rebuild replays). */
  events: number;
}

/** Read-only: nothing is created or changed. */
export async function flowStatus(driver: Driver, flow: Flow): Promise<FlowStatus> {
  const q = driver.dialect.quote;
  const names = storeNames(flow.target);
  const record = await readFlowRecord(driver, names);
  const files = await pending(driver, flow);
  const base = { target: flow.target, engine: driver.dialect.name, database: driver.location, storedAs: flow.storedAs, pendingFiles: files?.pending, changedFiles: files?.changed };
  if (!record) return { ...base, applied: false, keys: flow.keys, rows: 0, distinctKeys: 0, currentRows: 0, commits: 0, quarantined: 0, events: 0 };
  const keys = record.model.keys.map((k) => k.name);
  const count = async (table: string) => ((await driver.columns(table)) ? `(SELECT count(*) FROM ${q(table)})` : '0');
  const row = (
    await driver.query(
      `SELECT (SELECT count(*) FROM ${q(names.target)}) AS total,
        ${await count(names.current)} AS current_rows,
        (SELECT count(*) FROM (SELECT DISTINCT ${keys.map(q).join(', ')} FROM ${q(names.target)}) k) AS distinct_keys,
        ${await count(names.quarantine)} AS quarantined,
        ${await count(names.events)} AS events`,
    )
  )[0]!;
  const log = await readCommitLog(driver, flow, undefined, { engineVersions: false });
  return {
    ...base,
    applied: true,
    keys,
    rows: Number(row.total),
    distinctKeys: Number(row.distinct_keys),
    currentRows: Number(row.current_rows),
    commits: log.length,
    lastCommit: log[0],
    quarantined: Number(row.quarantined),
    events: Number(row.events),
  };
}

/**
 * The status of a flow whose DuckDB file or PGlite folder does not exist yet: nothing applied, every file of the
 * landing folder pending. Opening the file would create it; a status changes nothing.
 */
export function statusBeforeDatabase(flow: Flow, database: string): FlowStatus {
  return {
    target: flow.target,
    engine: engineOfDatabase(database),
    database,
    storedAs: flow.storedAs,
    pendingFiles: localLandingFiles(flow),
    applied: false,
    keys: flow.keys,
    rows: 0,
    distinctKeys: 0,
    currentRows: 0,
    commits: 0,
    quarantined: 0,
    events: 0,
  };
}

/**
 * Files of the landing folder not applied yet (undefined without one, or at an object-store URL
 * on an engine that reads none).
 */
async function pending(driver: Driver, flow: Flow): Promise<{ pending: number; changed: string[] } | undefined> {
  const src = flow.source?.path;
  if (!src) return undefined;
  if (isObjectStoreUrl(src) ? !driver.dialect.capabilities.objectStoreInputs : !existsSync(src)) return undefined;
  return pendingCount(driver, flow, storeNames(flow.target), src);
}

function localLandingFiles(flow: Flow): number | undefined {
  const src = flow.source?.path;
  if (!src || !existsSync(src)) return undefined;
  return statSync(src).isDirectory() ? folderFiles(src, flow.source?.format).length : 1;
}
