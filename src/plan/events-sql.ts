import type { Dialect } from '../dialects/dialect.js';
import type { ColumnInfo } from '../dialects/driver.js';
import { FILE_COLUMN, LINE_COLUMN } from '../dialects/driver.js';
import type { Flow } from '../flow/flow.js';
import { TMP, type StoreNames } from '../store/names.js';
import { INTERNAL_PREFIX, seqParts, type ColumnModel } from './model.js';
import { COMMIT, HASH, OP, OP_DELETE, OP_TRUNCATE, OP_UPSERT } from './target.js';

export const REASON = `${INTERNAL_PREFIX}reason`;

/**
 * Staged source rows → typed events with an operation, a payload hash and, for records that
 * cannot become events, a quarantine reason (SPEC §2, §6).
 */
export function batchSql(flow: Flow, model: ColumnModel, d: Dialect, staged: ColumnInfo[]): string {
  const q = d.quote;
  const stagedType = new Map(staged.map((c) => [c.name, c.type]));
  const fits: Array<{ name: string; src: string; cast: string; type: string }> = [];
  const cast = (c: ColumnInfo): string => {
    const st = stagedType.get(c.name);
    if (st === undefined) return `CAST(NULL AS ${c.type})`;
    if (d.sameType(st, c.type)) return q(c.name);
    const expr = d.tryCast(q(c.name), c.type);
    fits.push({ name: c.name, src: q(c.name), cast: expr, type: c.type });
    return expr;
  };
  const cond = (e: string | undefined) => (e ? `coalesce((${e}), false)` : 'false');
  const op = `CASE WHEN ${cond(flow.applyAsTruncates)} THEN ${OP_TRUNCATE} WHEN ${cond(flow.applyAsDeletes)} THEN ${OP_DELETE} ELSE ${OP_UPSERT} END`;
  const parts = seqParts(model);
  const keyExprs = model.keys.map((k) => `CASE WHEN ${q(OP)} = ${OP_TRUNCATE} THEN NULL ELSE ${q(k.name)} END AS ${q(k.name)}`);
  const inner = [
    ...model.keys.map((k) => `${cast(k)} AS ${q(k.name)}`),
    ...model.seq.map((s, i) => `${cast(s)} AS ${q(parts[i]!)}`),
    ...model.payload.map((p) => `${cast(p)} AS ${q(p.name)}`),
    `${op} AS ${q(OP)}`,
    q(FILE_COLUMN),
    q(LINE_COLUMN),
  ];
  const unfit = fits.map(
    (f) =>
      `WHEN ${f.src} IS NOT NULL AND ${f.cast} IS NULL THEN 'value ' || left(${d.toText(f.src)}, 80) || ' does not fit column ${escapeText(f.name)} (${escapeText(f.type)})'`,
  );
  const reason = [
    ...model.seq.map((s, i) => `WHEN ${q(parts[i]!)} IS NULL THEN 'sequence column ${escapeText(s.name)} is null'`),
    ...model.keys.map((k) => `WHEN ${q(OP)} <> ${OP_TRUNCATE} AND ${q(k.name)} IS NULL THEN 'key column ${escapeText(k.name)} is null'`),
  ];
  // Unfit values are checked on the staged columns, so they go in the inner select.
  const unfitExpr = unfit.length ? `CASE ${unfit.join(' ')} END` : 'CAST(NULL AS VARCHAR)';
  const payloadNames = model.payload.map((p) => q(p.name));
  return `CREATE TEMP TABLE ${q(TMP.batch)} AS
WITH c AS (SELECT ${inner.join(', ')}, ${unfitExpr} AS ${q(REASON + '_fit')} FROM ${q(TMP.stage)}),
k AS (SELECT ${keyExprs.join(', ')}, ${[...parts, ...model.payload.map((p) => p.name), OP, FILE_COLUMN, LINE_COLUMN, REASON + '_fit'].map(q).join(', ')} FROM c)
SELECT *, ${d.rowHash(payloadNames)} AS ${q(HASH)},
  CASE WHEN ${q(REASON + '_fit')} IS NOT NULL THEN ${q(REASON + '_fit')} ${reason.join(' ')} END AS ${q(REASON)}
FROM k`;
}

function escapeText(s: string): string {
  return `"${s.replace(/'/g, "''")}"`;
}

