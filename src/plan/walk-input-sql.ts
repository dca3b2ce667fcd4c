import type { Dialect } from '../dialects/dialect.js';
import { INTERNAL_COLUMN_PREFIX } from '../files/source-keys.js';
import type { Flow } from '../flow/flow.js';
import { type StoreNames, TMP } from '../store/names.js';
import { currentCondition, HASH, OP, OP_TRUNCATE, OP_UPSERT } from '../store/target-columns.js';
import { lastPart } from './key-state.js';
import { keyJoin, SIMPLE, SLOW } from './keys-sql.js';
import { type ColumnModel, seqParts } from './model.js';
import { rowIdOrNull, targetRowId } from './target.js';
import { CURRENT } from './walk-sql.js';

/** TMP.stored: the stored row's row id (null where the target has none to read). */
export const ROWID = `${INTERNAL_COLUMN_PREFIX}rowid`;

/**
 * TMP.stored: the stored rows the commit may change — every version of a slow key, the live
 * version of a fast key that is not simple — with their row ids (so removals never search the
 * target again). Simple keys read their live version in their own join (simpleDiffSql).
 */
export function prevSql(flow: Flow, model: ColumnModel, d: Dialect, names: StoreNames, columns: string[]): string {
  const q = d.quote;
  const current = currentCondition(flow, model, d, 't.');
  return d.scratch(
    TMP.stored,
    `SELECT ${rowIdOrNull(d, targetRowId(flow, model, d), 't')} AS ${q(ROWID)}, ${columns.map((c) => `t.${q(c)}`).join(', ')}, ${current} AS ${q(CURRENT)}, k.${q(SLOW)}
FROM ${q(names.target)} t JOIN ${q(TMP.keys)} k ON ${keyJoin(model, d, 't', 'k')}
WHERE NOT k.${q(SIMPLE)} AND (k.${q(SLOW)} OR (${current}))`,
  );
}

/**
 * The sequence parts where a fast key's live version starts, from its stored row `p` (scd2) or
 * from the key state `k` (scd1 stores no start).
 */
export function liveStart(flow: Flow, model: ColumnModel, d: Dialect): string[] {
  const q = d.quote;
  if (flow.storedAs !== 'scd2') return model.seq.map((_, i) => `k.${q(lastPart(i))}`);
  return model.seq.length === 1 ? [`p.${q(flow.startAtColumn)}`] : model.seq.map((c) => `(p.${q(flow.startAtColumn)}).${q(c.name)}`);
}

/**
 * Every truncate of the log and of this commit, once. The commit's own come from TMP.newEvents: an
 * engine that reads the log as of the commit's start (Spark, Driver.pinReads) does not see them in
 * the log, and one that does sees each twice, which the UNION makes once. A rebuild has only the log.
 */
function truncatesSql(model: ColumnModel, d: Dialect, names: StoreNames, wholeLog: boolean): string {
  const q = d.quote;
  const cols = [...model.seq.map((c) => q(c.name)), q(OP), q(HASH)].join(', ');
  const logged = `SELECT ${cols} FROM ${q(names.events)} WHERE ${q(OP)} = ${OP_TRUNCATE}`;
  return wholeLog ? logged : `${logged} UNION SELECT ${cols} FROM ${q(TMP.newEvents)} WHERE ${q(OP)} = ${OP_TRUNCATE}`;
}

/** The walk's input when every key is recomputed from the log (a view, not a copy). */
export const LOG_VIEW = '_scd_log_view';

/** TMP.events: the walk's input, per key, truncates expanded to every slow key. */
export interface EventsOptions {
  /** Some keys are fast: they start from their live version (TMP.stored), not from the log. */
  fastKeys: boolean;
  /** Every key from the whole log (a rebuild): a view over the log, not a copy. */
  wholeLog: boolean;
}

export function eventsSql(flow: Flow, model: ColumnModel, d: Dialect, names: StoreNames, { fastKeys, wholeLog }: EventsOptions): string {
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
    `SELECT ${row('n')} FROM ${q(TMP.newEvents)} n JOIN ${q(TMP.keys)} k ON ${keyJoin(model, d, 'n', 'k')} WHERE n.${q(OP)} <> ${OP_TRUNCATE} AND NOT k.${q(SIMPLE)}`,
  ];
  if (flow.applyAsTruncates !== undefined)
    parts.push(`SELECT ${K.map((c) => `k.${c}`).join(', ')}, ${model.seq.map((c, i) => `t.${q(c.name)} AS ${S[i]}`).join(', ')}, t.${q(OP)}, ${[...nullPayload, `t.${q(HASH)}`].join(', ')}
  FROM ${q(TMP.keys)} k CROSS JOIN (${truncatesSql(model, d, names, wholeLog)}) t WHERE k.${q(SLOW)}`);
  // A fast key starts from its live version, as one upsert at that version's start.
  if (fastKeys)
    parts.push(`SELECT ${K.map((c) => `p.${c}`).join(', ')}, ${start.map((s, i) => `${s} AS ${S[i]}`).join(', ')}, ${OP_UPSERT}, ${P.map((c) => `p.${c}`).join(', ')}${P.length ? ', ' : ''}CAST(0 AS ${d.types.hash})
  FROM ${q(TMP.stored)} p JOIN ${q(TMP.keys)} k ON ${keyJoin(model, d, 'p', 'k')} WHERE NOT p.${q(SLOW)} AND p.${q(CURRENT)} AND NOT k.${q(SIMPLE)}`);
  // Every key slow: a view (the walk, the tie count and the key state read the log through it).
  return wholeLog ? d.scratch(LOG_VIEW, parts.join('\nUNION ALL\n'), false) : d.scratch(TMP.events, parts.join('\nUNION ALL\n'));
}
