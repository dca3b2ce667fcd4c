import type { Dialect } from '../dialects/dialect.js';
import { INTERNAL_COLUMN_PREFIX } from '../files/source-keys.js';
import type { Flow } from '../flow/flow.js';
import { HASH, OP, sentinelValue } from '../store/target-columns.js';
import { type ColumnModel, seqParts } from './model.js';
import { currentFlag, endValue, previousColumns, targetColumns } from './target.js';

/** An event's place in its key's order (1, 2, …). */
const EVENT_NUMBER = `${INTERNAL_COLUMN_PREFIX}i`;
/** An event's segment: how many deletes and truncates of its key come before it. */
const SEGMENT = `${INTERNAL_COLUMN_PREFIX}seg`;
/** An event's place inside its segment (1, 2, …). */
const NUMBER_IN_SEGMENT = `${INTERNAL_COLUMN_PREFIX}rn`;
/** 1 where an event opens a version (or a delete closes one), else 0. */
const BOUNDARY = `${INTERNAL_COLUMN_PREFIX}b`;
/** The running count of boundaries: the number of the version an event belongs to (0: none). */
const VERSION_NUMBER = `${INTERNAL_COLUMN_PREFIX}v`;
/** Whether a version is a tombstone (its events are deletes). */
const TOMBSTONE = `${INTERNAL_COLUMN_PREFIX}tomb`;
export const CURRENT = `${INTERNAL_COLUMN_PREFIX}current`;
const endPart = (i: number) => `${INTERNAL_COLUMN_PREFIX}e${i}`;
const startPart = (i: number) => `${INTERNAL_COLUMN_PREFIX}st${i}`;
/** The next event's BOUNDARY (null after a key's last event). */
const NEXT_BOUNDARY = `${INTERNAL_COLUMN_PREFIX}nb`;

/**
 * The SEMANTICS §3 walk, set-based (docs/DESIGN.md "The walk in SQL"):
 * order each key's events; a running count of deletes/truncates gives each event its segment;
 * inside a segment, effective values (ignoreNullUpdates: last non-null so far); an upsert whose
 * tracked values differ from the previous upsert's (or that is first in its segment) opens a
 * version; a delete that follows an upsert closes one. A version's start is its first event's
 * sequence, its values its last event's, its end the next boundary's sequence.
 *
 * Reads TMP.events-shaped rows (key, sequence parts, op, payload, hash; truncates expanded per key);
 * produces the target rows (projected with the output options) of those keys,
 * plus an internal column CURRENT. Statements, run in order.
 */
export interface WalkOptions {
  /**
   * Order each key's events by sequence and operation alone, without the payload text that orders
   * tied events: the caller knows there is no tie, or has the walk mark them (markTies).
   */
  tieFree?: boolean;
  /** With tieFree: mark (TIE) the rows whose events met a tie, so that the walk is run again in the full order. */
  markTies?: boolean;
}

export function walkSql(flow: Flow, model: ColumnModel, d: Dialect, events: string, into: string, options: WalkOptions = {}): string[] {
  const { tieFree = false, markTies = false } = options;
  if (!flow.previousValues) return versionsSql(flow, model, d, events, into, tieFree, markTies);
  // The versions first (their previous values null), then each takes its values from the one before.
  const walked = `${into}_walked`; // TMP.walked for TMP.recomputed: discarded with the commit's scratch
  return [...versionsSql(flow, model, d, events, walked, tieFree, markTies), ...previousValuesSql(flow, model, d, walked, into, markTies)];
}

/**
 * SCD type 3 (flow.previousValues): each version's previous values are the values of the key's
 * version that ends where it starts (the row it replaced in the table: a tombstone's values are
 * null), or null when no version does (a key's first version, a version after a delete). One lag
 * over the key's versions ordered by start, where the previous version's end must meet the start.
 * Reads `walked` (the walk's rows, previous values null) into `into`, and drops `walked`.
 */
