import { type Dialect, sqlString } from '../dialects/dialect.js';
import type { ColumnInfo } from '../dialects/driver.js';
import { FILE_COLUMN, LINE_COLUMN, RAW_COLUMN } from '../dialects/driver.js';
import { spliced } from '../dialects/expression.js';
import { firstOfEachSql } from '../dialects/first-of-each.js';
import { INTERNAL_COLUMN_PREFIX } from '../files/source-keys.js';
import type { Flow } from '../flow/flow.js';
import { type StoreNames, TMP, written } from '../store/names.js';
import { COMMIT, HASH, OP, OP_DELETE, OP_TRUNCATE, OP_UPSERT } from '../store/target-columns.js';
import { castStaged, type StagedColumn, type TextCast } from '../typing/cast.js';
import { sourceColumnsOf } from '../typing/staged-types.js';
import type { ColumnModel } from './model.js';

export const REASON = `${INTERNAL_COLUMN_PREFIX}reason`;
/** The commit number of events that compaction folded (their operation is kept as stored). */
export const FOLDED_COMMIT = 0;
const UNFIT_REASON = `${INTERNAL_COLUMN_PREFIX}fit`;

/** The operation of a record, from the flow's expressions over its source columns (checked: plan/expression.ts). */
export function opExpr(flow: Flow): string {
  const cond = (e: string | undefined) => (e ? `coalesce(${spliced(e)}, false)` : 'false');
  return `CASE WHEN ${cond(flow.applyAsTruncates)} THEN ${OP_TRUNCATE} WHEN ${cond(flow.applyAsDeletes)} THEN ${OP_DELETE} ELSE ${OP_UPSERT} END`;
}

/** Event-log columns from records that already have typed source columns and OP (keys nulled for truncates). */
function eventProjection(model: ColumnModel, d: Dialect): string[] {
  const q = d.quote;
  const keys = new Set(model.keys.map((k) => k.name));
  return [
    ...model.source.map((c) => (keys.has(c.name) ? `CASE WHEN ${q(OP)} = ${OP_TRUNCATE} THEN NULL ELSE ${q(c.name)} END AS ${q(c.name)}` : q(c.name))),
    q(OP),
    `${d.rowHash(model.payload.map((p) => q(p.name)))} AS ${q(HASH)}`,
  ];
}

/** The quarantine reason of a record that failed a "quarantine" expectation. */
export const expectationReason = (name: string) => `expectation "${name}" failed`;

/** The boolean column of a batch that holds whether a record passed expectation i. */
export const expectationColumn = (i: number) => `${INTERNAL_COLUMN_PREFIX}x${i}`;
export const DROP = `${INTERNAL_COLUMN_PREFIX}drop`;

/** The boolean columns of a batch that hold a record's applyAsDeletes and applyAsTruncates (NULL: failed on it). */
const DELETES = `${INTERNAL_COLUMN_PREFIX}deletes`;
const TRUNCATES = `${INTERNAL_COLUMN_PREFIX}truncates`;
/** Why a flow expression failed on the record, if one did. */
const FAILED = `${INTERNAL_COLUMN_PREFIX}failed`;

/**
 * How a batch evaluates each flow expression on a record (plan/record-failures.ts): a flag that is
 * true or false where it evaluates and NULL where the expression failed on the record's values.
 */
export interface RecordEvaluation {
  /** SQL of the flag of the expression `expr` of flow field `field`, over the typed record (alias t). */
  flag(field: string, expr: string): string;
  /** SQL of why a record whose flag is NULL is quarantined. */
  reason(field: string, expr: string): string;
  /** A FROM item the flags read beside the record (joined to t), or ''. */
  join: string;
  /** Select items read from the join, which the reasons name (each `, expr AS name`), or ''. */
  carried: string;
}

