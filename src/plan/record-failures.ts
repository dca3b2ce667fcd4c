import { sqlString } from '../dialects/dialect.js';
import type { Driver, RecordSafeExpression } from '../dialects/driver.js';
import { FILE_COLUMN, LINE_COLUMN } from '../dialects/driver.js';
import { isDivisionByZero, isValueError } from '../dialects/value-errors.js';
import { firstLine, ScdError } from '../errors.js';
import { INTERNAL_COLUMN_PREFIX } from '../files/source-keys.js';
import type { Flow } from '../flow/flow.js';
import { TMP } from '../store/names.js';
import type { StagedColumn } from '../typing/cast.js';
import { AS_WRITTEN, batchSql, REASON, type RecordEvaluation, typedStageSql } from './events-sql.js';
import { flowExpressions, shown, spliced } from './expression.js';
import type { ColumnModel } from './model.js';

/**
 * A flow expression that fails on one record's values (a text that does not convert, a division
 * by zero) is that record's problem: the record is quarantined with why, the others go on.
 *
 * - An engine that aborts a transaction on any error (DuckDB) evaluates each expression in a
 *   record-safe form inside the one set-based statement (Driver.recordSafeExpression).
 * - Elsewhere the statement runs the expressions as written (the happy path: one statement). When
 *   it fails on a value, it is undone (a savepoint), the failing records are found by halving the
 *   batch, each tested alone, and the statement runs again with those records' reasons given.
 *
 * A division by zero is told alike on every engine: "division by zero in <field>".
 */

/** More failing records than this stop the run: an expression that fails that often is the flow's problem, not the records'. */
export const MAX_FAILING_RECORDS = 100;

/** The reason of a record an expression divided by zero on. */
export const divisionByZeroReason = (field: string) => `division by zero in ${field}`;
/** The reason of a record an expression failed on otherwise. */
export const failedReason = (field: string, expr: string, why?: string) => `${field} ${shown(expr)} failed on this record${why ? `: ${why}` : ''}`;

/**
 * Map the staged records to the batch (batchSql), each expression's failure on a record its own.
 * Where the dialect's tryCast is dear (Dialect.castOrFail), the batch is first typed with casts
 * that fail the statement on a value that does not fit, and its expressions as written: the happy
 * path, undone (a savepoint) if anything in it fails, and then typed as below. Every value it
 * converts converts alike under tryCast, so the batch is the same either way.
 */
export async function mapBatch(driver: Driver, flow: Flow, model: ColumnModel, staged: ReadonlyMap<string, StagedColumn>, compactedBefore?: string): Promise<void> {
  const params = compactedBefore === undefined ? [] : [compactedBefore];
  const { castOrFail } = driver.dialect;
  if (castOrFail && typeof driver.attempt === 'function') {
    const optimistic = batchSql(flow, model, driver.dialect, staged, compactedBefore, AS_WRITTEN, castOrFail.bind(driver.dialect));
    const error = await driver.attempt(() => driver.run(optimistic, params));
    if (error === undefined) return;
    if (!isValueError(error)) throw error;
  }
  return mapBatchSafely(driver, flow, model, staged, params, compactedBefore);
}

/** mapBatch with the dialect's tryCast: a value that does not fit is a reason, never an error. */
async function mapBatchSafely(
  driver: Driver,
  flow: Flow,
  model: ColumnModel,
  staged: ReadonlyMap<string, StagedColumn>,
  params: unknown[],
  compactedBefore?: string,
): Promise<void> {
  const run = (evaluation: RecordEvaluation) => driver.run(batchSql(flow, model, driver.dialect, staged, compactedBefore, evaluation), params);
  const list = flowExpressions(flow);
  if (!list.length) return run(AS_WRITTEN);
  const safe = await recordSafeEvaluation(driver, flow);
  if (safe) {
    await run(safe);
    return checkFailureCount(driver, flow);
  }
  const error = await attempt(driver, () => run(AS_WRITTEN));
  if (error === undefined) return;
  if (!isValueError(error)) throw error;
  const failures = await findFailingRecords(driver, flow, model, staged);
  await run(givenFailures(driver, failures));
}

/** Each expression in the driver's record-safe form, where the driver has one. */
export async function recordSafeEvaluation(driver: Driver, flow: Flow): Promise<RecordEvaluation | undefined> {
  if (typeof driver.recordSafeExpression !== 'function') return undefined;
  const safe = new Map<string, RecordSafeExpression>();
  for (const [field, expr] of flowExpressions(flow)) safe.set(field, await driver.recordSafeExpression(expr));
  return {
    flag: (field) => safe.get(field)!.value,
    reason: (field, expr) => `CASE WHEN ${safe.get(field)!.dividedByZero} THEN ${sqlString(divisionByZeroReason(field))} ELSE ${sqlString(failedReason(field, expr))} END`,
    join: '',
    carried: '',
  };
}