function previousValuesSql(flow: Flow, model: ColumnModel, d: Dialect, walked: string, into: string, markTies: boolean): string[] {
  const q = d.quote;
  const prev = previousColumns(flow, model);
  const w = `OVER (PARTITION BY ${model.keys.map((k) => q(k.name)).join(', ')} ORDER BY ${q(flow.startAtColumn)})`;
  const PE = q(`${INTERNAL_COLUMN_PREFIX}pe`);
  const pv = (i: number) => q(`${INTERNAL_COLUMN_PREFIX}pv${i}`);
  const lagged = `SELECT *, lag(${q(flow.endAtColumn)}) ${w} AS ${PE}${prev.map((p, i) => `, lag(${q(p.of)}) ${w} AS ${pv(i)}`).join('')} FROM ${q(walked)}`;
  const cols = targetColumns(flow, model, d).map((c) => {
    const i = prev.findIndex((p) => p.name === c.name);
    // The previous version meets this one: its end is this start (or, inclusive, the value before it).
    return i < 0 ? q(c.name) : `CASE WHEN ${PE} = ${endValue(flow, model, d, q(flow.startAtColumn))} THEN ${pv(i)} END AS ${q(c.name)}`;
  });
  const select = `SELECT ${[...cols, q(CURRENT), ...(markTies ? [q(TIE)] : [])].join(', ')} FROM (${lagged}) x`;
  // Where scratch is a table of the session, it goes at once (a walk run again makes it again).
  return [d.scratch(into, select), ...(d.capabilities.temporaryTables ? [`DROP TABLE ${q(walked)}`] : [])];
}

