/**
 * A commit of input files (or of rows, written to one file): its spec is staging the files, and,
 * for a landing folder, claiming and recording them in the commit (plan/apply.ts runs it).
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { Driver, InputFile } from '../dialects/driver.js';
import type { Flow } from '../flow/flow.js';
import { applyCommit, type ApplyResult, type Progress } from '../plan/apply.js';
import { storeNames } from '../store/names.js';
import { claimFiles, ensureFilesTable, recordFiles, type FileRecord } from './landing.js';
import { checkInputsReadable } from './files.js';
import { stageInputs } from './stage.js';
import { firstRecordKeys } from './record-keys.js';

export interface ApplyFilesOptions {
  progress?: Progress;
  /** Files to record as applied, in the same transaction (landing folders: exactly once). */
  record?: FileRecord[];
}

/** Apply input files to the flow's target as ONE atomic commit (SEMANTICS §3, §5). */
export async function applyFiles(driver: Driver, flow: Flow, files: InputFile[], options: ApplyFilesOptions | Progress = {}): Promise<ApplyResult> {
  const { progress, record = [] } = typeof options === 'function' ? { progress: options, record: [] } : options;
  const names = storeNames(flow.target);
  checkInputsReadable(driver, flow, files);
  return applyCommit(driver, flow, {
    inputs: files.map((f) => f.label ?? f.path),
    stage: (drv) => stageInputs(drv, flow, files),
    recordKeys: flow.source?.format === 'debezium' ? undefined : (drv, firsts) => firstRecordKeys(drv, files, firsts),
    claim: record.length ? (drv) => claimFiles(drv, names, record, flow.origin) : undefined,
    finish: record.length
      ? async (drv, version) => {
          await ensureFilesTable(drv, names);
          await recordFiles(drv, names, record, version);
        }
      : undefined,
    progress,
  });
}

/** Apply records given in code (library use): they are written to a temporary NDJSON file. */
export async function applyRows(driver: Driver, flow: Flow, rows: Array<Record<string, unknown>>, progress?: Progress): Promise<ApplyResult> {
  const dir = mkdtempSync(path.join(tmpdir(), 'scdkit-'));
  const file = path.join(dir, 'rows.ndjson');
  try {
    writeFileSync(file, rows.map((r) => JSON.stringify(r)).join('\n') + (rows.length ? '\n' : ''));
    return await applyFiles(driver, flow, [{ path: file, format: 'ndjson', label: '(rows)' }], progress);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
