import type { ColumnInfo, Driver } from '../dialects/driver.js';
import { ScdError } from '../errors.js';
import type { Flow } from '../flow/flow.js';
import { checkedSequenceValue } from '../plan/sequence-value.js';
import { readFlowRecord } from '../store/catalog.js';
import { latestVersion } from '../store/commits.js';
import { commitVersions, versionAfter } from '../store/engine-versions.js';
import { type StoreNames, storeNames } from '../store/names.js';

export { latestVersion } from '../store/commits.js';

import { requireCapability } from '../dialects/capabilities.js';
import { sqlString } from '../dialects/dialect.js';
import { CDF_COLUMNS, feedSql, writtenShape } from '../store/feed.js';
import { sequenceType } from '../store/target-columns.js';
import { targetColumnsOf, targetQuery } from './export.js';
import { type RowQuery, readRows } from './output.js';
import { TIES_COLUMN, versionTiesSql } from './version-ties.js';

/** The commit log's columns, in order, with the type each has on this engine. */
function commitColumns(d: Driver['dialect']): ColumnInfo[] {
  const t = d.types;
  const counts = ['rows_read', 'events_applied', 'duplicates', 'ties', 'quarantined', 'dropped', 'skipped'];
  const changes = ['keys_affected', 'rows_inserted', 'rows_updated', 'rows_deleted', 'versions_closed', 'duration_ms'];
  return [
    { name: 'version', type: t.int },
    { name: 'committed_at', type: t.timestamptz },
    { name: 'operation', type: t.text },
    { name: 'inputs', type: t.text },
    ...counts.map((name) => ({ name, type: t.bigint })),
    { name: 'expectations', type: t.text },
    ...changes.map((name) => ({ name, type: t.bigint })),
  ];
}

async function modelOf(driver: Driver, flow: Flow) {
  return (await recordOf(driver, flow)).model;
}

async function recordOf(driver: Driver, flow: Flow) {
  const record = await readFlowRecord(driver, storeNames(flow.target));
  if (!record)
    throw new ScdError('NOT_APPLIED', `target "${flow.target}" does not exist in ${driver.location} yet`, {
      file: flow.origin,
      fix: 'run `scd apply` first (or check --db)',
    });
  return record;
}

/** The commit log, newest first (like DESCRIBE HISTORY). */
export async function commitLogQuery(driver: Driver, flow: Flow): Promise<RowQuery> {
  await modelOf(driver, flow);
  const d = driver.dialect;
  const types = await driver.columns(storeNames(flow.target).commits);
  return {
    columns: commitColumns(d).map((c) => ({ name: c.name, type: types?.find((s) => s.name === c.name)?.type ?? c.type })),
    from: d.quote(storeNames(flow.target).commits),
    where: 'target = $1',
    params: [flow.target],
    orderBy: ['version DESC'],
  };
}

/** The change data feed between two commits (inclusive), Delta Lake's schema. */
export async function changesQuery(driver: Driver, flow: Flow, from: number, to?: number): Promise<RowQuery> {
  const record = await recordOf(driver, flow);
  const model = record.model;
  const d = driver.dialect;
  const q = d.quote;
  const names = storeNames(flow.target);
  const target = await targetColumnsOf(driver, flow);
  const cdf = await cdfColumns(driver, names);
  const cols = [...target, ...cdf];
  const order = [
    `${q('_commit_version')}`,
    ...model.keys.map((k) => q(k.name)),
    ...(flow.storedAs === 'scd2' ? [q(flow.startAtColumn)] : []),
    `CASE ${q('_change_type')} WHEN 'update_preimage' THEN 0 WHEN 'delete' THEN 1 WHEN 'update_postimage' THEN 2 ELSE 3 END`,
  ];
  return {
    columns: cols,
    from: await feedSql(
      driver,
      names,
      writtenShape(
        record,
        target.map((c) => c.name),
      ),
    ),
    where: `${q('_commit_version')} >= CAST($1 AS INTEGER)${to === undefined ? '' : ` AND ${q('_commit_version')} <= CAST($2 AS INTEGER)`}`,
    params: to === undefined ? [from] : [from, to],
    orderBy: order,
  };
}

/** The change feed's own columns with their types on this engine. */
async function cdfColumns(driver: Driver, names: StoreNames): Promise<ColumnInfo[]> {
  const t = driver.dialect.types;
  if (driver.dialect.capabilities.changeFeed)
    return [
      { name: '_change_type', type: t.text },
      { name: '_commit_version', type: t.int },
      { name: '_commit_timestamp', type: t.timestamptz },
    ];
  const all = (await driver.columns(names.changes)) ?? [];
  return all.filter((c) => CDF_COLUMNS.includes(c.name));
}