/** The versions of the walk (walkSql), previous values aside. */
function versionsSql(flow: Flow, model: ColumnModel, d: Dialect, events: string, into: string, tieFree: boolean, markTies: boolean): string[] {
  const q = d.quote;
  const K = model.keys.map((k) => q(k.name));
  const S = seqParts(model).map(q);
  const P = model.payload.map((p) => q(p.name));
  const partK = K.join(', ');
  // The order and the segments in one pass (one sort): the order is total (events are distinct).
  // Sequence and operation order every event but a tied one, and the tied ones (withTieOrder) by
  // their payload's canonical text. `tieFree`: the caller knows there is no tie.
  const ev = tieFree ? `SELECT * FROM ${q(events)}` : withTieOrder(model, d, events);
  const byOrder = `PARTITION BY ${partK} ORDER BY ${(tieFree ? [...S, q(OP)] : [...S, q(OP), q(TIE_ORDER), q(HASH)]).join(', ')}`;
  if (markTies && !(tieFree && canMarkTies(flow))) throw new Error('the walk marks ties only in its one-sort form, ordered without payloads');
  if (!flow.ignoreNullUpdates) return oneSortWalk(flow, model, d, ev, into, byOrder, markTies);
  const ordered = `SELECT *, row_number() OVER (${byOrder}) AS ${q(EVENT_NUMBER)},
    coalesce(sum(CASE WHEN ${q(OP)} > 0 THEN 1 ELSE 0 END) OVER (${byOrder} ROWS BETWEEN UNBOUNDED PRECEDING AND 1 PRECEDING), 0) AS ${q(SEGMENT)} FROM ev`;
  const segmented = `SELECT * FROM o`;
  const segWin = `PARTITION BY ${partK}, ${q(SEGMENT)} ORDER BY ${q(EVENT_NUMBER)}`;

  // Effective payload values.
  let effective: string;
  const ctes: string[] = [];
  if (!flow.ignoreNullUpdates) {
    effective = `SELECT *, row_number() OVER (${segWin}) AS ${q(NUMBER_IN_SEGMENT)} FROM s`;
  } else if (d.capabilities.ignoreNullsInWindows) {
    const eff = model.payload.map((p) => `last_value(${q(p.name)} IGNORE NULLS) OVER (${segWin} ROWS BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW) AS ${q(p.name)}`);
    effective = `SELECT ${[...K, ...S, q(OP), q(HASH), q(EVENT_NUMBER), q(SEGMENT)].join(', ')}${eff.length ? ', ' + eff.join(', ') : ''}, row_number() OVER (${segWin}) AS ${q(NUMBER_IN_SEGMENT)} FROM s`;
  } else {
    // No IGNORE NULLS: number the runs of each column by a running count of its non-nulls,
    // then take each run's first value.
    const grp = (p: string) => q(`${INTERNAL_COLUMN_PREFIX}g_${p}`);
    const counts = model.payload.map((p) => `count(${q(p.name)}) OVER (${segWin} ROWS UNBOUNDED PRECEDING) AS ${grp(p.name)}`);
    ctes.push(`sg AS (SELECT *${counts.length ? ', ' + counts.join(', ') : ''} FROM s)`);
    const eff = model.payload.map((p) => `first_value(${q(p.name)}) OVER (PARTITION BY ${partK}, ${q(SEGMENT)}, ${grp(p.name)} ORDER BY ${q(EVENT_NUMBER)}) AS ${q(p.name)}`);
    effective = `SELECT ${[...K, ...S, q(OP), q(HASH), q(EVENT_NUMBER), q(SEGMENT)].join(', ')}${eff.length ? ', ' + eff.join(', ') : ''}, row_number() OVER (${segWin}) AS ${q(NUMBER_IN_SEGMENT)} FROM sg`;
  }
  const changed = model.tracked.length ? model.tracked.map((t) => `lag(${q(t)}) OVER (${segWin}) IS DISTINCT FROM ${q(t)}`).join(' OR ') : 'false';
  const bounded = `SELECT *, CASE WHEN ${q(OP)} > 0 THEN CASE WHEN ${q(NUMBER_IN_SEGMENT)} > 1 THEN 1 ELSE 0 END
      WHEN ${q(NUMBER_IN_SEGMENT)} = 1 THEN 1 WHEN ${changed} THEN 1 ELSE 0 END AS ${q(BOUNDARY)} FROM e`;
  const byEventNumber = `PARTITION BY ${partK} ORDER BY ${q(EVENT_NUMBER)}`;
  let versions: string;
  if (d.capabilities.ignoreNullsInWindows) {
    // One more pass: each row knows its version (VERSION_NUMBER), where the version started (the
    // last boundary's sequence so far) and what follows it. A version's last row (the next row
    // opens another, or there is none) carries its values and its end (the next row's sequence).
    // Every row of a version has the same kind (upserts, or deletes), so the last row tells a
    // tombstone.
    const numbered = `SELECT *, sum(${q(BOUNDARY)}) OVER (${byEventNumber} ROWS UNBOUNDED PRECEDING) AS ${q(VERSION_NUMBER)}, lead(${q(BOUNDARY)}) OVER (${byEventNumber}) AS ${q(NEXT_BOUNDARY)},
      ${S.map((s, i) => `last_value(CASE WHEN ${q(BOUNDARY)} = 1 THEN ${s} END IGNORE NULLS) OVER (${byEventNumber} ROWS UNBOUNDED PRECEDING) AS ${q(startPart(i))}`).join(', ')},
      ${S.map((s, i) => `lead(${s}) OVER (${byEventNumber}) AS ${q(endPart(i))}`).join(', ')} FROM b`;
    const last = `SELECT ${[...K, ...S.map((s, i) => `${q(startPart(i))} AS ${s}`), ...S.map((_, i) => q(endPart(i))), `${q(OP)} > 0 AS ${q(TOMBSTONE)}`, ...P].join(', ')}
      FROM n WHERE ${q(VERSION_NUMBER)} > 0 AND (${q(NEXT_BOUNDARY)} IS NULL OR ${q(NEXT_BOUNDARY)} = 1)`;
    versions = `n AS (${numbered}),
v AS (${last})`;
  } else {
    const numbered = `SELECT *, sum(${q(BOUNDARY)}) OVER (${byEventNumber} ROWS UNBOUNDED PRECEDING) AS ${q(VERSION_NUMBER)} FROM b`;
    const grouped = `SELECT ${K.join(', ')}, ${q(VERSION_NUMBER)},
      ${S.map((s) => `${d.firstBy(s, q(EVENT_NUMBER))} AS ${s}`).join(', ')},
      ${d.firstBy(q(OP), q(EVENT_NUMBER))} > 0 AS ${q(TOMBSTONE)}${P.length ? ',' : ''}
      ${P.map((p) => `${d.lastBy(p, q(EVENT_NUMBER))} AS ${p}`).join(', ')}
    FROM n WHERE ${q(VERSION_NUMBER)} > 0 GROUP BY ${K.join(', ')}, ${q(VERSION_NUMBER)}`;
    const ended = `SELECT *, ${S.map((s, i) => `lead(${s}) OVER (PARTITION BY ${partK} ORDER BY ${q(VERSION_NUMBER)}) AS ${q(endPart(i))}`).join(', ')} FROM g`;
    versions = `n AS (${numbered}),
g AS (${grouped}),
v AS (${ended})`;
  }
  return [
    d.scratch(
      into,
      `WITH ev AS (${ev}),
o AS (${ordered}),
s AS (${segmented}),
${ctes.map((c) => c + ',\n').join('')}e AS (${effective}),
b AS (${bounded}),
${versions}
${versionsSelect(flow, model, d, 'v')}`,
    ),
  ];
}