/** Run fn; a failure is undone and returned (the transaction goes on). */
async function attempt(driver: Driver, fn: () => Promise<void>): Promise<unknown | undefined> {
  if (typeof driver.attempt === 'function') return driver.attempt(fn);
  if (driver.dialect.capabilities.transactions)
    throw new Error(`the ${driver.dialect.name} driver has transactions but no attempt(), so a failed statement cannot be undone alone`);
  try {
    await fn();
    return undefined;
  } catch (e) {
    return e;
  }
}

/** The reason given for a record the expressions failed on, beside the record. */
const GIVEN = `${INTERNAL_COLUMN_PREFIX}given_reason`;

interface Failure {
  file: string | null;
  line: number;
  /** Why the first expression that failed on the record did. */
  reason: string;
  /** Every expression field that failed on it. */
  fields: string[];
}

/**
 * The expressions as written, except where a record is given as failing one: that flag NULL, and
 * the record's reason the first given. (A record's fields are listed between bars: `|a|b|`.)
 */
function givenFailures(driver: Driver, failures: Failure[]): RecordEvaluation {
  const d = driver.dialect;
  const q = d.quote;
  const text = (s: string | null) => `CAST(${s === null ? 'NULL' : sqlString(s)} AS ${d.types.text})`;
  const rows = failures.map((f) => `(${text(f.file)}, CAST(${f.line} AS ${d.types.int}), ${text(f.reason)}, ${text(`|${f.fields.join('|')}|`)})`);
  return {
    flag: (field, e) => `CASE WHEN position(${sqlString(`|${field}|`)} IN coalesce(f.fields, '')) > 0 THEN NULL ELSE coalesce(${spliced(e)}, false) END`,
    reason: () => q(GIVEN),
    carried: `, f.reason AS ${q(GIVEN)}`,
    join: `LEFT JOIN (VALUES ${rows.join(', ')}) AS f(file, line, reason, fields) ON f.file IS NOT DISTINCT FROM t.${q(FILE_COLUMN)} AND f.line = t.${q(LINE_COLUMN)}`,
  };
}

/**
 * The records a flow expression fails on, each with its reason (the first expression that fails
 * on it): each expression is tested over a range of the records numbered in (file, line) order,
 * and a range it fails on is halved until each failing record stands alone.
 */
async function findFailingRecords(driver: Driver, flow: Flow, model: ColumnModel, staged: ReadonlyMap<string, StagedColumn>): Promise<Failure[]> {
  const d = driver.dialect;
  const q = d.quote;
  await driver.run(
    d.scratch(
      TMP.numbered,
      `SELECT ${q(FILE_COLUMN)} AS file, ${q(LINE_COLUMN)} AS line, row_number() OVER (ORDER BY ${q(FILE_COLUMN)}, ${q(LINE_COLUMN)}) AS n FROM ${q(TMP.stage)}`,
    ),
  );
  try {
    const total = Number((await driver.query(`SELECT count(*) AS n FROM ${q(TMP.numbered)}`))[0]!.n);
    const typed = typedStageSql(flow, model, d, staged);
    const found = new Map<number, Failure & { expr: string }>();
    for (const [field, expr] of flowExpressions(flow)) {
      const probe = (lo: number, hi: number) =>
        attempt(driver, () =>
          driver
            .query(
              `SELECT count(CASE WHEN coalesce(${spliced(expr)}, false) THEN 1 END) AS n FROM (${typed}) t JOIN ${q(TMP.numbered)} r
             ON r.file IS NOT DISTINCT FROM t.${q(FILE_COLUMN)} AND r.line = t.${q(LINE_COLUMN)} WHERE r.n BETWEEN ${lo} AND ${hi}`,
            )
            .then(() => undefined),
        );
      const halve = async (lo: number, hi: number): Promise<void> => {
        const error = await probe(lo, hi);
        if (error === undefined) return;
        if (!isValueError(error)) throw error;
        if (lo === hi) {
          const known = found.get(lo);
          if (known) known.fields.push(field);
          else {
            const where = (await driver.query(`SELECT file, CAST(line AS ${d.types.int}) AS line FROM ${q(TMP.numbered)} WHERE n = ${lo}`))[0]!;
            const why = isDivisionByZero(error)
              ? divisionByZeroReason(field)
              : failedReason(field, expr, firstLine((error as Error & { reason?: string }).reason ?? String(error)));
            found.set(lo, { file: where.file === null ? null : String(where.file), line: Number(where.line), reason: why, fields: [field], expr });
          }
          // Each expression's records are found in file and line order: name the first found.
          if (found.size > MAX_FAILING_RECORDS) throw tooMany(flow, [...found.values()][0]!);
          return;
        }
        const mid = Math.floor((lo + hi) / 2);
        await halve(lo, mid);
        await halve(mid + 1, hi);
      };
      if (total > 0) await halve(1, total);
    }
    return [...found.values()];
  } finally {
    await driver.dropTemporary([TMP.numbered]);
  }
}

