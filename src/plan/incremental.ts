import { rowIdOf, type Dialect } from '../dialects/dialect.js';
import type { Flow } from '../flow/flow.js';
import { TMP, written, type StoreNames } from '../store/names.js';
import { DROP, logColumns, REASON } from './events-sql.js';
import { INTERNAL_PREFIX, seqParts, type ColumnModel } from './model.js';
import { currentCondition, HASH, OP, OP_TRUNCATE, OP_UPSERT, rowIdOrNull, targetColumns, targetRowId } from './target.js';
import { CURRENT, endPart, TOMB, versionsSelect } from './walk-sql.js';
import { lastPart, LIVE, stateColumns } from './key-state.js';
import { stateInsertSql, type StateChange } from '../execute/state-change.js';

/**
 * Cost that follows the batch (issue "performance"): a per-key state (the sequence of the key's
 * last event, and whether it is live) tells, for every key of a batch, whether all its new events
 * come after everything already applied to it.
 * - Such a FAST key never reads the event log: its events cannot be there yet, and its walk starts
 *   from its live version in the target (one starting event) followed by the new events.
 * - A SLOW key (a late event, or a tombstone to reopen) has its whole history recomputed from the
 *   log; so does every key when a batch holds a truncate.
 * Both kinds go through the same walk (walk-sql.ts) and the same diff.
 */
export const SLOW = `${INTERNAL_PREFIX}slow`;
/** A fast key with exactly one new event: its rows come from one join, without the walk. */
export const SIMPLE = `${INTERNAL_PREFIX}simple`;
export const ROWID = `${INTERNAL_PREFIX}rowid`;
/** TMP.keys: the row of the key state a known key had (only where the dialect fetches by row id). */
export const STATE_ROW = `${INTERNAL_PREFIX}srow`;

/** `a > b` over tuples of sequence parts, left to right. */
export function greater(a: string[], b: string[]): string {
  if (a.length === 1) return `${a[0]} > ${b[0]}`;
  return `(${a[0]} > ${b[0]} OR (${a[0]} = ${b[0]} AND ${greater(a.slice(1), b.slice(1))}))`;
}

const identity = (model: ColumnModel) => [...model.keys.map((k) => k.name), ...model.seq.map((s) => s.name), OP, HASH];

/**
 * Valid batch events, each once. Duplicates are found by their identity alone (a narrow
 * aggregate, which engines spill to disk) and only those are deduplicated row by row: a
 * DISTINCT ON over whole rows must hold every row's values in memory at once.
 */
export function validSql(model: ColumnModel, d: Dialect): { dups: string; valid: string; distinct: string } {
  const q = d.quote;
  const id = identity(model).map(q);
  const ok = `b.${q(REASON)} IS NULL AND NOT b.${q(DROP)}`;
  if (!d.capabilities.distinctOn) {
    // One row of each identity by a numbering (the rows of one identity are equal events).
    const rn = q(`${INTERNAL_PREFIX}rn`);
    const distinct = d.scratch(
      TMP.valid,
      `SELECT ${logColumns(model).map(q).join(', ')} FROM (SELECT ${logColumns(model).map((c) => `b.${q(c)}`).join(', ')},
  row_number() OVER (PARTITION BY ${id.map((c) => `b.${c}`).join(', ')} ORDER BY b.${id[0]}) AS ${rn} FROM ${q(TMP.batch)} b WHERE ${ok}) x WHERE x.${rn} = 1`,
    );
    return { distinct, dups: distinct, valid: distinct };
  }
  // Keys and sequences of valid events are never null; truncates have a null key.
  const same = identity(model)
    .map((c) => (model.keys.some((k) => k.name === c) ? `x.${q(c)} IS NOT DISTINCT FROM b.${q(c)}` : `x.${q(c)} = b.${q(c)}`))
    .join(' AND ');
  const cols = logColumns(model).map((c) => `b.${q(c)}`).join(', ');
  return {
    // Every row deduplicated at once (a small batch: one statement, no repeats table).
    distinct: d.scratch(TMP.valid, `SELECT DISTINCT ON (${id.map((c) => `b.${c}`).join(', ')}) ${cols} FROM ${q(TMP.batch)} b WHERE ${ok}`),
    dups: d.scratch(TMP.dups, `SELECT ${id.join(', ')} FROM ${q(TMP.batch)} b WHERE ${ok} GROUP BY ${id.join(', ')} HAVING count(*) > 1`),
    valid: d.scratch(TMP.valid, `SELECT ${cols} FROM ${q(TMP.batch)} b LEFT JOIN ${q(TMP.dups)} x ON ${same} WHERE ${ok} AND x.${q(model.seq[0]!.name)} IS NULL
UNION ALL
SELECT DISTINCT ON (${id.map((c) => `b.${c}`).join(', ')}) ${cols} FROM ${q(TMP.batch)} b JOIN ${q(TMP.dups)} x ON ${same} WHERE ${ok}`),
  };
}