/**
 * The walk's own tie check (walkSql `markTies`): ordered by sequence and operation, two events of
 * a key that share both are next to each other, so one more lag in the walk's one sort finds every
 * tie. The output then has this column, true on a row per tied event (a version or not) and false
 * on every other; with no true row the order was total and the output is the walk's (apply.ts
 * walkKeys).
 */
export const TIE = `${INTERNAL_COLUMN_PREFIX}tie`;

/** Whether the walk can mark its ties (its one-sort form: values taken as they are). */
export const canMarkTies = (flow: Flow) => !flow.ignoreNullUpdates;

/** How many of its key's events up to an event (it included) are upserts. */
const UPSERTS_SO_FAR = `${INTERNAL_COLUMN_PREFIX}ups`;
/** Whether an event opens a version; whether it is its version's last (the next event opens one). */
const FIRST_OF_VERSION = `${INTERNAL_COLUMN_PREFIX}first`;
const LAST_OF_VERSION = `${INTERNAL_COLUMN_PREFIX}last`;

/** An event of a version of several events, written as it is, to pair with the rest of its version. */
const TO_PAIR = `${INTERNAL_COLUMN_PREFIX}part`;
const RAW_EVENT_NUMBER = `${INTERNAL_COLUMN_PREFIX}ri`;
const RAW_LAST_OF_VERSION = `${INTERNAL_COLUMN_PREFIX}rlast`;
const RAW_TOMBSTONE = `${INTERNAL_COLUMN_PREFIX}rtomb`;
const rawStart = (i: number) => `${INTERNAL_COLUMN_PREFIX}rs${i}`;
const rawEnd = (i: number) => `${INTERNAL_COLUMN_PREFIX}re${i}`;

/**
 * The walk when every event carries its values as they are (no ignoreNullUpdates), in one sort.
 * With raw values, whether an event opens a version depends only on it and the event before it,
 * and whether it is its version's last only on it and the event after it: one window pass over
 * the ordered events (lag/lead) tells each event both, and its end (the next event's sequence).
 * An event that is both first and last is a whole version; the events that are only one of the
 * two pair up afterwards (a last event takes its start from the first before it).
 *
 * - an upsert opens a version when it is a key's first event, follows a delete, or its tracked
 *   values differ from the upsert before it; a delete opens one (a tombstone) when it follows an
 *   upsert;
 * - an event belongs to a version unless it is a delete with no upsert before it;
 * - a version's values are its last event's, its start its first event's sequence, its end the
 *   sequence of the event after its last (null when there is none).
 *
 * The window's output is read once, as it streams: the first statement writes the whole versions
 * and, as they are (TO_PAIR, with the raw columns the pairing needs), the events of the others;
 * the next ones pair those few up in the walked table and remove them. Reading the window's output
 * a second time for them would make the engine keep all of it (docs/decisions/0053-the-walk-in-one-sort.md).
 */
