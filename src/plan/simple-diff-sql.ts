import type { Dialect } from '../dialects/dialect.js';
import { INTERNAL_COLUMN_PREFIX } from '../files/source-keys.js';
import type { Flow } from '../flow/flow.js';
import { type StoreNames, TMP } from '../store/names.js';
import { currentCondition, OP, OP_UPSERT } from '../store/target-columns.js';
import { keyJoin, SIMPLE, SLOW } from './keys-sql.js';
import { type ColumnModel, seqParts } from './model.js';
import { rowIdOrNull, targetColumns, targetRowId } from './target.js';
import { liveStart, ROWID } from './walk-input-sql.js';
import { CURRENT, endPart, TOMBSTONE, versionsSelect } from './walk-sql.js';

/**
 * The diff of the SIMPLE keys (fast, one new event), without the walk: what the walk gives for a
 * live version L (or none) followed by one newer event e, compared with L directly.
 * - e upserts, no L, or tracked values differ: a new version from e (with ignoreNullUpdates, e's
 *   nulls take L's values);
 * - e upserts and tracked values are the same: L with e's values, if any value differs;
 * - e deletes, or changes tracked values: L closed at e's sequence (a close: updated in place);
 * - e deletes L: a tombstone version from e (dropped unless the flow keeps tombstones).
 * A delete without L changes nothing. One join of the new events with their live versions in the
 * target (TMP.simple); the removed and added rows (diff-sql.ts, with its flags) are SELECTs over
 * it, read through the views of the diff rather than copied. The paths property compares it with
 * the walk and the model.
 */
