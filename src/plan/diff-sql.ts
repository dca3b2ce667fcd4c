import type { Dialect } from '../dialects/dialect.js';
import type { TargetChange } from '../execute/target-change.js';
import { INTERNAL_COLUMN_PREFIX } from '../files/source-keys.js';
import type { Flow } from '../flow/flow.js';
import { BY_REFERENCE, CLOSE_TYPE, keptByReference, PRE_CURRENT, PRE_END } from '../store/feed.js';
import { type StoreNames, TMP, written } from '../store/names.js';
import { currentCondition, sentinelValue } from '../store/target-columns.js';
import { SLOW } from './keys-sql.js';
import type { ColumnModel } from './model.js';
import { simpleDiffSql } from './simple-diff-sql.js';
import { flagIsCurrent, identityColumns, targetColumns, targetRowId } from './target.js';
import { ROWID } from './walk-input-sql.js';
import { CURRENT } from './walk-sql.js';

/**
 * Compare the recomputed rows (TMP.recomputed) with the stored rows they may replace (TMP.stored),
 * and write only the rows that really change, with their change-feed records (SEMANTICS §5).
 */
export interface DiffOptions {
  /** Some keys are simple (keys-sql.ts SIMPLE): their rows come from one join, not the walk. */
  simpleKeys?: boolean;
  /** Some keys were walked: their recomputed rows are `recomputed`, their stored ones TMP.stored. */
  walkedKeys?: boolean;
  /** The walked keys' recomputed rows (TMP.recomputed, or TMP.changed in a rebuild). */
  recomputed?: string;
  /** TMP.stored has rows (some walked key has stored rows). */
  stored?: boolean;
}

