import type { Dialect } from '../dialects/dialect.js';
import type { Flow } from '../flow/flow.js';
import { TMP, type StoreNames } from '../store/names.js';
import type { ColumnModel } from './model.js';
import { identityColumns, targetColumns } from './target.js';
import { ROWID } from './incremental.js';
import { CURRENT } from './walk-sql.js';

/**
 * Compare the recomputed rows (TMP.next) with the stored rows they may replace (TMP.prev),
 * and write only the rows that really change, with their change-feed records (SPEC §5).
 */
export function diffSql(flow: Flow, model: ColumnModel, d: Dialect, names: StoreNames): { statements: string[]; counts: string } {
  const q = d.quote;
  const cols = targetColumns(flow, model, d).map((c) => c.name);
  const id = identityColumns(flow, model);
  // The identity (never null) as plain equalities first, so that every engine can hash the join.
  const same = (a: string, b: string) =>
    [...id.map((c) => `${a}.${q(c)} = ${b}.${q(c)}`), ...cols.filter((c) => !id.includes(c)).map((c) => `${a}.${q(c)} IS NOT DISTINCT FROM ${b}.${q(c)}`)].join(' AND ');
  const sameId = (a: string, b: string) => id.map((c) => `${a}.${q(c)} = ${b}.${q(c)}`).join(' AND ');
  const list = cols.map(q).join(', ');
  const ts = `CAST($2 AS ${d.types.timestamptz})`;
  const ver = `CAST($1 AS ${d.types.int})`;
  return {
    statements: [
      `CREATE TEMP TABLE ${q(TMP.removed)} AS SELECT * FROM ${q(TMP.prev)} p
       WHERE NOT EXISTS (SELECT 1 FROM ${q(TMP.next)} n WHERE ${same('n', 'p')})`,
      `CREATE TEMP TABLE ${q(TMP.added)} AS SELECT * FROM ${q(TMP.next)} n
       WHERE NOT EXISTS (SELECT 1 FROM ${q(TMP.prev)} p WHERE ${same('n', 'p')})`,
      `INSERT INTO ${q(names.changes)} (${list}, _change_type, _commit_version, _commit_timestamp)
       SELECT ${list}, CASE WHEN EXISTS (SELECT 1 FROM ${q(TMP.added)} a WHERE ${sameId('a', 'r')}) THEN 'update_preimage' ELSE 'delete' END, ${ver}, ${ts}
       FROM ${q(TMP.removed)} r
       UNION ALL
       SELECT ${list}, CASE WHEN EXISTS (SELECT 1 FROM ${q(TMP.removed)} r WHERE ${sameId('a', 'r')}) THEN 'update_postimage' ELSE 'insert' END, ${ver}, ${ts}
       FROM ${q(TMP.added)} a`,
      `DELETE FROM ${q(names.target)} WHERE ${d.rowId} IN (SELECT ${q(ROWID)} FROM ${q(TMP.removed)})`,
      `INSERT INTO ${q(names.target)} (${list}) SELECT ${list} FROM ${q(TMP.added)}`,
    ],
    counts: `SELECT
      (SELECT CAST(count(*) AS ${d.types.int}) FROM ${q(TMP.added)} a WHERE NOT EXISTS (SELECT 1 FROM ${q(TMP.removed)} r WHERE ${sameId('a', 'r')})) AS inserted,
      (SELECT CAST(count(*) AS ${d.types.int}) FROM ${q(TMP.added)} a WHERE EXISTS (SELECT 1 FROM ${q(TMP.removed)} r WHERE ${sameId('a', 'r')})) AS updated,
      (SELECT CAST(count(*) AS ${d.types.int}) FROM ${q(TMP.removed)} r WHERE NOT EXISTS (SELECT 1 FROM ${q(TMP.added)} a WHERE ${sameId('a', 'r')})) AS deleted,
      (SELECT CAST(count(*) AS ${d.types.int}) FROM ${q(TMP.removed)} r WHERE r.${q(CURRENT)} AND NOT EXISTS (SELECT 1 FROM ${q(TMP.added)} a WHERE ${sameId('a', 'r')} AND a.${q(CURRENT)})) AS closed`,
  };
}