/**
 * The target exactly as it stood after commit N: every row the change feed inserted up to N,
 * minus every row it removed up to N (time travel); on an engine that versions the target
 * (Delta), the target's own version of commit N.
 */
export async function versionQuery(driver: Driver, flow: Flow, version: number): Promise<RowQuery> {
  const record = await recordOf(driver, flow);
  const latest = await latestVersion(driver, flow);
  if (version < 1 || version > latest) throw new ScdError('USAGE', `there is no commit ${version} (the latest is ${latest})`, { fix: `use --version 1..${latest}` });
  const base = await targetQuery(driver, flow);
  const q = driver.dialect.quote;
  const names = storeNames(flow.target);
  const list = base.columns.map((c) => q(c.name)).join(', ');
  if (driver.dialect.capabilities.changeFeed) return { ...base, from: await engineVersionSql(driver, names, version, base.columns) };
  return {
    ...base,
    from: `(SELECT ${list} FROM ${await feedSql(
      driver,
      names,
      writtenShape(
        record,
        base.columns.map((c) => c.name),
      ),
    )} WHERE ${q('_commit_version')} <= CAST($1 AS INTEGER)
      GROUP BY ${list}
      HAVING sum(CASE WHEN ${q('_change_type')} IN ('insert', 'update_postimage') THEN 1 ELSE -1 END) > 0) tt`,
    params: [version],
  };
}

/**
 * The target at scdkit commit `version` from the engine's own versions (none yet: no rows). A
 * column added since that version reads as null there, as the feed-based form gives it.
 */
async function engineVersionSql(driver: Driver, names: StoreNames, version: number, columns: ColumnInfo[]): Promise<string> {
  const d = driver.dialect;
  const q = d.quote;
  requireCapability(d, 'tableAtVersion', 'time travel on a table the engine versions (capabilities.changeFeed)');
  const at = versionAfter(await commitVersions(driver, names), version);
  const list = columns.map((c) => q(c.name)).join(', ');
  if (at === undefined) return `(SELECT ${list} FROM ${q(names.target)} WHERE 1 = 0) tt`;
  const then = d.tableAtVersion(names.target, at);
  const had = new Set((await driver.describe(`SELECT * FROM ${then}`)).map((c) => d.nameKey(c.name)));
  const select = columns.map((c) => (had.has(d.nameKey(c.name)) ? q(c.name) : `CAST(NULL AS ${c.type}) AS ${q(c.name)}`));
  return `(SELECT ${select.join(', ')} FROM ${then}) tt`;
}

/** Versions valid at a point of the sequence: start <= T and (end > T or current). */
export async function asOfQuery(driver: Driver, flow: Flow, at: string): Promise<RowQuery> {
  if (flow.storedAs !== 'scd2') throw new ScdError('USAGE', 'as-of needs an scd2 target', { file: flow.origin, fix: 'use export for scd1 targets' });
  const model = await modelOf(driver, flow);
  const d = driver.dialect;
  const q = d.quote;
  const base = await targetQuery(driver, flow);
  // A tuple sequence is compared on its first part (e.g. the timestamp of [ts_ms, lsn]).
  const part = (col: string) => (model.seq.length === 1 ? q(col) : `(${q(col)}).${q(model.seq[0]!.name)}`);
  const type = model.seq.length === 1 ? sequenceType(d, model) : model.seq[0]!.type;
  // The time as the engine compares it exactly, or a person's error (never a refused statement).
  const value = await checkedSequenceValue(driver, at, model.seq[0]!);
  const t = `CAST($1 AS ${type})`;
  const end = part(flow.endAtColumn);
  const live = flow.deletes === 'tombstone' ? ` AND NOT ${q(flow.deletedColumn)}` : '';
  return {
    ...base,
    // An inclusive end (endInclusive) is the version's last value: it is live there too.
    where: `${part(flow.startAtColumn)} <= ${t} AND (${end} ${flow.endInclusive ? '>=' : '>'} ${t} OR ${end} IS NULL)${live}`,
    params: [value],
    orderBy: model.keys.map((k) => q(k.name)),
  };
}

/**
 * Every version of one key, oldest first, each with the columns that changed from the previous
 * (`_changed`) and how many of the key's events tied in its span (`_ties`, versionTiesSql).
 */