export function diffSql(flow: Flow, model: ColumnModel, d: Dialect, names: StoreNames, options: DiffOptions = {}): DiffSql {
  const { simpleKeys = true, walkedKeys = true, recomputed = TMP.recomputed, stored = true } = options;
  const q = d.quote;
  const target = targetColumns(flow, model, d);
  const cols = target.map((c) => c.name);
  const id = identityColumns(flow, model);
  // The identity (never null) as plain equalities first, so that every engine can hash the join.
  const same = (a: string, b: string) =>
    [...id.map((c) => `${a}.${q(c)} = ${b}.${q(c)}`), ...cols.filter((c) => !id.includes(c)).map((c) => `${a}.${q(c)} IS NOT DISTINCT FROM ${b}.${q(c)}`)].join(' AND ');
  const sameId = (a: string, b: string) => id.map((c) => `${a}.${q(c)} = ${b}.${q(c)}`).join(' AND ');
  const list = cols.map(q).join(', ');
  const ts = `CAST($2 AS ${d.types.timestamptz})`;
  const ver = `CAST($1 AS ${d.types.int})`;
  // Identity is unique among stored rows and among recomputed rows, so a removed row has at most
  // one added row of its identity: the update pairs are found once, as flags on the added rows.
  const upd = q(UPDATE);
  // Columns a close changes; a pair that differs in nothing else is a close.
  const closing = flow.storedAs === 'scd2' ? [flow.endAtColumn, ...(flow.isCurrentColumn ? [flow.isCurrentColumn] : [])] : [];
  const others = cols.filter((c) => !id.includes(c) && !closing.includes(c));
  const closeOnly = closing.length ? `(r.${q(id[0]!)} IS NOT NULL${others.map((c) => ` AND n.${q(c)} IS NOT DISTINCT FROM r.${q(c)}`).join('')})` : 'false';
  const updCur = q(UPDATE_OF_CURRENT);
  // scd2 feeds store closes as one row (store/feed.ts).
  const pre = closing.length > 0;
  const endType = target.find((c) => c.name === flow.endAtColumn)?.type ?? d.types.text;
  const noPre = pre ? `, CAST(NULL AS ${endType}), CAST(NULL AS ${d.types.bool})` : '';
  const postType = `CASE ${pre ? `WHEN a.${q(CLOSE)} THEN '${CLOSE_TYPE}' ` : ''}WHEN a.${upd} THEN 'update_postimage' ELSE 'insert' END`;
  // The end of a live version.
  const liveEnd = flow.endSentinel === undefined ? `CAST(NULL AS ${endType})` : sentinelValue(flow, model, d);
  const addedW = stored ? WALKED.added : WALKED_ADDED_VIEW;
  // An added row is stored by reference (store/feed.ts): its identity and what a close changes.
  const kept = keptByReference(id, closing);
  const refList = target.map((c) => (kept.has(c.name) ? `a.${q(c.name)}` : `CAST(NULL AS ${c.type})`)).join(', ');
  const noRef = `, CAST(NULL AS ${d.types.bool})`;
  // The target as written (reads of it, in the scratch, may be of its state at the commit's start).
  const T = written(names, 'target', q);
  const rowId = targetRowId(flow, model, d);
  const simple = simpleKeys ? simpleDiffSql(flow, model, d, names, { update: UPDATE, updateOfCurrent: UPDATE_OF_CURRENT, ofRow: OF_ROW, close: CLOSE }) : undefined;
  // The target's change reads the removed and added rows (TMP.removed and TMP.added, or their SELECTs).
  const change = (removed: string, added: string): TargetChange => ({
    target: T,
    columns: cols,
    identity: id,
    closing,
    removed,
    added,
    rowId,
    flags: { rowId: ROWID, close: CLOSE, ofRow: OF_ROW },
  });
  // The commit's counts (docs/SEMANTICS.md "§5 What a commit's counts count"), by identity (key
  // and start): an added row without a removed twin is a version added; a removed row without an
  // added twin, a version removed; a twin pair, a version changed. A version closed has an end
  // after the commit and had none before (it was live, or it did not exist): not a tombstone.
  const hasEnd =
    flow.storedAs === 'scd2'
      ? `NOT ${q(CURRENT)}${flow.deletes === 'tombstone' ? ` AND NOT coalesce(${q(flow.deletedColumn)}, false)` : ''} AND (NOT ${upd} OR ${updCur})`
      : 'false';
  const keyList = model.keys.map((k) => q(k.name)).join(', ');
  const counts = (removed: string, added: string) =>
    `SELECT i.added - i.updated AS versions_added, i.updated AS versions_changed, r.removed - i.updated AS versions_removed, i.closed AS versions_closed,
      (SELECT CAST(count(*) AS ${d.types.int}) FROM (SELECT ${keyList} FROM ${removed} kr UNION SELECT ${keyList} FROM ${added} ka) k) AS keys_changed,
      i.added, i.closes, r.removed FROM
      (SELECT CAST(count(*) FILTER (WHERE ${upd}) AS ${d.types.int}) AS updated, CAST(count(*) FILTER (WHERE ${hasEnd}) AS ${d.types.int}) AS closed,
        CAST(count(*) AS ${d.types.int}) AS added, CAST(count(*) FILTER (WHERE ${q(CLOSE)}) AS ${d.types.int}) AS closes FROM ${added} a) i,
      (SELECT CAST(count(*) AS ${d.types.int}) AS removed FROM ${removed} r) r`;
  if (!walkedKeys) {
    if (!simple) throw new Error('diffSql: neither walked nor simple keys');
    // Every key is simple: its one join is the whole diff (no walk, no stored rows compared).
    return {
      prepare: [simple.create],
      feed: `INSERT INTO ${q(names.changes)} (${list}, _change_type, _commit_version, _commit_timestamp${pre ? `, ${q(PRE_END)}, ${q(PRE_CURRENT)}` : ''}, ${q(BY_REFERENCE)})
       SELECT ${cols.map((c) => `r.${q(c)}`).join(', ')}, r._change_type, ${ver}, ${ts}${noPre}${noRef} FROM (${simple.preimages}) r
       UNION ALL
       SELECT ${refList}, ${postType}, ${ver}, ${ts}${
         pre ? `, CASE WHEN a.${q(CLOSE)} THEN ${liveEnd} END, ${flow.isCurrentColumn ? `CASE WHEN a.${q(CLOSE)} THEN true END` : `CAST(NULL AS ${d.types.bool})`}` : ''
       }, true FROM (${simple.added}) a`,
      counts: counts(`(${simple.removed})`, `(${simple.added})`),
      change: change(`(${simple.removed})`, `(${simple.added})`),
    };
  }
  return {
    prepare: [
      // The walked keys by anti-joins; the simple keys (simple-diff-sql.ts) directly. TMP.removed and
      // TMP.added are views: the walked keys' rows (tables) and the simple keys' (SELECTs over
      // their one join), so a batch of simple keys copies none of its rows before writing them.
      // Anti-joins as outer joins (identity is unique on both sides): a plain hash join on every
      // engine, where a correlated NOT EXISTS over nullable columns is decorrelated expensively.
      // No stored row of a walked key (new keys only): nothing is removed, and every walked row is
      // added as it is (a view over the walk, not a copy of it).
      stored
        ? d.scratch(
            WALKED.removed,
            `SELECT p.* FROM ${q(TMP.stored)} p LEFT JOIN ${q(recomputed)} n ON ${same('n', 'p')}
       WHERE n.${q(id[0]!)} IS NULL`,
          )
        : d.scratch(WALKED.removed, `SELECT p.* FROM ${q(TMP.stored)} p WHERE false`),
      d.scratch(
        addedW,
        `SELECT n.*, r.${q(id[0]!)} IS NOT NULL AS ${upd}, coalesce(r.${q(CURRENT)}, false) AS ${updCur},
         r.${q(ROWID)} AS ${q(OF_ROW)}, ${closeOnly} AS ${q(CLOSE)}
       FROM ${q(recomputed)} n${stored ? ` LEFT JOIN ${q(TMP.stored)} p ON ${same('n', 'p')}` : ''} LEFT JOIN ${q(WALKED.removed)} r ON ${sameId('n', 'r')}${
         stored ? `\n       WHERE p.${q(id[0]!)} IS NULL` : ''
       }`,
        stored,
      ),
      ...(simple ? [simple.create] : []),
      d.scratch(TMP.removed, `SELECT * FROM ${q(WALKED.removed)}${simple ? `\n       UNION ALL ${simple.removed}` : ''}`, false),
      d.scratch(TMP.added, `SELECT * FROM ${q(addedW)}${simple ? `\n       UNION ALL ${simple.added}` : ''}`, false),
    ],
    // A close is one row: the post-image with the pre-image's end and is-current (store/feed.ts).
    feed: `INSERT INTO ${q(names.changes)} (${list}, _change_type, _commit_version, _commit_timestamp${pre ? `, ${q(PRE_END)}, ${q(PRE_CURRENT)}` : ''}, ${q(BY_REFERENCE)})
       SELECT ${cols.map((c) => `r.${q(c)}`).join(', ')}, CASE WHEN a.${q(id[0]!)} IS NOT NULL THEN 'update_preimage' ELSE 'delete' END, ${ver}, ${ts}${noPre}${noRef}
       FROM ${q(WALKED.removed)} r LEFT JOIN ${q(addedW)} a ON a.${upd} AND ${sameId('a', 'r')}${pre ? ` WHERE a.${q(CLOSE)} IS NOT TRUE` : ''}
       UNION ALL
       SELECT ${refList}, ${postType}, ${ver}, ${ts}${
         pre
           ? `, CASE WHEN a.${q(CLOSE)} THEN r.${q(flow.endAtColumn)} END, ${flow.isCurrentColumn ? `CASE WHEN a.${q(CLOSE)} THEN ${flagIsCurrent(flow, `r.${q(flow.isCurrentColumn)}`)} END` : `CAST(NULL AS ${d.types.bool})`}`
           : ''
       }, true
       FROM ${q(addedW)} a${pre ? ` LEFT JOIN ${q(WALKED.removed)} r ON ${sameId('a', 'r')}` : ''}${
         // Simple keys: each row knows its pair (L and what replaces it), and L was live.
         simple
           ? `
       UNION ALL
       SELECT ${cols.map((c) => `r.${q(c)}`).join(', ')}, r._change_type, ${ver}, ${ts}${noPre}${noRef} FROM (${simple.preimages}) r
       UNION ALL
       SELECT ${refList}, ${postType}, ${ver}, ${ts}${
         pre ? `, CASE WHEN a.${q(CLOSE)} THEN ${liveEnd} END, ${flow.isCurrentColumn ? `CASE WHEN a.${q(CLOSE)} THEN true END` : `CAST(NULL AS ${d.types.bool})`}` : ''
       }, true FROM (${simple.added}) a`
           : ''
       }`,
    counts: counts(q(TMP.removed), q(TMP.added)),
    change: change(q(TMP.removed), q(TMP.added)),
  };
}

