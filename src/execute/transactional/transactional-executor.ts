import { type Dialect, insertOrder } from '../../dialects/dialect.js';
import { flowRecordValues } from '../../store/catalog.js';
import { OP, OP_TRUNCATE } from '../../store/target-columns.js';
import type { CommitExecutor } from '../executor.js';
import { type StateChange, stateInsertSql } from '../state-change.js';
import type { TargetChange } from '../target-change.js';

/**
 * The executor of an engine with transactions (DuckDB, PostgreSQL): the whole commit is one
 * transaction (Driver.transaction), so its writes need no order for a crash's sake and no label,
 * and it reads its tables as they are. The target changes in up to three statements, each only
 * when it has rows: the removed rows deleted (by row id: PostgreSQL fetches them by ctid, DuckDB
 * joins on its row id column), the closes updated in place (an scd2 close changes two columns of
 * a row, not the row), the rest inserted.
 */
export const transactionalExecutor: CommitExecutor = {
  // The whole commit one transaction; a table keeps no earlier version scdkit reads (its own change feed does).
  guarantees: { transactions: true, versionedTables: false, labelledCommits: false },
  look: async () => undefined,
  begin: async () => ({ undone: [] }),
  beforeCreate: async () => {},
  pinReads: async (_driver, names) => names,
  targetWrites(d, change, sizes) {
    const w = rowIdWrites(d, change, sizes.added - sizes.closes);
    return [...(sizes.removed > sizes.closes ? [w.delete] : []), ...(sizes.closes > 0 && w.update ? [w.update] : []), ...(sizes.added > sizes.closes ? [w.insert] : [])];
  },
  // The recomputed keys' rows go, then their new rows come (the lock keeps the state as read).
  stateWrites: (d, change) => [...(change.empty ? [] : [forgetKeysSql(d, change)]), stateInsertSql(d, change)],
  // One transaction runs one statement at a time.
  async runWrites(driver, groups) {
    for (const sql of groups.flat()) await driver.run(sql);
  },
  // A new table takes the log's place.
  async replaceLog(driver, names, rewrite) {
    const q = driver.dialect.quote;
    const relogged = `${names.events}_rebuild`;
    await driver.run(`DROP TABLE IF EXISTS ${q(relogged)}`);
    await driver.run(`CREATE TABLE ${q(relogged)} AS\n${rewrite.select}`);
    await driver.run(`DROP TABLE ${q(names.events)}`);
    await driver.run(`ALTER TABLE ${q(relogged)} RENAME TO ${q(names.events)}`);
    return names;
  },
  // Made anew: its key columns may have changed.
  async emptyState(driver, names, create) {
    await driver.run(`DROP TABLE IF EXISTS ${driver.dialect.quote(names.state)}`);
    await driver.run(create);
  },
  // The folded keys' old events out (truncates stay: keys left unfolded still need them, and on
  // folded keys they change nothing), then each fold in.
  async foldLog(driver, fold) {
    const q = driver.dialect.quote;
    const { log, keys, keysTable, columns, folds, old, params } = fold;
    await driver.run(
      `DELETE FROM ${log} WHERE ${q(OP)} <> ${OP_TRUNCATE} AND ${old.column} < ${old.below}
         AND EXISTS (SELECT 1 FROM ${keysTable} k WHERE ${keys.map((k) => `k.${k} = ${log}.${k}`).join(' AND ')})`,
      params,
    );
    for (const select of folds) await driver.run(`INSERT INTO ${log} (${columns.join(', ')}) ${select}`);
  },
  async writeFlowRecord(driver, names, record, at) {
    const d = driver.dialect;
    await driver.run(`DELETE FROM ${d.quote(names.flows)} WHERE target = $1`, [names.target]);
    await driver.run(`INSERT INTO ${d.quote(names.flows)} VALUES ($1, $2, $3, CAST($4 AS ${d.types.timestamptz}))`, flowRecordValues(names, record, at));
  },
};

/** The delete of the recomputed keys' rows of the state. */
function forgetKeysSql(d: Dialect, change: StateChange): string {
  const q = d.quote;
  const { state, keys, recomputed, byRow } = change;
  // By row id where the keys carry it (a fetch by id, not a join of the whole state). One key
  // column: a plain IN (DuckDB decorrelates the EXISTS into a grouped join, slower on a large
  // state: docs/decisions/0058-no-correlated-exists-in-a-large-delete.md); keys of a recomputed key
  // are never null.
  if (byRow && d.fetchByRowId)
    return `DELETE FROM ${state} WHERE ${d.fetchByRowId(byRow.rowId, `SELECT k.${q(byRow.column)} FROM ${recomputed} k WHERE k.${q(byRow.column)} IS NOT NULL`)}`;
  if (keys.length === 1) return `DELETE FROM ${state} WHERE ${q(keys[0]!)} IN (SELECT k.${q(keys[0]!)} FROM ${recomputed} k)`;
  return `DELETE FROM ${state} WHERE EXISTS (SELECT 1 FROM ${recomputed} k WHERE ${keys.map((k) => `k.${q(k)} = ${state}.${q(k)}`).join(' AND ')})`;
}

/** The delete, the update of the closes and the insert of a change (each run only when it has rows); `inserted`: how many rows the insert adds, where counted. */
export function rowIdWrites(d: Dialect, change: TargetChange, inserted?: number): { delete: string; update?: string; insert: string } {
  const q = d.quote;
  const { target: T, identity: id, closing, removed, added, rowId, flags } = change;
  const list = change.columns.map(q).join(', ');
  const sameId = (a: string, b: string) => id.map((c) => `${a}.${q(c)} = ${b}.${q(c)}`).join(' AND ');
  const CLOSE = flags.close;
  const OF_ROW = flags.ofRow;
  // A removed row that a close replaces is updated in place, not deleted.
  const notClosed = `NOT EXISTS (SELECT 1 FROM ${added} a WHERE a.${q(CLOSE)} AND ${sameId('a', 'r')})`;
  return {
    // By row id, or where a target column hides it (plan/target.ts targetRowId) by identity: the
    // target's identity is unique, and a close keeps its row's identity.
    delete: rowId
      ? `DELETE FROM ${T} WHERE ${rowIdIn(d, rowId, `SELECT r.${q(flags.rowId)} FROM ${removed} r WHERE ${notClosed}`)}`
      : `DELETE FROM ${T} WHERE EXISTS (SELECT 1 FROM ${removed} r WHERE ${sameId('r', T)} AND ${notClosed})`,
    update: closing.length
      ? `UPDATE ${T} SET ${closing.map((c) => `${q(c)} = a.${q(c)}`).join(', ')}
         FROM ${added} a WHERE a.${q(CLOSE)} AND ${
           rowId
             ? `${T}.${rowId} = a.${q(OF_ROW)}${d.fetchByRowId ? ` AND ${d.fetchByRowId(`${T}.${rowId}`, `SELECT c.${q(OF_ROW)} FROM ${added} c WHERE c.${q(CLOSE)}`)}` : ''}`
             : sameId(T, 'a')
         }`
      : undefined,
    insert: `INSERT INTO ${T} (${list}) SELECT ${list} FROM ${added} a WHERE NOT a.${q(CLOSE)}${insertOrder(d, id, inserted)}`,
  };
}

/** `rowId` is one of the ids `subquery` gives: fetched by id where the dialect can (Dialect.fetchByRowId). */
function rowIdIn(d: Dialect, rowId: string, subquery: string): string {
  return d.fetchByRowId ? d.fetchByRowId(rowId, subquery) : `${rowId} IN (${subquery})`;
}
