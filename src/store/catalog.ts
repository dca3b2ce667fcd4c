import type { Driver } from '../dialects/driver.js';
import type { ColumnModel } from '../plan/model.js';
import type { StoreNames } from './names.js';

export interface FlowRecord {
  model: ColumnModel;
  settings: Record<string, unknown>;
  /** Events with a sequence (first part) older than this were folded by `compact`. */
  compactedBefore?: string;
}

/** Create the shared catalog tables if they are missing. */
export async function ensureCatalog(driver: Driver, names: StoreNames): Promise<void> {
  const d = driver.dialect;
  const q = d.quote;
  const t = d.types;
  await driver.run(
    `CREATE TABLE IF NOT EXISTS ${q(names.flows)} (target ${t.text} PRIMARY KEY, model ${t.text} NOT NULL, settings ${t.text} NOT NULL, created_at ${t.timestamptz} NOT NULL)`,
  );
  await driver.run(
    `CREATE TABLE IF NOT EXISTS ${q(names.commits)} (
      target ${t.text} NOT NULL, version ${t.int} NOT NULL, committed_at ${t.timestamptz} NOT NULL,
      operation ${t.text} NOT NULL, inputs ${t.text} NOT NULL,
      rows_read ${t.bigint} NOT NULL, events_applied ${t.bigint} NOT NULL, duplicates ${t.bigint} NOT NULL,
      ties ${t.bigint} NOT NULL, quarantined ${t.bigint} NOT NULL, dropped ${t.bigint} NOT NULL, skipped ${t.bigint} NOT NULL,
      expectations ${t.text} NOT NULL, keys_affected ${t.bigint} NOT NULL,
      rows_inserted ${t.bigint} NOT NULL, rows_updated ${t.bigint} NOT NULL, rows_deleted ${t.bigint} NOT NULL,
      versions_closed ${t.bigint} NOT NULL, duration_ms ${t.bigint} NOT NULL,
      PRIMARY KEY (target, version))`,
  );
}

export async function readFlowRecord(driver: Driver, names: StoreNames): Promise<FlowRecord | undefined> {
  if (!(await driver.columns(names.flows))) return undefined;
  const rows = await driver.query(`SELECT model, settings FROM ${driver.dialect.quote(names.flows)} WHERE target = $1`, [names.target]);
  if (!rows.length) return undefined;
  const model = JSON.parse(String(rows[0]!.model));
  return { model: model.columns ?? model, settings: JSON.parse(String(rows[0]!.settings)), compactedBefore: model.compactedBefore ?? undefined };
}

export async function writeFlowRecord(driver: Driver, names: StoreNames, record: FlowRecord, at: string): Promise<void> {
  await driver.run(`DELETE FROM ${driver.dialect.quote(names.flows)} WHERE target = $1`, [names.target]);
  await driver.run(`INSERT INTO ${driver.dialect.quote(names.flows)} VALUES ($1, $2, $3, CAST($4 AS ${driver.dialect.types.timestamptz}))`, [
    names.target,
    JSON.stringify(record.compactedBefore === undefined ? record.model : { columns: record.model, compactedBefore: record.compactedBefore }),
    JSON.stringify(record.settings),
    at,
  ]);
}