/** Identity of an event: key (null-safe, truncates have none), sequence, operation, payload hash. */
function sameEvent(model: ColumnModel, d: Dialect, a: string, b: string, sameOp = true): string {
  const q = d.quote;
  return [
    ...model.keys.map((k) => `${a}.${q(k.name)} IS NOT DISTINCT FROM ${b}.${q(k.name)}`),
    ...seqParts(model).map((s) => `${a}.${q(s)} = ${b}.${q(s)}`),
    ...(sameOp ? [`${a}.${q(OP)} = ${b}.${q(OP)}`, `${a}.${q(HASH)} = ${b}.${q(HASH)}`] : []),
  ].join(' AND ');
}

/** Valid batch events that the log does not hold yet, each once. */
export function freshEventsSql(model: ColumnModel, d: Dialect, names: StoreNames): string {
  const q = d.quote;
  const id = [...model.keys.map((k) => k.name), ...seqParts(model), OP, HASH].map((c) => `b.${q(c)}`);
  const cols = [...model.keys.map((k) => k.name), ...seqParts(model), OP, ...model.payload.map((p) => p.name), HASH];
  return `CREATE TEMP TABLE ${q(TMP.fresh)} AS
SELECT DISTINCT ON (${id.join(', ')}) ${cols.map((c) => `b.${q(c)}`).join(', ')}
FROM ${q(TMP.batch)} b
WHERE b.${q(REASON)} IS NULL
  AND NOT EXISTS (SELECT 1 FROM ${q(names.events)} l WHERE ${sameEvent(model, d, 'l', 'b')})`;
}

export function appendEventsSql(model: ColumnModel, d: Dialect, names: StoreNames): string {
  const q = d.quote;
  const cols = [...model.keys.map((k) => k.name), ...seqParts(model), OP, ...model.payload.map((p) => p.name), HASH];
  return `INSERT INTO ${q(names.events)} (${[...cols, COMMIT].map(q).join(', ')})
SELECT ${cols.map(q).join(', ')}, CAST($1 AS ${d.types.int}) FROM ${q(TMP.fresh)}`;
}

/** New events that share key and sequence with another, different event (after the append). */
export function tiesSql(model: ColumnModel, d: Dialect, names: StoreNames): string {
  const q = d.quote;
  return `SELECT CAST(count(*) AS ${d.types.int}) AS n FROM ${q(TMP.fresh)} n
WHERE EXISTS (SELECT 1 FROM ${q(names.events)} l WHERE ${sameEvent(model, d, 'l', 'n', false)}
  AND (l.${q(OP)} <> n.${q(OP)} OR l.${q(HASH)} <> n.${q(HASH)}))`;
}

/** Keys whose history must be recomputed: those of new events, or all keys after a new truncate. */
export function affectedKeysSql(model: ColumnModel, d: Dialect, names: StoreNames, truncated: boolean): string {
  const q = d.quote;
  const keys = model.keys.map((k) => q(k.name)).join(', ');
  const from = truncated ? q(names.events) : q(TMP.fresh);
  return `CREATE TEMP TABLE ${q(TMP.keys)} AS SELECT DISTINCT ${keys} FROM ${from} WHERE ${q(OP)} <> ${OP_TRUNCATE}`;
}

export function quarantineSql(model: ColumnModel, d: Dialect, names: StoreNames, staged: ColumnInfo[]): string {
  const q = d.quote;
  const sourceCols = staged.filter((c) => c.name !== FILE_COLUMN && c.name !== LINE_COLUMN);
  const raw = d.jsonObject(sourceCols.map((c) => [c.name, `s.${q(c.name)}`, c.type]));
  return `INSERT INTO ${q(names.quarantine)} (${q(COMMIT)}, file, line, reason, raw)
SELECT CAST($1 AS ${d.types.int}), b.${q(FILE_COLUMN)}, b.${q(LINE_COLUMN)}, b.${q(REASON)}, ${raw}
FROM ${q(TMP.batch)} b JOIN ${q(TMP.stage)} s
  ON s.${q(FILE_COLUMN)} IS NOT DISTINCT FROM b.${q(FILE_COLUMN)} AND s.${q(LINE_COLUMN)} = b.${q(LINE_COLUMN)}
WHERE b.${q(REASON)} IS NOT NULL`;
}
