import { openDriver } from './dialects/index.js';
import type { Driver } from './dialects/driver.js';
import type { Flow } from './flow/flow.js';
import { resolveAgainst } from './flow/flow.js';
import { applyFiles, applyRows, type ApplyResult, type Progress } from './plan/apply.js';
import { exportTarget as exportWith, readTarget as readWith } from './query/export.js';
import type { OutputOptions } from './query/output.js';
import { resolveInputs, sourceInputs } from './sources/files.js';

export interface DatabaseOption {
  /** Overrides the flow's database (relative to the current directory). */
  database?: string;
}

export interface ApplyOptions extends DatabaseOption {
  /** Files to apply as one commit (relative to the current directory). Default: the flow's source. */
  inputs?: string[];
  /** Records given in code, applied as one commit. */
  rows?: Array<Record<string, unknown>>;
  onProgress?: Progress;
}

/** The database a call uses: the option (relative to cwd), else the flow's (relative to the flow file). */
export function databaseOf(flow: Flow, options: DatabaseOption = {}): string {
  return options.database ? resolveAgainst(process.cwd(), options.database) : flow.database;
}

/** Open the flow's database, run fn, close it. */
export async function withDatabase<T>(flow: Flow, options: DatabaseOption, fn: (driver: Driver) => Promise<T>): Promise<T> {
  const driver = await openDriver(databaseOf(flow, options));
  try {
    return await fn(driver);
  } finally {
    await driver.close();
  }
}

/** Apply change records to the flow's target as one atomic commit. */
export async function apply(flow: Flow, options: ApplyOptions = {}): Promise<ApplyResult> {
  if (options.rows) {
    const rows = options.rows;
    return withDatabase(flow, options, (driver) => applyRows(driver, flow, rows, options.onProgress));
  }
  const files = options.inputs?.length ? resolveInputs(options.inputs, flow.source?.format) : sourceInputs(flow);
  return withDatabase(flow, options, (driver) => applyFiles(driver, flow, files, options.onProgress));
}

/** The target's rows as plain objects, sorted by keys then start (NDJSON conventions). */
export async function readTarget(flow: Flow, options: DatabaseOption = {}): Promise<Array<Record<string, unknown>>> {
  return withDatabase(flow, options, (driver) => readWith(driver, flow));
}

/** Write the target's rows as NDJSON, CSV or Parquet (stdout or a file). */
export async function exportTarget(flow: Flow, options: DatabaseOption & OutputOptions = {}): Promise<number> {
  return withDatabase(flow, options, (driver) => exportWith(driver, flow, options));
}