export async function keyHistoryQuery(driver: Driver, flow: Flow, key: Record<string, string>): Promise<RowQuery> {
  const model = await modelOf(driver, flow);
  const d = driver.dialect;
  const q = d.quote;
  const names = Object.keys(key);
  const missing = model.keys.find((k) => !names.includes(k.name));
  const unknown = names.find((n) => !model.keys.some((k) => k.name === n));
  if (unknown || missing)
    throw new ScdError('USAGE', unknown ? `"${unknown}" is not a key of ${flow.target}` : `the key needs "${missing!.name}" too`, {
      fix: `give --key ${model.keys.map((k) => `${k.name}=VALUE`).join(' --key ')}`,
    });
  // Each value as its column's type: a value the type cannot hold is a person's error, not a key
  // with no versions; compared as the type, `--key id=007` is the key 7.
  const values: string[] = [];
  for (const k of model.keys) values.push(await keyValue(driver, k, key[k.name]!));
  const base = await targetQuery(driver, flow);
  const skip = new Set([flow.startAtColumn, flow.endAtColumn, flow.isCurrentColumn, flow.surrogateKey, ...model.keys.map((k) => k.name)]);
  const order = flow.storedAs === 'scd2' ? q(flow.startAtColumn) : q(model.keys[0]!.name);
  const diffs = base.columns
    .filter((c) => !skip.has(c.name))
    .map((c) => `CASE WHEN ${q(c.name)} IS DISTINCT FROM lag(${q(c.name)}) OVER (ORDER BY ${order}) THEN ${sqlString(c.name)} END`);
  const changed = `CASE WHEN row_number() OVER (ORDER BY ${order}) = 1 THEN '(first)' ELSE ${diffs.length ? `concat_ws(', ', ${diffs.join(', ')})` : "''"} END`;
  const list = base.columns.map((c) => q(c.name)).join(', ');
  const versions = `(SELECT ${list}, ${changed} AS ${q('_changed')} FROM ${q(flow.target)}
      WHERE ${model.keys.map((k, i) => `${q(k.name)} = CAST($${i + 1} AS ${k.type})`).join(' AND ')}) kh`;
  const withChanged = [...base.columns, { name: '_changed', type: d.types.text }];
  return {
    columns: [...withChanged, { name: TIES_COLUMN, type: d.types.int }],
    from: versionTiesSql(d, flow, model, versions, withChanged, order),
    params: values,
    orderBy: base.orderBy,
  };
}

/** A key's value as given, checked to be a value of the key column's type (the engine's own cast decides). */
async function keyValue(driver: Driver, column: ColumnInfo, text: string): Promise<string> {
  try {
    await driver.query(`SELECT CAST($1 AS ${column.type}) AS v`, [text]);
  } catch {
    throw new ScdError('USAGE', `--key ${column.name}=${text}: "${text}" is not a value of the key column "${column.name}", which is ${column.type}`, {
      fix: `give a ${column.type} value`,
    });
  }
  return text;
}

/** How many versions the key has (0: none; keyHistoryQuery reads them). */
export async function keyVersionCount(driver: Driver, query: RowQuery): Promise<number> {
  const rows = await driver.query(`SELECT count(*) AS n FROM ${query.from}`, query.params ?? []);
  return Number(rows[0]?.n ?? 0);
}

/** Every version of one key, oldest first, each with the columns that changed from the previous. */
export async function keyHistory(driver: Driver, flow: Flow, key: Record<string, string>): Promise<Array<Record<string, unknown>>> {
  return readRows(driver, await keyHistoryQuery(driver, flow, key));
}

/** Quarantined records, newest commit first; `raw` is the record as read (fix it, re-feed it). */
export async function quarantineQuery(driver: Driver, flow: Flow, commit?: number): Promise<RowQuery> {
  await modelOf(driver, flow);
  if (commit !== undefined) {
    const latest = await latestVersion(driver, flow);
    if (commit > latest)
      throw new ScdError('USAGE', `commit ${commit} is beyond the last commit (${latest ? `commits are 1..${latest}` : 'there is no commit yet'})`, {
        fix: latest ? `give a commit of 1..${latest} (\`scd log\` lists them)` : 'run `scd apply` first',
      });
  }
  const q = driver.dialect.quote;
  const names = storeNames(flow.target);
  const cols = (await driver.columns(names.quarantine)) ?? [];
  return {
    columns: cols.map((c) => (c.name === '__scd_commit' ? { ...c, name: 'commit' } : c)).map((c) => ({ ...c })),
    from: `(SELECT ${q('__scd_commit')} AS ${q('commit')}, file, line, reason, raw FROM ${q(names.quarantine)}) qq`,
    where: commit === undefined ? undefined : `${q('commit')} = CAST($1 AS INTEGER)`,
    params: commit === undefined ? [] : [commit],
    orderBy: [`${q('commit')} DESC`, 'file', 'line'],
  };
}
