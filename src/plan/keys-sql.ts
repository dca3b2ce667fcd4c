import { type Dialect, rowIdOf } from '../dialects/dialect.js';
import { INTERNAL_COLUMN_PREFIX } from '../files/source-keys.js';
import type { Flow } from '../flow/flow.js';
import { type StoreNames, TMP } from '../store/names.js';
import { OP, OP_TRUNCATE } from '../store/target-columns.js';
import { LIVE, lastPart, stateColumns } from './key-state.js';
import { type ColumnModel, greater } from './model.js';

/**
 * Cost that follows the batch, not the target: a per-key state (the sequence of the key's
 * last event, and whether it is live) tells, for every key of a batch, whether all its new events
 * come after everything already applied to it.
 * - Such a FAST key never reads the event log: its events cannot be there yet, and its walk starts
 *   from its live version in the target (one starting event) followed by the new events.
 * - A SLOW key (a late event, or a tombstone to reopen) has its whole history recomputed from the
 *   log; so does every key when a batch holds a truncate.
 * Both kinds go through the same walk (walk-sql.ts) and the same diff.
 */
export const SLOW = `${INTERNAL_COLUMN_PREFIX}slow`;
/** A fast key with exactly one new event: its rows come from one join, without the walk. */
export const SIMPLE = `${INTERNAL_COLUMN_PREFIX}simple`;
/** TMP.keys: the row of the key state a known key had (only where the dialect fetches by row id). */
export const STATE_ROW = `${INTERNAL_COLUMN_PREFIX}srow`;

/**
 * TMP.keys: the keys to recompute, each marked SLOW or not, with its last applied sequence.
 * `allSlow` (a truncate in the batch, or a rebuild): every key of the log and of the batch, all
 * slow; the last sequence is then the key's last event of the log and the batch, truncates aside
 * (one sequence part; null with several). One grouping gives both: a rebuild's key state comes
 * from it (rebuiltStateSql) instead of a second aggregate over the whole log.
 */
export function keysSql(flow: Flow, model: ColumnModel, d: Dialect, names: StoreNames, { allSlow }: { allSlow: boolean }): string {
  const q = d.quote;
  const K = model.keys.map((k) => q(k.name));
  if (allSlow) {
    const one = model.seq.length === 1;
    const seq = one ? `, ${q(model.seq[0]!.name)}` : '';
    const last = one ? `max(${q(model.seq[0]!.name)}) AS ${q(lastPart(0))}` : model.seq.map((s, i) => `CAST(NULL AS ${s.type}) AS ${q(lastPart(i))}`).join(', ');
    return d.scratch(
      TMP.keys,
      `SELECT ${K.join(', ')}, true AS ${q(SLOW)}, false AS ${q(SIMPLE)}, ${last} FROM (
  SELECT ${K.join(', ')}${seq} FROM ${q(names.events)} WHERE ${q(OP)} <> ${OP_TRUNCATE}
  UNION ALL SELECT ${K.join(', ')}${seq} FROM ${q(TMP.valid)} WHERE ${q(OP)} <> ${OP_TRUNCATE}) a
GROUP BY ${K.join(', ')}`,
    );
  }
  const on = model.keys.map((k) => `s.${q(k.name)} = v.${q(k.name)}`).join(' AND ');
  const last = model.seq.map((_, i) => `s.${q(lastPart(i))}`);
  // A key the state does not know is late when an event of it is not after the last truncate.
  const vseq = model.seq.map((c) => `v.${q(c.name)}`);
  const trunc = model.seq.map((_, i) => `t.${q(lastPart(i))}`);
  // Without applyAsTruncates the log holds no truncate (changing it needs a rebuild, which re-derives the log).
  const truncates = flow.applyAsTruncates !== undefined;
  const late = `(s.${K[0]} IS NOT NULL AND NOT ${greater(vseq, last)})${truncates ? ` OR (s.${K[0]} IS NULL AND t.${q(lastPart(0))} IS NOT NULL AND NOT ${greater(vseq, trunc)})` : ''}`;
  const reopen = flow.deletes === 'tombstone' ? ` OR (s.${K[0]} IS NOT NULL AND NOT s.${q(LIVE)})` : '';
  // An scd1 row does not store where its version started, and a surrogate key is made of that
  // start: such a flow recomputes its keys from the log (correct, not fast). So does a flow with
  // previousValues: a version's previous values come from the version before it (walk-sql.ts).
  const fromLog = (flow.storedAs === 'scd1' && flow.surrogateKey !== undefined) || flow.previousValues !== undefined;
  const slow = fromLog ? 'true' : `bool_or(${late}${reopen})`;
  // Where rows are fetched by id, the key's row of the state comes along: the executor forgets it by
  // that id instead of joining the whole state again (the lock and the transaction keep it in place).
  const stateRow = stateRowId(model, d);
  const row = d.fetchByRowId && stateRow ? [`s.${stateRow}`] : [];
  return d.scratch(
    TMP.keys,
    `SELECT ${K.map((k) => `v.${k}`).join(', ')}, ${slow} AS ${q(SLOW)}, (count(*) = 1 AND NOT ${slow}) AS ${q(SIMPLE)}, ${[
      ...last.map((l, i) => `${l} AS ${q(lastPart(i))}`),
      ...row.map((r) => `${r} AS ${q(STATE_ROW)}`),
    ].join(', ')}
FROM ${q(TMP.valid)} v LEFT JOIN ${q(names.state)} s ON ${on}${truncates ? ` LEFT JOIN ${lastTruncateSql(model, d, names)} t ON true` : ''}
GROUP BY ${[...K.map((k) => `v.${k}`), ...last, `s.${q(LIVE)}`, ...row].join(', ')}`,
  );
}

/** The key state's row id, unless a key column hides it (dialect.ts rowIdOf). */
export function stateRowId(model: ColumnModel, d: Dialect): string | undefined {
  return rowIdOf(
    d,
    stateColumns(model, d).map((c) => c.name),
  );
}

/** The log's last truncate, its sequence parts named like the key state's (no row without one). */
export function lastTruncateSql(model: ColumnModel, d: Dialect, names: StoreNames): string {
  const q = d.quote;
  return `(SELECT ${model.seq.map((c, i) => `${q(c.name)} AS ${q(lastPart(i))}`).join(', ')} FROM ${q(names.events)} WHERE ${q(OP)} = ${OP_TRUNCATE}
    ORDER BY ${model.seq.map((c) => `${q(c.name)} DESC`).join(', ')} LIMIT 1)`;
}

/** A join condition on the key columns of `a` and `b` (never null in a commit's scratch). */
export const keyJoin = (model: ColumnModel, d: Dialect, a: string, b: string) => model.keys.map((k) => `${a}.${d.quote(k.name)} = ${b}.${d.quote(k.name)}`).join(' AND ');