/** Every expression run as written: one that fails stops the statement. */
export const AS_WRITTEN: RecordEvaluation = { flag: (_, e) => `coalesce(${spliced(e)}, false)`, reason: () => 'NULL', join: '', carried: '' };

/**
 * Staged source rows → typed events with an operation, a payload hash and, for records that
 * cannot become events, a quarantine reason (SEMANTICS §2, §6). Expectations are evaluated on the
 * source columns: a failed "quarantine" expectation is a reason, a failed "drop" one sets DROP. A
 * flow expression that fails on a record's values (its flag NULL) quarantines the record with why,
 * whatever the expression's action; its expectation flag stays NULL (a "fail" one stops the run).
 */
export function batchSql(
  flow: Flow,
  model: ColumnModel,
  d: Dialect,
  staged: ReadonlyMap<string, StagedColumn>,
  compactedBefore?: string,
  evaluation: RecordEvaluation = AS_WRITTEN,
  textCast?: TextCast,
): string {
  const q = d.quote;
  // Events older than a compaction cannot be placed exactly any more: quarantined, never wrong.
  const tooOld =
    compactedBefore === undefined ? [] : [`WHEN ${q(model.seq[0]!.name)} < CAST($1 AS ${model.seq[0]!.type}) THEN 'older than the compaction watermark (' || $1 || ')'`];
  const expectations = Object.entries(flow.expect);
  const flags: Array<[column: string, field: string, expr: string]> = [
    ...(flow.applyAsTruncates ? [[TRUNCATES, 'applyAsTruncates', flow.applyAsTruncates] as [string, string, string]] : []),
    ...(flow.applyAsDeletes ? [[DELETES, 'applyAsDeletes', flow.applyAsDeletes] as [string, string, string]] : []),
    ...expectations.map(([name, e], i): [string, string, string] => [expectationColumn(i), `expect.${name}.sql`, e.sql]),
  ];
  const failed = `CASE ${flags.map(([col, field, expr]) => `WHEN ${q(col)} IS NULL THEN ${evaluation.reason(field, expr)}`).join(' ')} END`;
  const cond = (col: string, expr: string | undefined) => (expr ? `coalesce(${q(col)}, false)` : 'false');
  const op = `CASE WHEN ${cond(TRUNCATES, flow.applyAsTruncates)} THEN ${OP_TRUNCATE} WHEN ${cond(DELETES, flow.applyAsDeletes)} THEN ${OP_DELETE} ELSE ${OP_UPSERT} END`;
  const reason = [
    ...(flags.length ? [`WHEN ${q(FAILED)} IS NOT NULL THEN ${q(FAILED)}`] : []),
    ...model.seq.map((s) => `WHEN ${q(s.name)} IS NULL THEN 'sequence column ${text(s.name)} is null'`),
    ...model.keys.map((k) => `WHEN ${q(OP)} <> ${OP_TRUNCATE} AND ${q(k.name)} IS NULL THEN 'key column ${text(k.name)} is null'`),
    ...tooOld,
    ...expectations.flatMap(([name, e], i) => (e.action === 'quarantine' ? [`WHEN NOT ${q(expectationColumn(i))} THEN ${sqlString(expectationReason(name))}`] : [])),
  ];
  const drops = expectations.flatMap(([, e], i) => (e.action === 'drop' ? [`NOT coalesce(${q(expectationColumn(i))}, true)`] : []));
  // Expressions (deletes, truncates, expectations) see the columns with the flow's types.
  // Without expressions there is nothing to flag: the records are upserts as they are.
  const flagged = flags.length
    ? `e AS (SELECT t.*${flags.map(([col, field, expr]) => `, ${evaluation.flag(field, expr)} AS ${q(col)}`).join('')}${evaluation.carried} FROM t${evaluation.join ? ' ' + evaluation.join : ''}),
c AS (SELECT *, ${op} AS ${q(OP)}, ${failed} AS ${q(FAILED)} FROM e)`
    : `c AS (SELECT *, ${op} AS ${q(OP)} FROM t)`;
  return d.scratch(
    TMP.batch,
    `WITH t AS (${typedStageSql(flow, model, d, staged, textCast)}),
${flagged}
SELECT ${eventProjection(model, d).join(', ')}, ${q(FILE_COLUMN)}, ${q(LINE_COLUMN)},
  ${expectations.map((_, i) => q(expectationColumn(i)) + ', ').join('')}${drops.length ? drops.join(' OR ') : 'false'} AS ${q(DROP)},
  CASE WHEN ${q(UNFIT_REASON)} IS NOT NULL THEN ${q(UNFIT_REASON)} ${reason.join(' ')} END AS ${q(REASON)}
FROM c`,
  );
}

