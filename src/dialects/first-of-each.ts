import type { Dialect } from './dialect.js';

/** A query that keeps one row of each group: the first in `order` (any one where `order` is empty). */
export interface FirstOfEach {
  /** The SELECT list (expressions over `from`). */
  columns: string[];
  /** The output names of `columns`, in order: needed where the engine numbers the rows instead (no `DISTINCT ON`). */
  names?: string[];
  /** What follows FROM: a relation with its alias, joins, and a WHERE clause. */
  from: string;
  /** The expressions that make a group. */
  partition: string[];
  /** The order within a group (with DESC where wanted); empty: any row of the group. */
  order: string[];
}

/**
 * One row of each group, in the engine's form: `SELECT DISTINCT ON (…)` where it has it
 * (capabilities.distinctOn: DuckDB, PostgreSQL), otherwise the first row of a numbering of each
 * group (Spark), which needs the output names of the columns.
 */
export function firstOfEachSql(d: Dialect, q: FirstOfEach): string {
  if (d.capabilities.distinctOn)
    return `SELECT DISTINCT ON (${q.partition.join(', ')}) ${q.columns.join(', ')} FROM ${q.from}${q.order.length ? ` ORDER BY ${[...q.partition, ...q.order].join(', ')}` : ''}`;
  if (!q.names) throw new Error(`the ${d.name} dialect lacks distinctOn, and this query names no columns to number its rows by: give firstOfEachSql its names`);
  const rn = d.quote('__scd_rn');
  const order = q.order.length ? q.order : [q.partition[0]!];
  return `SELECT ${q.names.map(d.quote).join(', ')} FROM (SELECT ${q.columns.join(', ')}, row_number() OVER (PARTITION BY ${q.partition.join(', ')} ORDER BY ${order.join(', ')}) AS ${rn}
   FROM ${q.from}) x WHERE x.${rn} = 1`;
}