export function simpleDiffSql(
  flow: Flow,
  model: ColumnModel,
  d: Dialect,
  names: StoreNames,
  flags: DiffFlags,
): { create: string; preimages: string; removed: string; added: string } {
  const q = d.quote;
  const K = model.keys.map((k) => q(k.name));
  const S = seqParts(model).map(q);
  const E = model.seq.map((_, i) => q(endPart(i)));
  const I = (name: string) => q(`${INTERNAL_COLUMN_PREFIX}${name}`);
  const start = liveStart(flow, model, d);
  const eff = (name: string) => (flow.ignoreNullUpdates ? `coalesce(n.${q(name)}, p.${q(name)})` : `n.${q(name)}`);
  const P = model.payload.map((c) => c.name);
  const keyNames = new Set(model.keys.map((k) => k.name));
  const target = targetColumns(flow, model, d).map((c) => c.name);
  // L's columns beyond keys and payload (start, end, flags, surrogate key), for its removed row.
  const rest = target.filter((c) => !keyNames.has(c) && !P.includes(c));
  const changed = model.tracked.length ? model.tracked.map((t) => `p.${q(t)} IS DISTINCT FROM ${eff(t)}`).join(' OR ') : 'false';
  const differs = P.length ? P.map((c) => `p.${q(c)} IS DISTINCT FROM ${eff(c)}`).join(' OR ') : 'false';
  const has = `p.${K[0]} IS NOT NULL`;
  const up = `n.${q(OP)} = ${OP_UPSERT}`;
  // One join of the new events with the live versions. The change flags are computed once in the
  // join (d.computeOnce) and read by every pre-image column.
  const [u, h, c, f] = [I('up'), I('has'), I('chg'), I('dif')];
  // The rows whose L has a pre-image row: it is removed, and (scd2) not only closed.
  const preimageOf = `x.${h} AND ${flow.storedAs === 'scd2' ? `x.${u} AND NOT x.${c} AND x.${f}` : `(NOT x.${u} OR x.${c} OR x.${f})`}`;
  const joined = `SELECT ${[
    ...K.map((k) => `n.${k}`),
    ...model.seq.map((col, i) => `n.${q(col.name)} AS ${I(`ns${i}`)}`),
    ...start.map((x, i) => `${x} AS ${I(`ps${i}`)}`),
    `${up} AS ${u}`,
    `${has} AS ${h}`,
    `(${changed}) AS ${c}`,
    `(${differs}) AS ${f}`,
    `${rowIdOrNull(d, targetRowId(flow, model, d), 'p')} AS ${I('prow')}`,
    // Effective values differ from the event's own only with ignoreNullUpdates.
    ...(flow.ignoreNullUpdates ? P.map((col) => `${eff(col)} AS ${I(`f_${col}`)}`) : []),
    ...P.map((col) => `p.${q(col)} AS ${I(`p_${col}`)}`),
    ...P.map((col) => `n.${q(col)} AS ${I(`n_${col}`)}`),
    ...rest.map((col) => `p.${q(col)} AS ${I(`t_${col}`)}`),
  ].join(', ')}
  FROM ${q(TMP.newEvents)} n JOIN ${q(TMP.keys)} k ON ${keyJoin(model, d, 'n', 'k')}
  LEFT JOIN ${q(names.target)} p ON ${keyJoin(model, d, 'p', 'k')} AND ${currentCondition(flow, model, d, 'p.')}
  WHERE k.${q(SIMPLE)}${d.computeOnce}`;
  const create = d.scratch(
    TMP.simple,
    `SELECT ${[
      ...K.map((k) => `x.${k}`),
      ...model.seq.map((_, i) => `x.${I(`ns${i}`)}`),
      ...start.map((_, i) => `x.${I(`ps${i}`)}`),
      ...[u, h, c, f, I('prow')].map((col) => `x.${col}`),
      ...(flow.ignoreNullUpdates ? P.map((col) => `x.${I(`f_${col}`)}`) : []),
      // L's values are read only for its pre-image in the change feed (the rows a close or a new
      // version adds are stored by reference, store/feed.ts): null on every other row.
      ...P.map((col) => `CASE WHEN ${preimageOf} THEN x.${I(`p_${col}`)} END AS ${I(`l_${col}`)}`),
      ...P.map((col) => `x.${I(`n_${col}`)}`),
      ...rest.map((col) => `x.${I(`t_${col}`)}`),
    ].join(', ')}
  FROM (${joined}) x`,
  );
  const ns = model.seq.map((_, i) => I(`ns${i}`));
  const ps = model.seq.map((_, i) => I(`ps${i}`));
  const nullEnd = model.seq.map((c) => `CAST(NULL AS ${c.type})`);
  const [upd, updCur, ofRow, close] = [flags.update, flags.updateOfCurrent, flags.ofRow, flags.close].map(q);
  const row = (st: string[], end: string[], tomb: string, payload: string, isUpdate: string | boolean, isClose: boolean, where: string) =>
    `SELECT ${[
      ...K,
      ...st.map((x, i) => `${x} AS ${S[i]}`),
      ...end.map((x, i) => `${x} AS ${E[i]}`),
      `${tomb} AS ${q(TOMBSTONE)}`,
      ...P.map((c) => `${I(`${payload}_${c}`)} AS ${q(c)}`),
      `${isUpdate} AS ${upd}`,
      `${isUpdate} AS ${updCur}`,
      `${I('prow')} AS ${ofRow}`,
      `${isClose} AS ${close}`,
    ].join(', ')} FROM ${q(TMP.simple)} WHERE ${where}`;
  // A new version replaces L's row when the identity is the key alone (scd1).
  const eff_ = flow.ignoreNullUpdates ? 'f' : 'n';
  const v = [
    row(ns, nullEnd, 'false', eff_, flow.storedAs === 'scd1' ? h : false, false, `${u} AND (NOT ${h} OR ${c})`),
    row(ps, nullEnd, 'false', eff_, true, false, `${u} AND ${h} AND NOT ${c} AND ${f}`),
    row(ps, ns, 'false', 'l', true, flow.storedAs === 'scd2', `${h} AND (NOT ${u} OR ${c})`),
    row(ns, nullEnd, 'true', 'n', false, false, `${h} AND NOT ${u}`),
  ];
  // L's stored row, in TMP.stored's shape (row id, target columns, current, slow).
  const stored = target.map((col) => (keyNames.has(col) ? q(col) : P.includes(col) ? `${I(`l_${col}`)} AS ${q(col)}` : `${I(`t_${col}`)} AS ${q(col)}`));
  // The pre-images of the change feed: every removed L pairs with the row that replaces it, but
  // for a delete in scd1; a close (scd2) is stored as one row with its post-image (store/feed.ts).
  const removedWhere = `${h} AND (NOT ${u} OR ${c} OR ${f})`;
  return {
    create,
    preimages: `SELECT ${stored.join(', ')}, CASE WHEN ${u} THEN 'update_preimage' ELSE 'delete' END AS _change_type
     FROM ${q(TMP.simple)} WHERE ${removedWhere}${flow.storedAs === 'scd2' ? ` AND ${u} AND NOT ${c}` : ''}`,
    removed: `SELECT ${I('prow')} AS ${q(ROWID)}, ${stored.join(', ')}, true AS ${q(CURRENT)}, false AS ${q(SLOW)}
     FROM ${q(TMP.simple)} WHERE ${removedWhere}`,
    added: versionsSelect(flow, model, d, `(${v.join('\nUNION ALL\n')}) v`, [flags.update, flags.updateOfCurrent, flags.ofRow, flags.close]),
  };
}

/** Names of the flag columns of TMP.added (diff-sql.ts). */
export interface DiffFlags {
  update: string;
  updateOfCurrent: string;
  ofRow: string;
  close: string;
}