/**
 * Where every failing record was flagged in the statement (record-safe evaluation), the same limit
 * as where they are found one by one: more than MAX_FAILING_RECORDS stop the run. (Their reasons
 * are scdkit's own, told by how they begin.)
 */
async function checkFailureCount(driver: Driver, flow: Flow): Promise<void> {
  const d = driver.dialect;
  const q = d.quote;
  const begins = (prefix: string) => `left(${q(REASON)}, ${prefix.length}) = ${sqlString(prefix)}`;
  const byField = flowExpressions(flow).map(
    ([field, expr]) => [field, expr, `(${q(REASON)} = ${sqlString(divisionByZeroReason(field))} OR ${begins(failedReason(field, expr))})`] as const,
  );
  const failing = `(${byField.map(([, , cond]) => cond).join(' OR ')})`;
  const count = Number((await driver.query(`SELECT count(*) AS n FROM ${q(TMP.batch)} WHERE ${failing}`))[0]!.n);
  if (count <= MAX_FAILING_RECORDS) return;
  const first = (
    await driver.query(
      `SELECT ${q(FILE_COLUMN)} AS file, CAST(${q(LINE_COLUMN)} AS ${d.types.int}) AS line, ${q(REASON)} AS reason FROM ${q(TMP.batch)} WHERE ${failing} ORDER BY 1, 2 LIMIT 1`,
    )
  )[0]!;
  const [field, expr] = byField.find(([field, expr]) => String(first.reason) === divisionByZeroReason(field) || String(first.reason).startsWith(failedReason(field, expr)))!;
  throw tooMany(flow, { file: first.file === null ? null : String(first.file), line: Number(first.line), reason: String(first.reason), fields: [field], expr });
}

function tooMany(flow: Flow, first: Failure & { expr: string }): ScdError {
  return new ScdError(
    'NOT_APPLIED',
    `${first.fields[0]} ${shown(first.expr)} fails on more than ${MAX_FAILING_RECORDS} records of this commit, first at ${first.file}:${first.line} (${first.reason}); nothing was applied`,
    {
      file: flow.origin,
      field: first.fields[0],
      fix: 'write the expression so it holds for the values the records carry (e.g. guard a division: d <> 0 AND 100 / d > 10)',
    },
  );
}

/**
 * Before a rebuild re-derives the log's operations: applyAsDeletes and applyAsTruncates evaluate
 * on every logged event (one that fails stops the rebuild, naming it, before anything changes).
 * A logged event was applied: it cannot be quarantined after the fact, and quietly reading a
 * failure as "not a delete" would change history.
 */
export async function checkLogEvaluates(driver: Driver, flow: Flow, events: string, folded: string): Promise<void> {
  const d = driver.dialect;
  const q = d.quote;
  const list: Array<[string, string]> = [];
  if (flow.applyAsTruncates) list.push(['applyAsTruncates', flow.applyAsTruncates]);
  if (flow.applyAsDeletes) list.push(['applyAsDeletes', flow.applyAsDeletes]);
  for (const [field, expr] of list) {
    let why: string | undefined;
    if (typeof driver.recordSafeExpression === 'function') {
      const safe = await driver.recordSafeExpression(expr);
      const row = (await driver.query(`SELECT ${safe.dividedByZero} AS z FROM ${q(events)} WHERE NOT (${folded}) AND ${safe.value} IS NULL LIMIT 1`))[0];
      if (row) why = row.z === true ? 'division by zero' : 'its values cannot be evaluated';
    } else {
      const error = await attempt(driver, () =>
        driver.query(`SELECT count(CASE WHEN coalesce(${spliced(expr)}, false) THEN 1 END) AS n FROM ${q(events)} WHERE NOT (${folded})`).then(() => undefined),
      );
      if (error !== undefined && !isValueError(error)) throw error;
      if (error !== undefined) why = isDivisionByZero(error) ? 'division by zero' : firstLine((error as Error & { reason?: string }).reason ?? String(error));
    }
    if (why)
      throw new ScdError('NOT_APPLIED', `${field} ${shown(expr)} fails on a logged event (${why}); nothing was rebuilt`, {
        file: flow.origin,
        field,
        fix: 'write the expression so it holds for every logged record (e.g. guard a division: d <> 0 AND 100 / d > 10)',
      });
  }
}
