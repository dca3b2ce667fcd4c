import type { ColumnInfo, Driver } from '../dialects/driver.js';
import { ScdError } from '../errors.js';
import type { Flow } from '../flow/flow.js';
import { readFlowRecord } from '../store/catalog.js';
import { storeNames } from '../store/names.js';
import { currentCondition } from '../store/target-columns.js';
import { type OutputOptions, type RowQuery, readRows, writeRows } from './output.js';
import { checkedWhere } from './where.js';

/** Which of the target's rows an export keeps (`scd export --current --where …`). */
export interface RowFilter {
  /** Only live versions: current and not deleted (an scd1 target's rows all are). */
  current?: boolean;
  /** A person's SQL boolean over the target's columns, checked like a flow expression (where.ts). */
  where?: string;
}

/** The target's columns, or a clear error when nothing was applied yet. */
export async function targetColumnsOf(driver: Driver, flow: Flow): Promise<ColumnInfo[]> {
  const names = storeNames(flow.target);
  const cols = (await readFlowRecord(driver, names)) ? await driver.columns(names.target) : undefined;
  if (!cols)
    throw new ScdError('NOT_APPLIED', `target "${flow.target}" does not exist in ${driver.location} yet`, {
      file: flow.origin,
      fix: 'run `scd apply` first (or check --db)',
    });
  return cols;
}

/** The target's rows, sorted by keys then start. */
export async function targetQuery(driver: Driver, flow: Flow): Promise<RowQuery> {
  const q = driver.dialect.quote;
  const columns = await targetColumnsOf(driver, flow);
  return {
    columns,
    from: q(flow.target),
    orderBy: [...flow.keys, ...(flow.storedAs === 'scd2' ? [flow.startAtColumn] : [])].map(q),
  };
}

export async function exportTarget(driver: Driver, flow: Flow, options: OutputOptions = {}): Promise<number> {
  return writeRows(driver, await targetQuery(driver, flow), options);
}

/** The target's rows as plain objects, in export order (NDJSON conventions). */
export async function readTarget(driver: Driver, flow: Flow): Promise<Array<Record<string, unknown>>> {
  return readRows(driver, await targetQuery(driver, flow));
}

/** The query narrowed to the rows the filter keeps; its conditions are ANDed to the query's own. */
export async function filtered(driver: Driver, flow: Flow, query: RowQuery, filter: RowFilter): Promise<RowQuery> {
  const conditions = query.where ? [`(${query.where})`] : [];
  if (filter.current) {
    const record = await readFlowRecord(driver, storeNames(flow.target));
    if (record) conditions.push(`(${currentCondition(flow, record.model, driver.dialect)})`);
  }
  if (filter.where !== undefined) conditions.push(await checkedWhere(driver, filter.where, query.columns));
  return conditions.length ? { ...query, where: conditions.join(' AND ') } : query;
}