/**
 * TMP.keys: the keys to recompute, each marked SLOW or not, with its last applied sequence.
 * `allSlow` (a truncate in the batch, or a rebuild): every key of the log and of the batch, all
 * slow; the last sequence is then the key's last event of the log and the batch, truncates aside
 * (one sequence part; null with several). One grouping gives both: a rebuild's key state comes
 * from it (rebuiltStateSql) instead of a second aggregate over the whole log.
 */
export function keysSql(flow: Flow, model: ColumnModel, d: Dialect, names: StoreNames, allSlow: boolean): string {
  const q = d.quote;
  const K = model.keys.map((k) => q(k.name));
  if (allSlow) {
    const one = model.seq.length === 1;
    const seq = one ? `, ${q(model.seq[0]!.name)}` : '';
    const last = one
      ? `max(${q(model.seq[0]!.name)}) AS ${q(lastPart(0))}`
      : model.seq.map((s, i) => `CAST(NULL AS ${s.type}) AS ${q(lastPart(i))}`).join(', ');
    return d.scratch(TMP.keys, `SELECT ${K.join(', ')}, true AS ${q(SLOW)}, false AS ${q(SIMPLE)}, ${last} FROM (
  SELECT ${K.join(', ')}${seq} FROM ${q(names.events)} WHERE ${q(OP)} <> ${OP_TRUNCATE}
  UNION ALL SELECT ${K.join(', ')}${seq} FROM ${q(TMP.valid)} WHERE ${q(OP)} <> ${OP_TRUNCATE}) a
GROUP BY ${K.join(', ')}`);
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
  return d.scratch(TMP.keys, `SELECT ${K.map((k) => `v.${k}`).join(', ')}, ${slow} AS ${q(SLOW)}, (count(*) = 1 AND NOT ${slow}) AS ${q(SIMPLE)}, ${[
    ...last.map((l, i) => `${l} AS ${q(lastPart(i))}`),
    ...row.map((r) => `${r} AS ${q(STATE_ROW)}`),
  ].join(', ')}
FROM ${q(TMP.valid)} v LEFT JOIN ${q(names.state)} s ON ${on}${truncates ? ` LEFT JOIN ${lastTruncateSql(model, d, names)} t ON true` : ''}
GROUP BY ${[...K.map((k) => `v.${k}`), ...last, `s.${q(LIVE)}`, ...row].join(', ')}`);
}

/** The key state's row id, unless a key column hides it (dialect.ts rowIdOf). */
function stateRowId(model: ColumnModel, d: Dialect): string | undefined {
  return rowIdOf(d, stateColumns(model, d).map((c) => c.name));
}

/** The log's last truncate, its sequence parts named like the key state's (no row without one). */
function lastTruncateSql(model: ColumnModel, d: Dialect, names: StoreNames): string {
  const q = d.quote;
  return `(SELECT ${model.seq.map((c, i) => `${q(c.name)} AS ${q(lastPart(i))}`).join(', ')} FROM ${q(names.events)} WHERE ${q(OP)} = ${OP_TRUNCATE}
    ORDER BY ${model.seq.map((c) => `${q(c.name)} DESC`).join(', ')} LIMIT 1)`;
}

const keyJoin = (model: ColumnModel, d: Dialect, a: string, b: string) =>
  model.keys.map((k) => `${a}.${d.quote(k.name)} = ${b}.${d.quote(k.name)}`).join(' AND ');

/** The log's events of the slow keys, before this commit's events are appended. */
export function slowLogSql(model: ColumnModel, d: Dialect, names: StoreNames): string {
  const q = d.quote;
  return d.scratch(TMP.slowLog, `SELECT ${logColumns(model).map((c) => `l.${q(c)}`).join(', ')}
FROM ${q(names.events)} l JOIN ${q(TMP.keys)} k ON ${keyJoin(model, d, 'l', 'k')} WHERE k.${q(SLOW)}`);
}

/**
 * Events new to the log: those of fast keys all are (they come after the key's last event);
 * those of slow keys unless the log holds them; truncates unless the log holds them.
 */
export function freshSql(model: ColumnModel, d: Dialect, names: StoreNames, truncates = true): string {
  const q = d.quote;
  // The outer alias is one no column may have: Spark reads `v.x` in a correlated subquery as the
  // field x of a column v of the inner table, where there is one.
  const v = q(`${INTERNAL_PREFIX}v`);
  const cols = logColumns(model).map((c) => `${v}.${q(c)}`).join(', ');
  // Plain equalities only (hashable on every engine): slow keys are never null, truncates have none.
  const same = (other: string, withKeys = true) =>
    identity(model)
      .filter((c) => withKeys || !model.keys.some((k) => k.name === c))
      .map((c) => `${other}.${q(c)} = ${v}.${q(c)}`)
      .join(' AND ');
  return d.scratch(TMP.fresh, `SELECT ${cols} FROM ${q(TMP.valid)} ${v} JOIN ${q(TMP.keys)} k ON ${keyJoin(model, d, v, 'k')} WHERE NOT k.${q(SLOW)}
UNION ALL
SELECT ${cols} FROM ${q(TMP.valid)} ${v} JOIN ${q(TMP.keys)} k ON ${keyJoin(model, d, v, 'k')}
  WHERE k.${q(SLOW)} AND NOT EXISTS (SELECT 1 FROM ${q(TMP.slowLog)} l WHERE ${same('l')})${
    truncates
      ? `
UNION ALL
SELECT ${cols} FROM ${q(TMP.valid)} ${v} WHERE ${v}.${q(OP)} = ${OP_TRUNCATE}
  AND NOT EXISTS (SELECT 1 FROM ${q(names.events)} l WHERE l.${q(OP)} = ${OP_TRUNCATE} AND ${same('l', false)})`
      : ''
  }`);
}

/**
 * Without truncates: the valid events the log already holds (of slow keys: TMP.slowLog) go, and
 * what is left is new (freshSql's result, without copying the rest). Keys are never null here.
 */
export function knownSql(model: ColumnModel, d: Dialect): string {
  const q = d.quote;
  const same = (v: string) => identity(model).map((c) => `l.${q(c)} = ${v}.${q(c)}`).join(' AND ');
  // By row id from a plain join: a correlated EXISTS is decorrelated by DuckDB into a join on
  // IS NOT DISTINCT FROM over a grouping of every valid event (0.39 s for 1M, against 0.1 s).
  // A source column that hides the row id (rowIdOf): by the events' identity, correlated.
  const rowId = rowIdOf(d, logColumns(model));
  return rowId
    ? `DELETE FROM ${q(TMP.valid)} WHERE ${rowId} IN (SELECT v.${rowId} FROM ${q(TMP.valid)} v JOIN ${q(TMP.slowLog)} l ON ${same('v')})`
    : `DELETE FROM ${q(TMP.valid)} WHERE EXISTS (SELECT 1 FROM ${q(TMP.slowLog)} l WHERE ${same(q(TMP.valid))})`;
}

/**
 * New events that tie: share key and sequence with a different event, new or already logged
 * (truncates, which have no key, tie with each other). The new events and the slow keys' logged
 * ones are each distinct (validSql, knownSql), and none is in both: a new event ties exactly when
 * its key and sequence hold more than one of them. A fast key has no logged event at a new
 * event's sequence, and a simple key's one new event ties with nothing.
 */
export function tiesSql(model: ColumnModel, d: Dialect, names: StoreNames, truncates = true): string {
  const q = d.quote;
  // An outer alias no column may have (freshSql).
  const n = q(`${INTERNAL_PREFIX}n`);
  const at = [...model.keys.map((k) => k.name), ...model.seq.map((s) => s.name)].map(q).join(', ');
  const sameSeq = (a: string, b: string) => model.seq.map((c) => `${a}.${q(c.name)} = ${b}.${q(c.name)}`).join(' AND ');
  // One aggregate over the new and the logged events of the keys that may tie.
  return `SELECT CAST(coalesce((SELECT sum(t.f) FROM (SELECT sum(x.f) AS f FROM (
       SELECT ${at}, 1 AS f FROM ${q(TMP.fresh)} WHERE ${q(OP)} <> ${OP_TRUNCATE}
       UNION ALL SELECT ${at}, 0 AS f FROM ${q(TMP.slowLog)}) x
     GROUP BY ${at} HAVING count(*) > 1) t), 0)
  ${
    truncates
      ? `+ (SELECT count(*) FROM ${q(TMP.fresh)} ${n} WHERE ${n}.${q(OP)} = ${OP_TRUNCATE} AND EXISTS (SELECT 1 FROM ${q(names.events)} t
     WHERE t.${q(OP)} = ${OP_TRUNCATE} AND ${sameSeq('t', n)} AND t.${q(HASH)} <> ${n}.${q(HASH)}))`
      : ''
  } AS ${d.types.int}) AS n`;
}

/**
 * TMP.prev: the stored rows the commit may change — every version of a slow key, the live
 * version of a fast key that is not simple — with their row ids (so removals never search the
 * target again). Simple keys read their live version in their own join (simpleDiffSql).
 */
export function prevSql(flow: Flow, model: ColumnModel, d: Dialect, names: StoreNames, columns: string[]): string {
  const q = d.quote;
  const current = currentCondition(flow, model, d, 't.');
  return d.scratch(TMP.prev, `SELECT ${rowIdOrNull(d, targetRowId(flow, model, d), 't')} AS ${q(ROWID)}, ${columns.map((c) => `t.${q(c)}`).join(', ')}, ${current} AS ${q(CURRENT)}, k.${q(SLOW)}
FROM ${q(names.target)} t JOIN ${q(TMP.keys)} k ON ${keyJoin(model, d, 't', 'k')}
WHERE NOT k.${q(SIMPLE)} AND (k.${q(SLOW)} OR (${current}))`);
}

/**
 * The sequence parts where a fast key's live version starts, from its stored row `p` (scd2) or
 * from the key state `k` (scd1 stores no start).
 */
function liveStart(flow: Flow, model: ColumnModel, d: Dialect): string[] {
  const q = d.quote;
  if (flow.storedAs !== 'scd2') return model.seq.map((_, i) => `k.${q(lastPart(i))}`);
  return model.seq.length === 1 ? [`p.${q(flow.startAtColumn)}`] : model.seq.map((c) => `(p.${q(flow.startAtColumn)}).${q(c.name)}`);
}

/**
 * Every truncate of the log and of this commit, once. The commit's own come from TMP.fresh: an
 * engine that reads the log as of the commit's start (Spark, Driver.pinReads) does not see them in
 * the log, and one that does sees each twice, which the UNION makes once. A rebuild has only the log.
 */
function truncatesSql(model: ColumnModel, d: Dialect, names: StoreNames, wholeLog: boolean): string {
  const q = d.quote;
  const cols = [...model.seq.map((c) => q(c.name)), q(OP), q(HASH)].join(', ');
  const logged = `SELECT ${cols} FROM ${q(names.events)} WHERE ${q(OP)} = ${OP_TRUNCATE}`;
  return wholeLog ? logged : `${logged} UNION SELECT ${cols} FROM ${q(TMP.fresh)} WHERE ${q(OP)} = ${OP_TRUNCATE}`;
}

/** The walk's input when every key is recomputed from the log (a view, not a copy). */
export const LOG_VIEW = '_scd_log_view';

/** TMP.events: the walk's input, per key, truncates expanded to every slow key. */
export function eventsSql(flow: Flow, model: ColumnModel, d: Dialect, names: StoreNames, fastKeys = true, wholeLog = false): string {
  const q = d.quote;
  const K = model.keys.map((k) => q(k.name));
  const S = seqParts(model).map(q);
  const P = model.payload.map((p) => q(p.name));
  const seqAs = (alias: string) => model.seq.map((c, i) => `${alias}.${q(c.name)} AS ${S[i]}`);
  const row = (alias: string) => [...K.map((c) => `${alias}.${c}`), ...seqAs(alias), `${alias}.${q(OP)}`, ...P.map((c) => `${alias}.${c}`), `${alias}.${q(HASH)}`].join(', ');
  const nullPayload = model.payload.map((p) => `CAST(NULL AS ${p.type})`);
  const start = liveStart(flow, model, d);
  const parts = [
    // Every key slow (rebuild): the log itself, not a copy of it.
    wholeLog ? `SELECT ${row('l')} FROM ${q(names.events)} l WHERE l.${q(OP)} <> ${OP_TRUNCATE}` : `SELECT ${row('l')} FROM ${q(TMP.slowLog)} l`,
    `SELECT ${row('n')} FROM ${q(TMP.fresh)} n JOIN ${q(TMP.keys)} k ON ${keyJoin(model, d, 'n', 'k')} WHERE n.${q(OP)} <> ${OP_TRUNCATE} AND NOT k.${q(SIMPLE)}`,
  ];
  if (flow.applyAsTruncates !== undefined)
    parts.push(`SELECT ${K.map((c) => `k.${c}`).join(', ')}, ${model.seq.map((c, i) => `t.${q(c.name)} AS ${S[i]}`).join(', ')}, t.${q(OP)}, ${[...nullPayload, `t.${q(HASH)}`].join(', ')}
  FROM ${q(TMP.keys)} k CROSS JOIN (${truncatesSql(model, d, names, wholeLog)}) t WHERE k.${q(SLOW)}`);
  // A fast key starts from its live version, as one upsert at that version's start.
  if (fastKeys)
    parts.push(`SELECT ${K.map((c) => `p.${c}`).join(', ')}, ${start.map((s, i) => `${s} AS ${S[i]}`).join(', ')}, ${OP_UPSERT}, ${P.map((c) => `p.${c}`).join(', ')}${P.length ? ', ' : ''}CAST(0 AS ${d.types.hash})
  FROM ${q(TMP.prev)} p JOIN ${q(TMP.keys)} k ON ${keyJoin(model, d, 'p', 'k')} WHERE NOT p.${q(SLOW)} AND p.${q(CURRENT)} AND NOT k.${q(SIMPLE)}`);
  // Every key slow: a view (the walk, the tie count and the key state read the log through it).
  return wholeLog
    ? d.scratch(LOG_VIEW, parts.join('\nUNION ALL\n'), false)
    : d.scratch(TMP.events, parts.join('\nUNION ALL\n'));
}

export interface StateOptions {
  /** The walk's input (TMP.events, or the log's view in a rebuild). */
  events?: string;
  /** The state was just created (a rebuild), so no key has a row to forget. */
  empty?: boolean;
  /** TMP.keys holds each known key's row of the state (STATE_ROW), which is forgotten by that id. */
  byRow?: boolean;
  /** Some key was walked (TMP.events and TMP.next exist); otherwise every key is simple. */
  walked?: boolean;
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
      : d.capabilities.distinctOn
      ? `SELECT DISTINCT ON (${K.join(', ')}) ${[...K, ...S].join(', ')} FROM ${q(events)} ORDER BY ${[...K, ...S.map((s) => `${s} DESC`)].join(', ')}`
      : `SELECT ${[...K, ...S].join(', ')} FROM (SELECT ${[...K, ...S].join(', ')}, row_number() OVER (PARTITION BY ${K.join(', ')} ORDER BY ${S.map((s) => `${s} DESC`).join(', ')}) AS ${q(`${INTERNAL_PREFIX}rn`)}
   FROM ${q(events)}) x WHERE x.${q(`${INTERNAL_PREFIX}rn`)} = 1`;
  const walkedKeys = `SELECT ${K.map((k) => `e.${k}`).join(', ')}, ${S.map((s) => `e.${s}`).join(', ')}, coalesce(c.live, false)
FROM (${last}) e
LEFT JOIN (SELECT ${K.join(', ')}, true AS live FROM ${q(TMP.next)} WHERE ${q(CURRENT)}) c
  ON ${model.keys.map((k) => `c.${q(k.name)} = e.${q(k.name)}`).join(' AND ')}
UNION ALL
`;
  const rows = `${walked ? walkedKeys : ''}SELECT ${[...K.map((k) => `n.${k}`), ...model.seq.map((c) => `n.${q(c.name)}`)].join(', ')}, n.${q(OP)} = ${OP_UPSERT}
FROM ${q(TMP.fresh)} n JOIN ${q(TMP.keys)} k ON ${keyJoin(model, d, 'n', 'k')} WHERE k.${q(SIMPLE)}`;
  // Where the keys carry their state row's id (keysSql), the executor may forget them by it.
  const stateRow = stateRowId(model, d);
  return {
    state: written(names, 'state', q),
    keys: model.keys.map((k) => k.name),
    columns: stateColumns(model, d).map((c) => c.name),
    recomputed: q(TMP.keys),
    rows,
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
  if (model.seq.length !== 1) return [stateInsertSql(d.quote, stateChange(model, d, names, { events: LOG_VIEW, empty: true }))];
  const q = d.quote;
  const K = model.keys.map((k) => q(k.name));
  const truncates = flow.applyAsTruncates !== undefined;
  const last = truncates ? `greatest(k.${q(lastPart(0))}, t.${q(lastPart(0))})` : `k.${q(lastPart(0))}`;
  return [
    `INSERT INTO ${written(names, 'state', q)} (${stateColumns(model, d).map((c) => q(c.name)).join(', ')})
SELECT ${K.map((k) => `k.${k}`).join(', ')}, ${last}, coalesce(c.live, false)
FROM ${q(TMP.keys)} k
LEFT JOIN (SELECT ${K.join(', ')}, true AS live FROM ${q(TMP.next)} WHERE ${q(CURRENT)}) c
  ON ${model.keys.map((k) => `c.${q(k.name)} = k.${q(k.name)}`).join(' AND ')}${
    truncates ? `
LEFT JOIN ${lastTruncateSql(model, d, names)} t ON true` : ''
  }`,
  ];
}

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
export function simpleDiffSql(flow: Flow, model: ColumnModel, d: Dialect, names: StoreNames, flags: DiffFlags): { create: string; preimages: string; removed: string; added: string } {
  const q = d.quote;
  const K = model.keys.map((k) => q(k.name));
  const S = seqParts(model).map(q);
  const E = model.seq.map((_, i) => q(endPart(i)));
  const I = (name: string) => q(`${INTERNAL_PREFIX}${name}`);
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
  FROM ${q(TMP.fresh)} n JOIN ${q(TMP.keys)} k ON ${keyJoin(model, d, 'n', 'k')}
  LEFT JOIN ${q(names.target)} p ON ${keyJoin(model, d, 'p', 'k')} AND ${currentCondition(flow, model, d, 'p.')}
  WHERE k.${q(SIMPLE)}${d.computeOnce}`;
  const create = d.scratch(TMP.simple, `SELECT ${[
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
  FROM (${joined}) x`);
  const ns = model.seq.map((_, i) => I(`ns${i}`));
  const ps = model.seq.map((_, i) => I(`ps${i}`));
  const nullEnd = model.seq.map((c) => `CAST(NULL AS ${c.type})`);
  const [upd, updCur, ofRow, close] = [flags.update, flags.updateOfCurrent, flags.ofRow, flags.close].map(q);
  const row = (st: string[], end: string[], tomb: string, payload: string, isUpdate: string | boolean, isClose: boolean, where: string) =>
    `SELECT ${[
      ...K,
      ...st.map((x, i) => `${x} AS ${S[i]}`),
      ...end.map((x, i) => `${x} AS ${E[i]}`),
      `${tomb} AS ${q(TOMB)}`,
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
  // L's stored row, in TMP.prev's shape (row id, target columns, current, slow).
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
