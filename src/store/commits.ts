import type { Dialect } from '../dialects/dialect.js';
import type { Driver, LockRecords } from '../dialects/driver.js';
import type { Flow } from '../flow/flow.js';
import { type StoreNames, storeNames } from './names.js';

/**
 * What one commit did (SEMANTICS §5). rows read = events applied + duplicates + quarantined
 * (+ dropped by expectations + skipped tombstones, both zero unless the flow has them).
 */
export interface CommitResult {
  version: number;
  operation: 'apply' | 'rebuild' | 'compact';
  committedAt: string;
  inputs: string[];
  rowsRead: number;
  eventsApplied: number;
  duplicates: number;
  ties: number;
  quarantined: number;
  /** Records dropped by an expectation with action "drop". */
  dropped: number;
  /** Records skipped by design (Kafka tombstones). */
  skipped: number;
  /** Failed records per expectation. */
  expectations: Record<string, number>;
  /** Keys whose rows in the target this commit changed (a key whose events changed nothing is not one). */
  keysChanged: number;
  /** Versions (rows, by key and start) the target holds after the commit and not before. */
  versionsAdded: number;
  /** Versions held before and after whose values changed (a close, a late event's new end, an untracked column in place). */
  versionsChanged: number;
  /** Versions held before and not after (a late event that replaces a version, a rebuild under a changed flow). */
  versionsRemoved: number;
  /** Versions that have an end after the commit and had none before (were live, or are new): never a tombstone. */
  versionsClosed: number;
  durationMs: number;
  /**
   * The keys whose events tied in this commit (SEMANTICS §3), each as its key columns, at most
   * TIED_KEYS_LISTED of them; absent when none tied. Not stored: `ties` in the log counts them.
   */
  tiedKeys?: Record<string, unknown>[];
  /**
   * On a Delta target only (scd log): the target's Delta version after this commit, so that
   * `SELECT * FROM target VERSION AS OF deltaVersion` is the target as this commit left it.
   */
  deltaVersion?: number;
  /**
   * Where an apply's time went (`scd apply --profile`, `--json`), step by step in the order they
   * ran; not stored.
   */
  steps?: CommitStep[];
}

/** One step of a commit: its name, its wall time, and the rows it produced where it counts them. */
export interface CommitStep {
  step: string;
  ms: number;
  rows?: number;
}

/** How many tied keys a commit's result lists (CommitResult.tiedKeys); `ties` counts them all. */
export const TIED_KEYS_LISTED = 100;

export async function recordCommit(driver: Driver, names: StoreNames, r: CommitResult): Promise<void> {
  const d = driver.dialect;
  await driver.run(
    `INSERT INTO ${d.quote(names.commits)} VALUES ($1, CAST($2 AS ${d.types.int}), CAST($3 AS ${d.types.timestamptz}), $4, $5,
      $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, $18, $19)`,
    [
      names.target,
      r.version,
      r.committedAt,
      r.operation,
      JSON.stringify(r.inputs),
      r.rowsRead,
      r.eventsApplied,
      r.duplicates,
      r.ties,
      r.quarantined,
      r.dropped,
      r.skipped,
      JSON.stringify(r.expectations),
      r.keysChanged,
      r.versionsAdded,
      r.versionsChanged,
      r.versionsRemoved,
      r.versionsClosed,
      r.durationMs,
    ],
  );
}

/** A commit that read nothing: every count zero (rebuild, compact). */
export function emptyCommit(version: number, operation: CommitResult['operation'], committedAt: string, inputs: string[] = []): CommitResult {
  return {
    version,
    operation,
    committedAt,
    inputs,
    rowsRead: 0,
    eventsApplied: 0,
    duplicates: 0,
    ties: 0,
    quarantined: 0,
    dropped: 0,
    skipped: 0,
    expectations: {},
    keysChanged: 0,
    versionsAdded: 0,
    versionsChanged: 0,
    versionsRemoved: 0,
    versionsClosed: 0,
    durationMs: 0,
  };
}

/** The number of the target's latest commit (0: none yet). */
export async function latestVersion(driver: Driver, flow: Flow): Promise<number> {
  const rows = await driver.query(lastRecordedSql(driver.dialect, storeNames(flow.target)), [flow.target]);
  return Number(rows[0]?.v ?? 0);
}

/** A query of the target's latest commit number as `v` (0: none yet); its parameter $1 is the target. */
export function lastRecordedSql(d: Dialect, names: StoreNames): string {
  return `SELECT CAST(coalesce(max(version), 0) AS ${d.types.int}) AS v FROM ${d.quote(names.commits)} WHERE target = $1`;
}

/**
 * How a commit's lock may read the target's records (Driver.lockTarget): `endsWithRecord` when the
 * commit's record is its last write, so that a lock which is a write of its own ends with it.
 */
export function lockRecords(d: Dialect, names: StoreNames, endsWithRecord: boolean): LockRecords {
  return { lastRecorded: lastRecordedSql(d, names), endsWithRecord };
}