function oneSortWalk(flow: Flow, model: ColumnModel, d: Dialect, ev: string, into: string, byOrder: string, markTies: boolean): string[] {
  const q = d.quote;
  const K = model.keys.map((k) => q(k.name));
  const S = seqParts(model).map(q);
  const P = model.payload.map((p) => q(p.name));
  const T = model.tracked.map(q);
  const w = `OVER (${byOrder})`;
  const differs = (fn: 'lag' | 'lead') => (T.length ? `(${T.map((t) => `${fn}(${t}) ${w} IS DISTINCT FROM ${t}`).join(' OR ')})` : 'false');
  const lop = `lag(${q(OP)}) ${w}`;
  const nop = `lead(${q(OP)}) ${w}`;
  // Opens a version (from the event before) / the next event opens one (from the event after).
  const first = `CASE WHEN ${q(OP)} > 0 THEN coalesce(${lop} = 0, false) ELSE (${lop} IS NULL OR ${lop} > 0 OR ${differs('lag')}) END`;
  const nextOpens = `CASE WHEN ${nop} IS NULL THEN true WHEN ${nop} > 0 THEN ${q(OP)} = 0 ELSE (${q(OP)} > 0 OR ${differs('lead')}) END`;
  const ups = `count(CASE WHEN ${q(OP)} = 0 THEN 1 END) ${w.replace(/\)$/, ' ROWS BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW)')}`;
  const tie = `coalesce(${S.map((s) => `lag(${s}) ${w} = ${s}`).join(' AND ')} AND ${lop} = ${q(OP)}, false)`;
  const o = `SELECT ${[...K, ...S, q(OP), ...P].join(', ')}, row_number() ${w} AS ${q(EVENT_NUMBER)},
    ${S.map((s, i) => `lead(${s}) ${w} AS ${q(endPart(i))}`).join(', ')},
    ${first} AS ${q(FIRST_OF_VERSION)}, ${nextOpens} AS ${q(LAST_OF_VERSION)}, ${ups} AS ${q(UPSERTS_SO_FAR)}${markTies ? `, ${tie} AS ${q(TIE)}` : ''}
  FROM ev`;
  const cols = (start: string[]) => [...K, ...start.map((s, i) => `${s} AS ${S[i]}`), ...S.map((_, i) => q(endPart(i))), `${q(OP)} > 0 AS ${q(TOMBSTONE)}`, ...P].join(', ');
  // An event of a version of several events (in one, and first or last but not both).
  const part = `((${q(OP)} = 0 OR ${q(UPSERTS_SO_FAR)} > 0) AND ${q(FIRST_OF_VERSION)} <> ${q(LAST_OF_VERSION)})`;
  const raw = (x: string, as: string) => `CASE WHEN ${part} THEN ${x} END AS ${q(as)}`;
  const rawCols = [
    `${part} AS ${q(TO_PAIR)}`,
    raw(q(EVENT_NUMBER), RAW_EVENT_NUMBER),
    raw(q(LAST_OF_VERSION), RAW_LAST_OF_VERSION),
    raw(`${q(OP)} > 0`, RAW_TOMBSTONE),
    ...S.map((s, i) => raw(s, rawStart(i))),
    ...S.map((_, i) => raw(q(endPart(i)), rawEnd(i))),
  ];
  const rawNames = [TO_PAIR, RAW_EVENT_NUMBER, RAW_LAST_OF_VERSION, RAW_TOMBSTONE, ...S.map((_, i) => rawStart(i)), ...S.map((_, i) => rawEnd(i))];
  // A tied event comes out too, marked: a version and a mark at once when it is one.
  const v = `SELECT ${cols(S)}, ${rawCols.join(', ')}${markTies ? `, ${q(TIE)}` : ''}
  FROM o WHERE (${q(FIRST_OF_VERSION)} AND ${q(LAST_OF_VERSION)}) OR ${part}${markTies ? ` OR ${q(TIE)}` : ''}`;
  // Where scratch cannot change in place, the walk's raw output is a relation of its own, and
  // the walked rows are the whole versions and the paired ones, made from it in one statement.
  const inPlace = d.capabilities.temporaryTables;
  const rawOut = inPlace ? into : `${into}_raw`;
  const walked = d.scratch(
    rawOut,
    `WITH ev AS (${ev}),
o AS (${o}),
v AS (${v})
${versionsSelect(flow, model, d, 'v', [...rawNames, ...(markTies ? [TIE] : [])], [TO_PAIR, ...(markTies ? [TIE] : [])])}`,
  );
  // The pairs: each last event with the start of the first before it (events of one version are
  // next to each other in the key's order). Payload columns are named as in the target.
  const target = [...targetColumns(flow, model, d).map((c) => c.name), CURRENT].map(q);
  const pairs = `SELECT ${[
    ...K,
    ...S.map((s, i) => `${q(startPart(i))} AS ${s}`),
    ...S.map((_, i) => `${q(rawEnd(i))} AS ${q(endPart(i))}`),
    `${q(RAW_TOMBSTONE)} AS ${q(TOMBSTONE)}`,
    ...P,
  ].join(', ')} FROM (SELECT *, ${S.map((_, i) => `lag(${q(rawStart(i))}) OVER (PARTITION BY ${K.join(', ')} ORDER BY ${q(RAW_EVENT_NUMBER)}) AS ${q(startPart(i))}`).join(', ')}
    FROM ${q(rawOut)} WHERE ${q(TO_PAIR)}) x WHERE ${q(RAW_LAST_OF_VERSION)}`;
  if (!inPlace) {
    if (markTies) throw new Error('the walk marks ties only where its output changes in place');
    return [walked, d.scratch(into, `SELECT ${target.join(', ')} FROM ${q(rawOut)} WHERE NOT ${q(TO_PAIR)}\nUNION ALL\n${versionsSelect(flow, model, d, `(${pairs}) p`)}`)];
  }
  return [
    walked,
    `INSERT INTO ${q(into)} (${target.join(', ')}) ${versionsSelect(flow, model, d, `(${pairs}) p`)}`,
    // A tied event stays (the walk is run again in the full order).
    `DELETE FROM ${q(into)} WHERE ${q(TO_PAIR)}${markTies ? ` AND NOT ${q(TIE)}` : ''}`,
    ...rawNames.map((c) => `ALTER TABLE ${q(into)} DROP COLUMN ${q(c)}`),
  ];
}