/**
 * The staged records with every source column of the model cast to its type (missing ones
 * null), the file and line, and UNFIT_REASON: why a value does not fit its column, if one does
 * not.
 */
export function typedStageSql(flow: Flow, model: ColumnModel, d: Dialect, staged: ReadonlyMap<string, StagedColumn>, textCast?: TextCast): string {
  const q = d.quote;
  // Each value is cast once, in the middle query, from its JSON text taken once in the innermost
  // one (each fenced where the engine would copy an expression into every use:
  // Dialect.computeOnce); the outer one reads the cast value and tells a misfit by it.
  const texts: string[] = [];
  const casts: string[] = [];
  const unfit: string[] = [];
  const typed = model.source.map((c, i): string => {
    const stagedAs = staged.get(c.name);
    if (stagedAs === undefined) return `CAST(NULL AS ${c.type}) AS ${q(c.name)}`;
    const textColumn = q(`${INTERNAL_COLUMN_PREFIX}text${i}`);
    if (stagedAs.lexical === 'json') texts.push(`${d.jsonText(`s0.${q(c.name)}`)} AS ${textColumn}`);
    const st = stagedAs.lexical === 'json' ? { ...stagedAs, text: `s.${textColumn}` } : stagedAs;
    const { expr, exact } = castStaged(d, `s.${q(c.name)}`, st, c.type, flow.timeZone, textCast);
    const cast = q(`${INTERNAL_COLUMN_PREFIX}cast${i}`);
    casts.push(`${expr} AS ${cast}`);
    if (!exact)
      unfit.push(
        `WHEN x.${q(c.name)} IS NOT NULL AND x.${cast} IS NULL THEN 'value ' || ${shownValue(d, d.toText(`x.${q(c.name)}`))} || ' does not fit column ${text(c.name)} (${text(c.type)})'`,
      );
    return `x.${cast} AS ${q(c.name)}`;
  });
  const fit = unfit.length ? `CASE ${unfit.join(' ')} END` : `CAST(NULL AS ${d.types.text})`;
  const withTexts = texts.length ? `(SELECT s0.*, ${texts.join(', ')} FROM ${q(TMP.stage)} s0${d.computeOnce})` : q(TMP.stage);
  return `SELECT ${[...typed, `x.${q(FILE_COLUMN)}`, `x.${q(LINE_COLUMN)}`].join(', ')}, ${fit} AS ${q(UNFIT_REASON)}
FROM (SELECT s.*${casts.length ? ', ' + casts.join(', ') : ''} FROM ${withTexts} s${d.computeOnce}) x`;
}

/**
 * A misfit value as a quarantine reason names it: its text, cut to 80 characters. A power of ten
 * longer than that (PostgreSQL's jsonb writes `1e999` as a 1,000-digit integer) is named as such:
 * `1e999`, `-1e999`. (The sign is dropped with replace, which every engine spells alike.)
 */
