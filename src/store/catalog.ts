import type { Driver } from '../dialects/driver.js';
import type { ColumnModel } from '../flow/column-model.js';
import type { StoreNames } from './names.js';

export interface FlowRecord {
  model: ColumnModel;
  settings: Record<string, unknown>;
  /** Events with a sequence (first part) older than this were folded by `compact`. */
  compactedBefore?: string;
}

/** The drivers that have made sure of the catalog (it is never dropped, so once per driver). */
const catalogReady = new WeakSet<Driver>();

/**
 * Create the shared catalog tables if they are missing: one lookup when they exist (the commits
 * table is made last), nothing for a driver that looked before.
 */
export async function ensureCatalog(driver: Driver, names: StoreNames): Promise<void> {
  if (catalogReady.has(driver)) return;
  if (await driver.columns(names.commits)) {
    catalogReady.add(driver);
    return;
  }
  const d = driver.dialect;
  const t = d.types;
  await driver.run(
    d.createTable(names.flows, `target ${t.text} NOT NULL, model ${t.text} NOT NULL, settings ${t.text} NOT NULL, created_at ${t.timestamptz} NOT NULL`, {
      ifNotExists: true,
      primaryKey: ['target'],
    }),
  );
  // The commit log keeps its columns' first names (a database keeps its table): keys_affected
  // holds CommitResult.keysChanged, rows_inserted versionsAdded, rows_updated versionsChanged,
  // rows_deleted versionsRemoved (store/commits.ts; docs/decisions/0130-commit-counts.md).
  await driver.run(
    d.createTable(
      names.commits,
      `target ${t.text} NOT NULL, version ${t.int} NOT NULL, committed_at ${t.timestamptz} NOT NULL,
      operation ${t.text} NOT NULL, inputs ${t.text} NOT NULL,
      rows_read ${t.bigint} NOT NULL, events_applied ${t.bigint} NOT NULL, duplicates ${t.bigint} NOT NULL,
      ties ${t.bigint} NOT NULL, quarantined ${t.bigint} NOT NULL, dropped ${t.bigint} NOT NULL, skipped ${t.bigint} NOT NULL,
      expectations ${t.text} NOT NULL, keys_affected ${t.bigint} NOT NULL,
      rows_inserted ${t.bigint} NOT NULL, rows_updated ${t.bigint} NOT NULL, rows_deleted ${t.bigint} NOT NULL,
      versions_closed ${t.bigint} NOT NULL, duration_ms ${t.bigint} NOT NULL`,
      { ifNotExists: true, primaryKey: ['target', 'version'] },
    ),
  );
  catalogReady.add(driver);
}

/** The target's stored model and settings. */
export async function readFlowRecord(driver: Driver, names: StoreNames): Promise<FlowRecord | undefined> {
  if (!(await driver.columns(names.flows))) return undefined;
  const rows = await driver.query(`SELECT model, settings FROM ${driver.dialect.quote(names.flows)} WHERE target = $1`, [names.target]);
  if (!rows.length) return undefined;
  return parseFlowRecord(rows[0]!);
}

/**
 * What a commit reads of the target's records at its start, in one query: the flow record, the
 * next commit's number, and whether an earlier commit counted ties (its log may hold some); and,
 * given `count`, the rows of each of those (scratch) tables, in the same query; and, given
 * `columns` and where the dialect can say it in the query (Dialect.columnsAmong), which of the
 * columns `among` the table has (`found`; undefined otherwise).
 * The catalog must exist (ensureCatalog).
 */
export async function readTargetRecords<K extends string = never>(
  driver: Driver,
  names: StoreNames,
  count: Partial<Record<K, string>> = {},
  columns?: { table: string; among: string[] },
): Promise<{ record?: FlowRecord; version: number; hadTies: boolean; rows: Record<K, number>; found?: Set<string> }> {
  const d = driver.dialect;
  const q = d.quote;
  const counted = Object.entries(count) as Array<[K, string]>;
  const among = columns && d.columnsAmong ? `, ${d.columnsAmong(columns.table, columns.among)} AS found` : '';
  const row = (
    await driver.query(
      `SELECT f.model, f.settings, c.v, c.ties${counted.map(([k, t]) => `, (SELECT count(*) FROM ${q(t)}) AS ${q(`n_${k}`)}`).join('')}${among} FROM
       (SELECT CAST(coalesce(max(version), 0) AS ${d.types.int}) AS v, count(*) FILTER (WHERE ties > 0) AS ties FROM ${q(names.commits)} WHERE target = $1) c
       LEFT JOIN ${q(names.flows)} f ON f.target = $1`,
      [names.target],
    )
  )[0]!;
  const rows = Object.fromEntries(counted.map(([k]) => [k, Number(row[`n_${k}`])])) as Record<K, number>;
  const found = among ? new Set(row.found == null ? [] : String(row.found).split(',')) : undefined;
  return { record: row.model == null ? undefined : parseFlowRecord(row), version: Number(row.v) + 1, hadTies: Number(row.ties) > 0, rows, found };
}

function parseFlowRecord(row: Record<string, unknown>): FlowRecord {
  const model = JSON.parse(String(row.model));
  return { model: model.columns ?? model, settings: JSON.parse(String(row.settings)), compactedBefore: model.compactedBefore ?? undefined };
}

/**
 * The flow record's values as its table holds them ($1 target, $2 model, $3 settings, $4 created
 * at). The executor writes them (CommitExecutor.writeFlowRecord): the record is replaced, never
 * left out.
 */
export function flowRecordValues(names: StoreNames, record: FlowRecord, at: string): unknown[] {
  return [
    names.target,
    JSON.stringify(record.compactedBefore === undefined ? record.model : { columns: record.model, compactedBefore: record.compactedBefore }),
    JSON.stringify(record.settings),
    at,
  ];
}
