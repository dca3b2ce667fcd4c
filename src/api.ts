import { existsSync } from 'node:fs';
import path from 'node:path';
import { checkDatabaseLocation } from './dialects/database-location.js';
import type { Driver } from './dialects/driver.js';
import { openDriverWaiting } from './dialects/open-waiting.js';
import { ScdError } from './errors.js';
import type { Flow } from './flow/flow.js';
import { resolveAgainst } from './flow/flow.js';
import { type ApplyResult, applyCommit, type Progress } from './plan/apply.js';
import { type DryRun, dryRun } from './plan/dry-run.js';
import { checkFlowUnchanged } from './plan/settings.js';
import { localDatabasePath } from './query/engine-of.js';
import { exportTarget as exportWith, readTarget as readWith } from './query/export.js';
import type { OutputOptions } from './query/output.js';
import { applyFiles, applyRows, filesCommit } from './sources/apply-files.js';
import { resolveInputs } from './sources/files.js';
import { FilesTaken, pendingFiles } from './sources/landing.js';
import { orderSnapshots } from './sources/snapshot.js';
import { tableSpec } from './sources/table.js';
import { ensureCatalog } from './store/catalog.js';
import { type StoreNames, storeNames } from './store/names.js';

export interface DatabaseOption {
  /** Overrides the flow's database (relative to the current directory). */
  database?: string;
  /** Fail at once, instead of waiting, while another commit (of this process or another) changes the same target. */
  noWait?: boolean;
  /**
   * How long to wait, in ms, while another process holds the database file (DuckDB: one process
   * at a time) before failing with DB_IN_USE. Default 0: fail at once. The CLI waits 5 s.
   */
  waitMs?: number;
}

export interface ApplyOptions extends DatabaseOption {
  /** Files to apply as one commit (relative to the current directory). Default: the flow's source. */
  inputs?: string[];
  /** Records given in code, applied as one commit. */
  rows?: Array<Record<string, unknown>>;
  onProgress?: Progress;
  /** Run the commit and roll it back: the statements it sent and what it would have done (plan/dry-run.ts). */
  dryRun?: boolean;
}

/**
 * The database a call uses: the option (relative to cwd), else the flow's (relative to the flow
 * file), else SCD_DATABASE_URL (relative to cwd), else the default file.
 */
export function databaseOf(flow: Flow, options: DatabaseOption = {}): string {
  if (options.database) return resolveAgainst(process.cwd(), checkedLocation(options.database));
  const env = process.env.SCD_DATABASE_URL;
  if (flow.databaseIsDefault && env) return resolveAgainst(process.cwd(), checkedLocation(env, 'SCD_DATABASE_URL: '));
  return flow.database;
}

/** A database location given to a call (as written, before it is resolved), or its one-line refusal. */
function checkedLocation(database: string, from = ''): string {
  try {
    checkDatabaseLocation(database);
  } catch (e) {
    if (e instanceof ScdError && from) throw new ScdError(e.code, `${from}${e.problem}`, { fix: e.fix });
    throw e;
  }
  return database;
}

/** Open the flow's database, run fn, close it. */
export async function withDatabase<T>(flow: Flow, options: DatabaseOption, fn: (driver: Driver) => Promise<T>): Promise<T> {
  const driver = await openDriverWaiting(databaseOf(flow, options), { schema: flow.schema, noWait: options.noWait, waitMs: options.waitMs ?? 0 });
  try {
    return await fn(driver);
  } finally {
    await driver.close();
  }
}

/**
 * Apply change records (files or rows given in code) to the flow's target as one atomic commit.
 * With `dryRun: true` nothing is changed: the statements the commit sent, and its result.
 */
export function apply(flow: Flow, options: ApplyOptions & { dryRun: true }): Promise<DryRun<ApplyResult>>;
export function apply(flow: Flow, options?: ApplyOptions): Promise<ApplyResult>;
export async function apply(flow: Flow, options: ApplyOptions = {}): Promise<ApplyResult | DryRun<ApplyResult>> {
  let commit: (driver: Driver) => Promise<ApplyResult>;
  if (options.rows) {
    const rows = options.rows;
    commit = (driver) => applyRows(driver, flow, rows, options.onProgress);
  } else {
    if (!options.inputs?.length)
      throw new ScdError('USAGE', 'apply() needs inputs or rows', { fix: "pass { inputs: ['file.ndjson'] } or use applySource() for the flow's source" });
    const files = resolveInputs(options.inputs, flow.source?.format);
    commit = (driver) => applyFiles(driver, flow, files, options.onProgress);
  }
  if (!options.dryRun) return withDatabase(flow, options, commit);
  return withDatabase<DryRun<ApplyResult>>(flow, { ...options, database: await dryRunDatabase(flow, options) }, (driver) => dryRun(driver, commit));
}

export interface SourceOptions extends DatabaseOption {
  /** One commit per new file instead of one for all of them. */
  each?: boolean;
  /** Leave files younger than this for a later run (a writer may still be writing them). */
  minAgeMs?: number;
  onProgress?: Progress;
  /** Called after each commit. */
  onCommit?: (result: ApplyResult) => void;
  /** Run the commit of the new files and roll it back (one commit: not with `each`); see ApplyOptions.dryRun. */
  dryRun?: boolean;
}

export interface SourceReport {
  results: ApplyResult[];
  /** Files that changed after they were applied: never applied twice. */
  warnings: string[];
  alreadyApplied: number;
}

/**
 * Apply every file of the flow's landing folder (source.path) not applied yet, in name order,
 * as one commit; each file is recorded in the same transaction, so a crash at any point and a
 * rerun apply every file exactly once.
 */
