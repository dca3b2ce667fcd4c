import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { ScdError } from '../errors.js';
import type { Driver, InputFile } from '../dialects/driver.js';
import type { Flow } from '../flow/flow.js';
import { ensureCatalog, readFlowRecord, writeFlowRecord } from '../store/catalog.js';
import { storeNames, TMP } from '../store/names.js';
import { nextVersion, recordCommit, type CommitResult } from '../store/commits.js';
import { ensureFilesTable, recordFiles, type FileRecord } from '../sources/landing.js';
import { diffSql } from './diff-sql.js';
import { affectedKeysSql, appendEventsSql, batchSql, freshEventsSql, quarantineSql, tiesSql, REASON } from './events-sql.js';
import { checkSingleExpression } from './expression.js';
import { checkInput, deriveModel, type ColumnModel } from './model.js';
import { changedSettings, semanticSettings } from './settings.js';
import { COMMIT, createStoreSql, OP, OP_TRUNCATE } from './target.js';
import { FILE_COLUMN, LINE_COLUMN } from '../dialects/driver.js';
import { logSource, walkSql } from './walk-sql.js';

export type ApplyResult = CommitResult;

export type Progress = (message: string) => void;

export interface ApplyFilesOptions {
  progress?: Progress;
  /** Files to record as applied, in the same transaction (landing folders: exactly once). */
  record?: FileRecord[];
}

/** Apply input files to the flow's target as ONE atomic commit (SPEC §3, §5). */
export async function applyFiles(
  driver: Driver,
  flow: Flow,
  files: InputFile[],
  options: ApplyFilesOptions | Progress = {},
): Promise<ApplyResult> {
  const { progress = () => {}, record: fileRecords = [] } = typeof options === 'function' ? { progress: options } : options;
  const started = Date.now();
  const names = storeNames(flow.target);
  const d = driver.dialect;
  const q = d.quote;
  const num = async (sql: string, params: unknown[] = []) => Number(Object.values((await driver.query(sql, params))[0] ?? {})[0] ?? 0);

  for (const [field, expr] of [
    ['applyAsDeletes', flow.applyAsDeletes],
    ['applyAsTruncates', flow.applyAsTruncates],
  ] as const) {
    if (expr) checkSingleExpression(flow, field, expr);
  }

  await ensureCatalog(driver, names);
  // Staging only writes temporary tables; it runs before the transaction because a reader that
  // refuses a file must not abort it (the driver then finds the bad lines another way).
  await dropTemps(driver);
  progress(`reading ${files.length} file${files.length === 1 ? '' : 's'}`);
  await driver.stageFiles(files, TMP.stage, TMP.rejects);
  return driver.transaction(async () => {
    const staged = (await driver.columns(TMP.stage)) ?? [];
    const staged_rows = await num(`SELECT count(*) FROM ${q(TMP.stage)}`);
    const rejected = await num(`SELECT count(*) FROM ${q(TMP.rejects)}`);
    const rowsRead = staged_rows + rejected;

    const record = await readFlowRecord(driver, names);
    const settings = semanticSettings(flow);
    let model: ColumnModel;
    if (!record) {
      if (staged_rows === 0)
        throw new ScdError('NOT_APPLIED', 'the input has no rows, so the target cannot be created yet', {
          file: flow.origin,
          fix: 'apply a file with at least one record',
        });
      model = deriveModel(flow, staged);
    } else {
      const changed = changedSettings(record.settings, settings);
      if (changed.length)
        throw new ScdError('FLOW_INVALID', `the flow changed (${changed.join(', ')}) since the target was built, and this needs a rebuild`, {
          file: flow.origin,
          field: changed[0],
          fix: 'restore the previous setting, or run `scd rebuild` on the flow to recompute all history under it',
        });
      model = record.model;
      checkInput(flow, model, staged);
    }
    if (staged_rows > 0) await checkExpressions(driver, flow);
    const at = new Date().toISOString();
    if (!record) {
      for (const sql of createStoreSql(flow, model, d, names)) await driver.run(sql);
      await writeFlowRecord(driver, names, { model, settings }, at);
    }
    const version = await nextVersion(driver, names);

    progress(`mapping ${rowsRead} rows to events`);
    await driver.run(batchSql(flow, model, d, staged));
    await driver.run(quarantineSql(d, names, staged), [version]);
    await driver.run(
      `INSERT INTO ${q(names.quarantine)} (${q(COMMIT)}, file, line, reason, raw) SELECT CAST($1 AS ${d.types.int}), ${q(FILE_COLUMN)}, ${q(LINE_COLUMN)}, reason, raw FROM ${q(TMP.rejects)}`,
      [version],
    );
    const quarantined = rejected + (await num(`SELECT count(*) FROM ${q(TMP.batch)} WHERE ${q(REASON)} IS NOT NULL`));
    await driver.run(freshEventsSql(model, d, names));
    const eventsApplied = await num(`SELECT count(*) FROM ${q(TMP.fresh)}`);
    const duplicates = rowsRead - quarantined - eventsApplied;
    await driver.run(appendEventsSql(model, d, names), [version]);
    const ties = eventsApplied ? await num(tiesSql(model, d, names)) : 0;
    const truncated = (await num(`SELECT count(*) FROM ${q(TMP.fresh)} WHERE ${q(OP)} = ${OP_TRUNCATE}`)) > 0;
    await driver.run(affectedKeysSql(model, d, names, truncated));
    const keysAffected = await num(`SELECT count(*) FROM ${q(TMP.keys)}`);

    let counts = NO_CHANGES;
    if (keysAffected > 0) {
      progress(`recomputing history of ${keysAffected} keys`);
      await driver.run(walkSql(flow, model, d, logSource(d, names), TMP.next));
      counts = await writeDiff(driver, flow, model, names, version, at);
    }
    const result: ApplyResult = {
      version,
      operation: 'apply',
      committedAt: at,
      inputs: files.map((f) => f.path),
      rowsRead,
      eventsApplied,
      duplicates,
      ties,
      quarantined,
      keysAffected,
      rowsInserted: counts.inserted,
      rowsUpdated: counts.updated,
      rowsDeleted: counts.deleted,
      versionsClosed: counts.closed,
      durationMs: Date.now() - started,
    };
    await recordCommit(driver, names, result);
    if (fileRecords.length) {
      await ensureFilesTable(driver, names);
      await recordFiles(driver, names, fileRecords, version);
    }
    await dropTemps(driver);
    return result;
  });
}

