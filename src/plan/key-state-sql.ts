import type { Dialect } from '../dialects/dialect.js';
import { firstOfEachSql } from '../dialects/first-of-each.js';
import { type StateChange, stateInsertSql } from '../execute/state-change.js';
import type { Flow } from '../flow/flow.js';
import { type StoreNames, TMP, written } from '../store/names.js';
import { OP, OP_UPSERT } from '../store/target-columns.js';
import { lastPart, stateColumns } from './key-state.js';
import { keyJoin, lastTruncateSql, SIMPLE, STATE_ROW, stateRowId } from './keys-sql.js';
import { type ColumnModel, seqParts } from './model.js';
import { LOG_VIEW } from './walk-input-sql.js';
import { CURRENT } from './walk-sql.js';

export interface StateOptions {
  /** The walk's input (TMP.events, or the log's view in a rebuild). */
  events?: string;
  /** The state was just created (a rebuild), so no key has a row to forget. */
  empty?: boolean;
  /** TMP.keys holds each known key's row of the state (STATE_ROW), which is forgotten by that id. */
  byRow?: boolean;
  /** Some key was walked (TMP.events and TMP.recomputed exist); otherwise every key is simple. */
  walked?: boolean;
  /** How many keys TMP.keys holds, where counted. */
  keyCount?: number;
}

/** The new state of the recomputed keys (last event's sequence, and whether a version is live), as its executor's input. */
export function stateChange(model: ColumnModel, d: Dialect, names: StoreNames, options: StateOptions = {}): StateChange {
  const { events = TMP.events, empty = false, byRow = false, walked = true } = options;
  const q = d.quote;
  const K = model.keys.map((k) => q(k.name));
  const S = seqParts(model).map(q);
  // Each key's last event: one sequence part is a plain max (hashed), several are ordered.
  const last =
    S.length === 1
      ? `SELECT ${K.join(', ')}, max(${S[0]}) AS ${S[0]} FROM ${q(events)} GROUP BY ${K.join(', ')}`
      : firstOfEachSql(d, {
          columns: [...K, ...S],
          names: [...model.keys.map((k) => k.name), ...seqParts(model)],
          from: q(events),
          partition: K,
          order: S.map((s) => `${s} DESC`),
        });
  const walkedKeys = `SELECT ${K.map((k) => `e.${k}`).join(', ')}, ${S.map((s) => `e.${s}`).join(', ')}, coalesce(c.live, false)
FROM (${last}) e
LEFT JOIN (SELECT ${K.join(', ')}, true AS live FROM ${q(TMP.recomputed)} WHERE ${q(CURRENT)}) c
  ON ${model.keys.map((k) => `c.${q(k.name)} = e.${q(k.name)}`).join(' AND ')}
UNION ALL
`;
  const rows = `${walked ? walkedKeys : ''}SELECT ${[...K.map((k) => `n.${k}`), ...model.seq.map((c) => `n.${q(c.name)}`)].join(', ')}, n.${q(OP)} = ${OP_UPSERT}
FROM ${q(TMP.newEvents)} n JOIN ${q(TMP.keys)} k ON ${keyJoin(model, d, 'n', 'k')} WHERE k.${q(SIMPLE)}`;
  // Where the keys carry their state row's id (keysSql), the executor may forget them by it.
  const stateRow = stateRowId(model, d);
  return {
    state: written(names, 'state', q),
    keys: model.keys.map((k) => k.name),
    columns: stateColumns(model, d).map((c) => c.name),
    recomputed: q(TMP.keys),
    rows,
    keyCount: options.keyCount,
    empty,
    byRow: byRow && d.fetchByRowId && stateRow ? { rowId: stateRow, column: STATE_ROW } : undefined,
  };
}

/**
 * A rebuild's key state, into the state it has just created, from TMP.keys (keysSql, allSlow):
 * a key's last event is its last logged one or the log's last truncate (the walk expands every
 * truncate to every key), and it is live when the rebuilt target has a current version of it.
 * Several sequence parts: stateChange's rows, which group the walk's input again.
 */
export function rebuiltStateSql(flow: Flow, model: ColumnModel, d: Dialect, names: StoreNames): string[] {
  if (model.seq.length !== 1) return [stateInsertSql(d, stateChange(model, d, names, { events: LOG_VIEW, empty: true }))];
  const q = d.quote;
  const K = model.keys.map((k) => q(k.name));
  const truncates = flow.applyAsTruncates !== undefined;
  const last = truncates ? `greatest(k.${q(lastPart(0))}, t.${q(lastPart(0))})` : `k.${q(lastPart(0))}`;
  return [
    `INSERT INTO ${written(names, 'state', q)} (${stateColumns(model, d)
      .map((c) => q(c.name))
      .join(', ')})
SELECT ${K.map((k) => `k.${k}`).join(', ')}, ${last}, coalesce(c.live, false)
FROM ${q(TMP.keys)} k
LEFT JOIN (SELECT ${K.join(', ')}, true AS live FROM ${q(TMP.recomputed)} WHERE ${q(CURRENT)}) c
  ON ${model.keys.map((k) => `c.${q(k.name)} = k.${q(k.name)}`).join(' AND ')}${
    truncates
      ? `
LEFT JOIN ${lastTruncateSql(model, d, names)} t ON true`
      : ''
  }`,
  ];
}