const TIE_ORDER = `${INTERNAL_COLUMN_PREFIX}tie_order`;

/**
 * The events of `events` with TIE_ORDER: for a tied event (another event of its key shares its
 * sequence and operation) the canonical text of its payload, which orders ties
 * (docs/SEMANTICS.md); NULL for every other event, which its sequence and operation order
 * already, so only tied events pay for a new string (docs/decisions/0005-a-walk-without-payloads-checks-itself.md). Keys and
 * sequence parts of an event are never null.
 */
function withTieOrder(model: ColumnModel, d: Dialect, events: string): string {
  const q = d.quote;
  const group = [...model.keys.map((k) => q(k.name)), ...seqParts(model).map(q), q(OP)];
  const tied = `SELECT ${group.join(', ')} FROM ${q(events)} GROUP BY ${group.join(', ')} HAVING count(*) > 1`;
  const canon = d.canonicalText(model.payload.map((p) => `e.${q(p.name)}`));
  return `SELECT e.*, CASE WHEN t.${q(OP)} IS NOT NULL THEN ${canon} END AS ${q(TIE_ORDER)}
    FROM ${q(events)} e LEFT JOIN (${tied}) t ON ${group.map((c) => `t.${c} = e.${c}`).join(' AND ')}`;
}

/**
 * Target rows from walked versions: `from` has the key, the start's sequence parts, the end's
 * (endPart(i), null while open), TOMBSTONE and the payload. Drops what the flow does not keep
 * (deletions unless tombstones, zero-length versions, closed versions of scd1), but for the rows
 * where a `keepAlso` column is true.
 */