function shownValue(d: Dialect, t: string): string {
  const power = `${d.matches(t, '[+-]?10*([.]0*)?')} AND length(${t}) > 80`;
  const exponent = `CAST(length(split_part(replace(replace(${t}, '-', ''), '+', ''), '.', 1)) - 1 AS ${d.types.text})`;
  return `CASE WHEN ${power} THEN CASE WHEN ${t} LIKE '-%' THEN '-1e' ELSE '1e' END || ${exponent} ELSE left(${t}, 80) END`;
}

function text(s: string): string {
  return `"${s.replace(/'/g, "''")}"`;
}

function identity(model: ColumnModel, d: Dialect, alias: string): string[] {
  return [...model.keys.map((k) => k.name), ...model.seq.map((s) => s.name), OP, HASH].map((c) => `${alias}.${d.quote(c)}`);
}

/** Columns of the event log's rows (and of a commit's valid and new events), in order. */
export function logColumns(model: ColumnModel): string[] {
  return [...model.source.map((c) => c.name), OP, HASH];
}

export function appendEventsSql(model: ColumnModel, d: Dialect, names: StoreNames, version?: number): string {
  const q = d.quote;
  const cols = logColumns(model);
  // The commit's number: a parameter ($1), or written in where the statement runs without any.
  const commit = version === undefined ? '$1' : String(Math.trunc(version));
  return `INSERT INTO ${written(names, 'events', q)} (${[...cols, COMMIT].map(q).join(', ')})
SELECT ${cols.map(q).join(', ')}, CAST(${commit} AS ${d.types.int}) FROM ${q(TMP.newEvents)}`;
}

/**
 * The event log `from` re-derived under the current flow (rebuild), as a query: operations
 * re-evaluated, payload hashes recomputed, duplicates under the new identity dropped (the earliest
 * commit kept).
 */
export function relogSelectSql(flow: Flow, model: ColumnModel, d: Dialect, from: string): string {
  const q = d.quote;
  const cols = logColumns(model);
  const id = identity(model, d, 'e');
  return `WITH c AS (SELECT ${model.source.map((c) => q(c.name)).join(', ')},
  CASE WHEN ${q(COMMIT)} = ${FOLDED_COMMIT} THEN ${q(OP)} ELSE ${opExpr(flow)} END AS ${q(OP)}, ${q(COMMIT)} FROM ${q(from)}),
e AS (SELECT ${eventProjection(model, d).join(', ')}, ${q(COMMIT)} FROM c)
${firstOfEachSql(d, { columns: [...cols, COMMIT].map((c) => `e.${q(c)}`), names: [...cols, COMMIT], from: 'e', partition: id, order: [`e.${q(COMMIT)}`] })}`;
}

/**
 * The batch's quarantined records, with their raw text: as written in the file where the reader
 * kept it (RAW_COLUMN), else the staged values as a JSON object (a table's rows, Parquet).
 */
export function quarantineSql(d: Dialect, names: StoreNames, staged: ColumnInfo[]): string {
  const q = d.quote;
  const sourceCols = sourceColumnsOf(staged);
  const reserialized = sourceCols.length ? d.toText(d.jsonObject(sourceCols.map((c) => [c.name, `s.${q(c.name)}`, c.type]))) : `CAST(NULL AS ${d.types.text})`;
  const raw = staged.some((c) => c.name === RAW_COLUMN) ? `coalesce(s.${q(RAW_COLUMN)}, ${reserialized})` : reserialized;
  return `INSERT INTO ${q(names.quarantine)} (${q(COMMIT)}, file, line, reason, raw)
SELECT CAST($1 AS ${d.types.int}), b.${q(FILE_COLUMN)}, b.${q(LINE_COLUMN)}, b.${q(REASON)}, ${raw}
FROM ${q(TMP.batch)} b JOIN ${q(TMP.stage)} s
  ON s.${q(FILE_COLUMN)} IS NOT DISTINCT FROM b.${q(FILE_COLUMN)} AND s.${q(LINE_COLUMN)} = b.${q(LINE_COLUMN)}
WHERE b.${q(REASON)} IS NOT NULL`;
}