/** Apply records given in code (library use): they are written to a temporary NDJSON file. */
export async function applyRows(driver: Driver, flow: Flow, rows: Array<Record<string, unknown>>, progress?: Progress): Promise<ApplyResult> {
  const dir = mkdtempSync(path.join(tmpdir(), 'scdkit-'));
  const file = path.join(dir, 'rows.ndjson');
  try {
    writeFileSync(file, rows.map((r) => JSON.stringify(r)).join('\n') + (rows.length ? '\n' : ''));
    return await applyFiles(driver, flow, [{ path: file, format: 'ndjson' }], progress);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

async function checkExpressions(driver: Driver, flow: Flow): Promise<void> {
  for (const [field, expr] of [
    ['applyAsDeletes', flow.applyAsDeletes],
    ['applyAsTruncates', flow.applyAsTruncates],
  ] as const) {
    if (!expr) continue;
    let type: string;
    try {
      type = (await driver.describe(`SELECT (${expr}) AS x FROM ${driver.dialect.quote(TMP.stage)}`))[0]!.type;
    } catch (e) {
      const why = e instanceof Error && 'reason' in e ? String((e as { reason: string }).reason) : String(e);
      throw new ScdError('FLOW_INVALID', `"${expr}" cannot be evaluated on the source: ${why.replace(/^[A-Za-z ]+Error: /, '')}`, {
        file: flow.origin,
        field,
        fix: 'use the source column names, e.g. op = \'DELETE\'',
      });
    }
    if (!/^BOOL/i.test(type))
      throw new ScdError('FLOW_INVALID', `"${expr}" is not a boolean expression (it gives ${type})`, {
        file: flow.origin,
        field,
        fix: `compare it, e.g. ${expr} = 'DELETE'`,
      });
  }
}

export const NO_CHANGES = { inserted: 0, updated: 0, deleted: 0, closed: 0 };

/** Write the difference between TMP.next and the stored rows of TMP.keys; return its counts. */
export async function writeDiff(driver: Driver, flow: Flow, model: ColumnModel, names: ReturnType<typeof storeNames>, version: number, at: string) {
  const diff = diffSql(flow, model, driver.dialect, names);
  for (const sql of diff.statements) await driver.run(sql, sql.includes('$2') ? [version, at] : []);
  const row = (await driver.query(diff.counts))[0]!;
  return { inserted: Number(row.inserted), updated: Number(row.updated), deleted: Number(row.deleted), closed: Number(row.closed) };
}

export async function dropTemps(driver: Driver): Promise<void> {
  for (const t of Object.values(TMP)) await driver.run(`DROP TABLE IF EXISTS ${driver.dialect.quote(t)}`);
}
