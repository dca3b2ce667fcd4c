import { openDriver } from './dialects/index.js';
import type { Driver } from './dialects/driver.js';
import type { Flow } from './flow/flow.js';
import { resolveAgainst } from './flow/flow.js';
import { applyCommit, applyFiles, applyRows, type ApplyResult, type Progress } from './plan/apply.js';
import { exportTarget as exportWith, readTarget as readWith } from './query/export.js';
import type { OutputOptions } from './query/output.js';
import { resolveInputs } from './sources/files.js';
import { ensureFilesTable, pendingFiles, recordFiles } from './sources/landing.js';
import { orderSnapshots, snapshotSpec } from './sources/snapshot.js';
import { stageInputs } from './sources/stage.js';
import { tableSpec } from './sources/table.js';
import { ensureCatalog } from './store/catalog.js';
import { storeNames } from './store/names.js';
import { ScdError } from './errors.js';

export interface DatabaseOption {
  /** Overrides the flow's database (relative to the current directory). */
  database?: string;
  /** PostgreSQL: fail at once, instead of waiting, while another process applies to the same target. */
  noWait?: boolean;
}

export interface ApplyOptions extends DatabaseOption {
  /** Files to apply as one commit (relative to the current directory). Default: the flow's source. */
  inputs?: string[];
  /** Records given in code, applied as one commit. */
  rows?: Array<Record<string, unknown>>;
  onProgress?: Progress;
}

/**
 * The database a call uses: the option (relative to cwd), else the flow's (relative to the flow
 * file), else SCD_DATABASE_URL (relative to cwd), else the default file.
 */
export function databaseOf(flow: Flow, options: DatabaseOption = {}): string {
  if (options.database) return resolveAgainst(process.cwd(), options.database);
  const env = process.env.SCD_DATABASE_URL;
  if (flow.databaseIsDefault && env) return resolveAgainst(process.cwd(), env);
  return flow.database;
}

/** Open the flow's database, run fn, close it. */
export async function withDatabase<T>(flow: Flow, options: DatabaseOption, fn: (driver: Driver) => Promise<T>): Promise<T> {
  const driver = await openDriver(databaseOf(flow, options), { schema: flow.schema, noWait: options.noWait });
  try {
    return await fn(driver);
  } finally {
    await driver.close();
  }
}

/** Apply change records (files or rows given in code) to the flow's target as one atomic commit. */
export async function apply(flow: Flow, options: ApplyOptions = {}): Promise<ApplyResult> {
  if (options.rows) {
    const rows = options.rows;
    return withDatabase(flow, options, (driver) => applyRows(driver, flow, rows, options.onProgress));
  }
  if (!options.inputs?.length)
    throw new ScdError('USAGE', 'apply() needs inputs or rows', { fix: "pass { inputs: ['file.ndjson'] } or use applySource() for the flow's source" });
  const files = resolveInputs(options.inputs, flow.source?.format);
  return withDatabase(flow, options, (driver) => applyFiles(driver, flow, files, options.onProgress));
}

export interface SourceOptions extends DatabaseOption {
  /** One commit per new file instead of one for all of them. */
  each?: boolean;
  /** Leave files younger than this for a later run (a writer may still be writing them). */
  minAgeMs?: number;
  onProgress?: Progress;
  /** Called after each commit. */
  onCommit?: (result: ApplyResult) => void;
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
export async function applySource(flow: Flow, options: SourceOptions = {}): Promise<SourceReport> {
  return withDatabase(flow, options, (driver) => applySourceWith(driver, flow, options));
}

export async function applySourceWith(driver: Driver, flow: Flow, options: SourceOptions = {}): Promise<SourceReport> {
  const names = storeNames(flow.target);
  await ensureCatalog(driver, names);
  if (flow.source?.table || flow.source?.query) {
    const spec = await tableSpec(driver, flow, names);
    const result = await applyCommit(driver, flow, { ...spec, progress: options.onProgress });
    options.onCommit?.(result);
    return { results: [result], warnings: [], alreadyApplied: 0 };
  }
  const pending = await pendingFiles(driver, flow, names, options.minAgeMs);
  const report: SourceReport = { results: [], warnings: pending.warnings, alreadyApplied: pending.alreadyApplied };
  const commit = async (idx: number[]) => {
    const files = idx.map((i) => pending.files[i]!);
    const records = idx.map((i) => pending.records[i]!);
    const finish = async (drv: Driver, version: number) => {
      await ensureFilesTable(drv, names);
      await recordFiles(drv, names, records, version);
    };
    const stage = (drv: Driver) => stageInputs(drv, flow, files);
    const spec =
      flow.source?.mode === 'snapshot'
        ? { ...snapshotSpec(flow, driver, files[0]!, () => stage(driver)), inputs: [files[0]!.path] }
        : { inputs: files.map((f) => f.path), stage };
    const result = await applyCommit(driver, flow, { ...spec, finish, progress: options.onProgress });
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
  return report;
}

/** The target's rows as plain objects, sorted by keys then start (NDJSON conventions). */
export async function readTarget(flow: Flow, options: DatabaseOption = {}): Promise<Array<Record<string, unknown>>> {
  return withDatabase(flow, options, (driver) => readWith(driver, flow));
}

/** Write the target's rows as NDJSON, CSV or Parquet (stdout or a file). */
export async function exportTarget(flow: Flow, options: DatabaseOption & OutputOptions = {}): Promise<number> {
  return withDatabase(flow, options, (driver) => exportWith(driver, flow, options));
}
