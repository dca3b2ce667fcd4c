/**
 * The commit of input files: ONE builder (filesCommit) for every path that applies files — files
 * named to `apply` (`--input`, `--each`), a landing folder's new files (`scd apply FLOW`,
 * `--watch`) and records given in code (written to one file). Whatever the path, the same files
 * make the same commit: staged alike, a new target's columns in its first record's key order,
 * ties resolved alike, object-store inputs checked alike; a landing folder's commit only adds
 * claiming and recording its files in the same transaction.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { Driver, InputFile } from '../dialects/driver.js';
import { ScdError } from '../errors.js';
import type { Flow } from '../flow/flow.js';
import { type ApplyResult, applyCommit, type CommitSpec, type Progress } from '../plan/apply.js';
import { storeNames } from '../store/names.js';
import { checkInputsReadable } from './files.js';
import { claimFiles, ensureFilesTable, type FileRecord, type Renamed, recordFiles } from './landing.js';
import { firstRecordKeys } from './record-keys.js';
import { rowJson } from './rows-json.js';
import { orderSnapshots, snapshotSpec } from './snapshot.js';
import { stageInputs } from './stage.js';

export interface ApplyFilesOptions {
  progress?: Progress;
  /** Files to record as applied, in the same transaction (landing folders: exactly once). */
  record?: FileRecord[];
  /** Applied files found under another name (moved, renamed, or recorded by an absolute path): their records take the new name in the same transaction. */
  renamed?: Renamed[];
}

/**
 * What a commit of `files` does (plan/apply.ts runs it). A snapshot flow's commit is one snapshot
 * (its version from its name or its column); a change flow's is every file given, in the order given.
 */
export function filesCommit(driver: Driver, flow: Flow, files: InputFile[], options: Omit<ApplyFilesOptions, 'progress'> = {}): Omit<CommitSpec, 'progress'> {
  const { record = [], renamed = [] } = options;
  const names = storeNames(flow.target);
  checkInputsReadable(driver, flow, files);
  const staged: Array<() => void> = [];
  const stage = async (drv: Driver) => {
    const inputs = await stageInputs(drv, flow, files);
    if (inputs.release) staged.push(inputs.release);
    return inputs;
  };
  const release = () =>
    staged.splice(0).forEach((done) => {
      done();
    });
  const landing: Pick<CommitSpec, 'claim' | 'finish'> = {
    claim: record.length ? (drv) => claimFiles(drv, names, record, flow.origin) : undefined,
    finish:
      record.length || renamed.length
        ? async (drv, version) => {
            await ensureFilesTable(drv, names);
            await recordFiles(drv, names, record, version, renamed);
          }
        : undefined,
  };
  const inputs = files.map((f) => f.label ?? f.path);
  if (flow.source?.mode === 'snapshot') {
    if (files.length !== 1)
      throw new ScdError('USAGE', `a snapshot flow applies one snapshot a commit, and ${files.length} files were given`, {
        file: flow.origin,
        fix: 'apply them one by one, oldest first (--each), or land them in source.path and run scd apply FLOW',
      });
    const [file] = orderSnapshots(flow, files);
    return { inputs, ...snapshotSpec(flow, driver, file!, () => stage(driver)), ...landing, release };
  }
  return {
    inputs,
    stage,
    recordKeys: flow.source?.format === 'debezium' ? undefined : (drv, firsts) => firstRecordKeys(drv, files, firsts),
    ...landing,
    release,
  };
}

/** Apply input files to the flow's target as ONE atomic commit (SEMANTICS §3, §5). */
export async function applyFiles(driver: Driver, flow: Flow, files: InputFile[], options: ApplyFilesOptions | Progress = {}): Promise<ApplyResult> {
  const { progress, ...landing } = typeof options === 'function' ? { progress: options } : options;
  return applyCommit(driver, flow, { ...filesCommit(driver, flow, files, landing), progress });
}

/** Apply records given in code (library use): they are written to a temporary NDJSON file, exactly (rows-json.ts). */
export async function applyRows(driver: Driver, flow: Flow, rows: Array<Record<string, unknown>>, progress?: Progress): Promise<ApplyResult> {
  const dir = mkdtempSync(path.join(tmpdir(), 'scdkit-'));
  const file = path.join(dir, 'rows.ndjson');
  try {
    writeFileSync(file, rows.map(rowJson).join('\n') + (rows.length ? '\n' : ''));
    return await applyFiles(driver, flow, [{ path: file, format: 'ndjson', label: '(rows)' }], progress);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