export function applySource(flow: Flow, options: SourceOptions & { dryRun: true }): Promise<DryRun<SourceReport>>;
export function applySource(flow: Flow, options?: SourceOptions): Promise<SourceReport>;
export async function applySource(flow: Flow, options: SourceOptions = {}): Promise<SourceReport | DryRun<SourceReport>> {
  if (!options.dryRun) return withDatabase(flow, options, (driver) => applySourceWith(driver, flow, options));
  return withDatabase<DryRun<SourceReport>>(flow, { ...options, database: await dryRunDatabase(flow, options) }, (driver) =>
    dryRun(driver, (recording) => applySourceWith(recording, flow, options)),
  );
}

/**
 * The database a dry run runs on: the flow's, or, where that holds no scdkit tables yet (a DuckDB
 * file or a PGlite folder that is not there, a PostgreSQL schema without scdkit's commit log), an
 * empty database of the same engine in memory. Opening the flow's would create the file, the
 * folder or the schema, and scdkit's catalog tables are created before the commit's transaction,
 * so the rollback would leave them behind; a dry run creates nothing. A table source is read
 * where it is, so its dry run runs on the flow's database.
 */
async function dryRunDatabase(flow: Flow, options: DatabaseOption): Promise<string> {
  const database = databaseOf(flow, options);
  if (flow.source?.table !== undefined || flow.source?.query !== undefined) return database;
  const local = localDatabasePath(database);
  if (local !== undefined) {
    if (existsSync(path.resolve(local))) return database;
    return /^pglite:/i.test(database) ? 'pglite://memory' : ':memory:';
  }
  if (!/^postgres(ql)?:\/\//i.test(database)) return database;
  // Looked up from the schema every database has, so that the flow's is not created by the look.
  const driver = await openDriverWaiting(database, { schema: 'public', noWait: options.noWait, waitMs: options.waitMs ?? 0 });
  try {
    const schema = flow.schema ?? 'public';
    const found = await driver.query(`SELECT to_regclass($1) IS NOT NULL AS found`, [`${driver.dialect.quote(schema)}.${driver.dialect.quote(storeNames(flow.target).commits)}`]);
    return found[0]?.found === true ? database : 'pglite://memory';
  } finally {
    await driver.close();
  }
}

export async function applySourceWith(driver: Driver, flow: Flow, options: SourceOptions = {}): Promise<SourceReport> {
  const names = storeNames(flow.target);
  await ensureCatalog(driver, names);
  await checkFlowUnchanged(driver, flow, names);
  if (flow.source?.table || flow.source?.query) {
    const spec = await tableSpec(driver, flow, names);
    const result = await applyCommit(driver, flow, { ...spec, progress: options.onProgress });
    options.onCommit?.(result);
    return { results: [result], warnings: [], alreadyApplied: 0 };
  }
  const report: SourceReport = { results: [], warnings: [], alreadyApplied: 0 };
  // The files are listed before the target's lock (they are staged before the transaction); each
  // commit claims its files under the lock, and when another apply took some of them meanwhile
  // (FilesTaken: nothing of this commit was applied) the folder is listed again.
  for (;;) {
    try {
      await applyPending(driver, flow, names, options, report);
      return report;
    } catch (e) {
      if (!(e instanceof FilesTaken)) throw e;
      options.onProgress?.(`${e.taken.length} file(s) were applied meanwhile by commit ${e.taken[0]!.version}: listing the folder again`);
    }
  }
}

/**
 * One listing of the landing folder, and its commits: each built as every commit of files is
 * (sources/apply-files.ts filesCommit), with its files claimed and recorded in its transaction.
 */
async function applyPending(driver: Driver, flow: Flow, names: StoreNames, options: SourceOptions, report: SourceReport): Promise<void> {
  const pending = await pendingFiles(driver, flow, names, options.minAgeMs);
  const mine = report.results.reduce((n, r) => n + r.inputs.length, 0);
  report.warnings = pending.warnings;
  // Files applied before this call (or by others during it), not those this call's commits applied.
  report.alreadyApplied = pending.alreadyApplied - mine;
  // Applied files met under another name are renamed in their records by the first commit.
  let renamed = pending.renamed;
  const commit = async (idx: number[]) => {
    const files = idx.map((i) => pending.files[i]!);
    const record = idx.map((i) => pending.records[i]!);
    const result = await applyCommit(driver, flow, { ...filesCommit(driver, flow, files, { record, renamed }), progress: options.onProgress });
    renamed = [];
    report.results.push(result);
    options.onCommit?.(result);
  };
  if (flow.source?.mode === 'snapshot') {
    // Each snapshot is its own commit, in version order.
    const order = orderSnapshots(flow, pending.files);
    for (const f of order) await commit([pending.files.indexOf(f)]);
  } else if (options.each) {
    for (let i = 0; i < pending.files.length; i++) await commit([i]);
  } else if (pending.files.length) {
    await commit(pending.files.map((_, i) => i));
  }
}

/** The target's rows as plain objects, sorted by keys then start (NDJSON conventions). */
export async function readTarget(flow: Flow, options: DatabaseOption = {}): Promise<Array<Record<string, unknown>>> {
  return withDatabase(flow, options, (driver) => readWith(driver, flow));
}

/** Write the target's rows as NDJSON, CSV or Parquet (stdout or a file). */
export async function exportTarget(flow: Flow, options: DatabaseOption & OutputOptions = {}): Promise<number> {
  return withDatabase(flow, options, (driver) => exportWith(driver, flow, options));
}