/** A diff: the statements that find its rows, the change feed's insert, its counts, and the target's change as data. */
export interface DiffSql {
  prepare: string[];
  feed: string;
  /** One row: the commit's counts (versions_added, versions_changed, versions_removed, versions_closed, keys_changed), and added, closes, removed. */
  counts: string;
  /** What changes in the target: its executor writes it (execute/executor.ts). */
  change: TargetChange;
}

/**
 * When every key is recomputed (a rebuild), most rows come out as they were: instead of copying the
 * target into TMP.stored and comparing every column of every row twice, the rows are paired on their
 * identity and a hash of all their columns (narrow rows, one join). Only the rows left unpaired go
 * on to the exact comparison of diffSql: the stored ones as TMP.stored, the recomputed ones as
 * TMP.changed (diffSql's `recomputed`). A row whose hash matches its stored twin's is taken as
 * unchanged: the payload hashes of the event log already rest on the same 64-bit hash
 * (fixed-width hashes, as for deduplication).
 */
export function wholeDiffSql(flow: Flow, model: ColumnModel, d: Dialect, names: StoreNames): string[] {
  const q = d.quote;
  const cols = targetColumns(flow, model, d).map((c) => c.name);
  const id = identityColumns(flow, model);
  const current = currentCondition(flow, model, d, 't.');
  const rowId = targetRowId(flow, model, d);
  // A target column hides the row id (targetRowId): no pairing, every row compared exactly.
  if (!rowId)
    return [
      d.scratch(
        TMP.stored,
        `     SELECT CAST(NULL AS ${d.types.bigint}) AS ${q(ROWID)}, ${cols.map((c) => `t.${q(c)}`).join(', ')}, ${current} AS ${q(CURRENT)}, true AS ${q(SLOW)}
     FROM ${q(names.target)} t`,
      ),
      d.scratch(TMP.changed, `SELECT * FROM ${q(TMP.recomputed)}`),
    ];
  const narrow = (table: string) => `SELECT ${rowId} AS r, ${id.map(q).join(', ')}, ${d.rowHash(cols.map(q))} AS h FROM ${q(table)}`;
  return [
    d.scratch(
      TMP.pairs,
      `SELECT o.r AS o, n.r AS n FROM (${narrow(names.target)}) o FULL JOIN (${narrow(TMP.recomputed)}) n
       ON ${id.map((c) => `o.${q(c)} = n.${q(c)}`).join(' AND ')} AND o.h = n.h
     WHERE o.r IS NULL OR n.r IS NULL`,
    ),
    d.scratch(
      TMP.stored,
      `     SELECT t.${rowId} AS ${q(ROWID)}, ${cols.map((c) => `t.${q(c)}`).join(', ')}, ${current} AS ${q(CURRENT)}, true AS ${q(SLOW)}
     FROM ${q(names.target)} t WHERE t.${rowId} IN (SELECT o FROM ${q(TMP.pairs)} WHERE o IS NOT NULL)`,
    ),
    d.scratch(TMP.changed, `SELECT * FROM ${q(TMP.recomputed)} x WHERE x.${rowId} IN (SELECT n FROM ${q(TMP.pairs)} WHERE n IS NOT NULL)`),
  ];
}

/** The walked keys' removed and added rows (TMP.removed / TMP.added are views over them). */
export const WALKED = { removed: '_scd_removed_walked', added: '_scd_added_walked' } as const;
/** The walked keys' added rows when none of them has a stored row: a view over the walk. */
const WALKED_ADDED_VIEW = '_scd_added_walked_view';
/** The views of a commit, dropped (in this order) before the tables they read. */
export const DIFF_VIEWS = [TMP.removed, TMP.added, WALKED_ADDED_VIEW];

const UPDATE = `${INTERNAL_COLUMN_PREFIX}upd`;
const UPDATE_OF_CURRENT = `${INTERNAL_COLUMN_PREFIX}updcur`;
/** The row id of the stored row an added row replaces, and whether it only closes it. */
const OF_ROW = `${INTERNAL_COLUMN_PREFIX}of_row`;
const CLOSE = `${INTERNAL_COLUMN_PREFIX}close`;