export function versionsSelect(flow: Flow, model: ColumnModel, d: Dialect, from: string, extra: string[] = [], keepAlso: string[] = []): string {
  const q = d.quote;
  const S = seqParts(model).map(q);
  const keep = [
    flow.deletes === 'tombstone' && flow.storedAs === 'scd2' ? 'true' : `NOT ${q(TOMBSTONE)}`,
    flow.storedAs === 'scd1' ? `${q(endPart(0))} IS NULL` : `(${q(endPart(0))} IS NULL OR NOT (${S.map((s, i) => `${s} = ${q(endPart(i))}`).join(' AND ')}))`,
  ];
  return `SELECT ${projection(flow, model, d).join(', ')}, (${q(endPart(0))} IS NULL AND NOT ${q(TOMBSTONE)}) AS ${q(CURRENT)}${extra.map((c) => `, ${q(c)}`).join('')}
FROM ${from} WHERE ${keepAlso.length ? `(${keep.join(' AND ')}) OR ${keepAlso.map(q).join(' OR ')}` : keep.join(' AND ')}`;
}

export { endPart, TOMBSTONE };

/** Target columns from a walked version (columns of `v`), in target order. */
function projection(flow: Flow, model: ColumnModel, d: Dialect): string[] {
  const q = d.quote;
  const S = seqParts(model);
  const seqValue = (parts: string[]) =>
    parts.length === 1 ? q(parts[0]!) : `CASE WHEN ${q(parts[0]!)} IS NULL THEN NULL ELSE ${d.struct(model.seq.map((c, i) => [c.name, q(parts[i]!), c.type]))} END`;
  const out: string[] = [];
  const previous = previousColumns(flow, model);
  for (const c of targetColumns(flow, model, d)) {
    const n = c.name;
    if (previous.some((p) => p.name === n)) {
      // Filled in once every version is known (previousValuesSql).
      out.push(`CAST(NULL AS ${c.type}) AS ${q(n)}`);
    } else if (n === flow.surrogateKey) {
      out.push(`md5(${d.canonicalText([...model.keys.map((k) => q(k.name)), ...S.map(q)])}) AS ${q(n)}`);
    } else if (flow.storedAs === 'scd2' && n === flow.startAtColumn) {
      out.push(`${seqValue(S)} AS ${q(n)}`);
    } else if (flow.storedAs === 'scd2' && n === flow.endAtColumn) {
      const end = endValue(flow, model, d, seqValue(S.map((_, i) => endPart(i))));
      out.push(flow.endSentinel === undefined ? `${end} AS ${q(n)}` : `coalesce(${end}, ${sentinelValue(flow, model, d)}) AS ${q(n)}`);
    } else if (n === flow.isCurrentColumn) {
      out.push(`${currentFlag(flow, `${q(endPart(0))} IS NULL`)} AS ${q(n)}`);
    } else if (flow.deletes === 'tombstone' && n === flow.deletedColumn) {
      out.push(`${q(TOMBSTONE)} AS ${q(n)}`);
    } else if (model.keys.some((k) => k.name === n)) {
      out.push(q(n));
    } else {
      out.push(flow.deletes === 'tombstone' ? `CASE WHEN ${q(TOMBSTONE)} THEN NULL ELSE ${q(n)} END AS ${q(n)}` : q(n));
    }
  }
  return out;
}
