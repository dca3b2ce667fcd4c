import { sqlString } from '../dialects/dialect.js';
import type { Driver } from '../dialects/driver.js';
import { FILE_COLUMN, LINE_COLUMN } from '../dialects/driver.js';
import { ScdError } from '../errors.js';
import type { Flow } from '../flow/flow.js';
import { TMP } from '../store/names.js';
import { expectationColumn, expectationReason, REASON } from './events-sql.js';
import { shown } from './expression.js';
import { divisionByZeroReason } from './record-failures.js';

/**
 * Failed records per expectation; a failed "fail" expectation refuses the commit. Expectations
 * judge records that are events: one quarantined for what it is (a null key, an unfit value) is
 * not also a failed expectation, so each record has one fate, counted once. A record that fails
 * several expectations counts in each, as Databricks counts them.
 */
export async function countExpectations(driver: Driver, flow: Flow): Promise<Record<string, number>> {
  const list = Object.entries(flow.expect);
  if (!list.length) return {};
  const q = driver.dialect.quote;
  const judged = `(${q(REASON)} IS NULL OR ${q(REASON)} IN (${list.map(([name]) => sqlString(expectationReason(name))).join(', ')}))`;
  const row = (
    await driver.query(
      `SELECT ${list.map((_, i) => `CAST(sum(CASE WHEN ${q(expectationColumn(i))} OR NOT ${judged} THEN 0 ELSE 1 END) AS INTEGER) AS ${q(`x${i}`)}`).join(', ')} FROM ${q(TMP.batch)}`,
    )
  )[0]!;
  const out: Record<string, number> = {};
  for (const [i, [name, e]] of list.entries()) {
    const failed = Number(row[`x${i}`] ?? 0);
    out[name] = failed;
    if (e.action === 'fail') {
      // A record the expectation could not be evaluated on has failed it as surely as a false one.
      const unevaluated = (
        await driver.query(
          `SELECT ${q(FILE_COLUMN)} AS f, CAST(${q(LINE_COLUMN)} AS INTEGER) AS l, ${q(REASON)} AS r FROM ${q(TMP.batch)} WHERE ${q(expectationColumn(i))} IS NULL ORDER BY 1, 2 LIMIT 1`,
        )
      )[0];
      if (unevaluated)
        throw new ScdError(
          'NOT_APPLIED',
          `expectation "${name}" (${shown(e.sql).slice(1, -1)}) could not be evaluated on the record at ${unevaluated.f}:${unevaluated.l}${ownReason(name, unevaluated.r)}; nothing was applied`,
          {
            file: flow.origin,
            field: `expect.${name}`,
            fix: 'correct that record, or write the expectation so it holds for every value, or change the action to warn, drop or quarantine',
          },
        );
    }
    if (e.action === 'fail' && failed > 0) {
      const first = (
        await driver.query(`SELECT ${q(FILE_COLUMN)} AS f, CAST(${q(LINE_COLUMN)} AS INTEGER) AS l FROM ${q(TMP.batch)} WHERE NOT ${q(expectationColumn(i))} ORDER BY 1, 2 LIMIT 1`)
      )[0]!;
      throw new ScdError(
        'NOT_APPLIED',
        `expectation "${name}" (${shown(e.sql).slice(1, -1)}) failed on ${failed} record${failed === 1 ? '' : 's'}, first at ${first.f}:${first.l}; nothing was applied`,
        {
          file: flow.origin,
          field: `expect.${name}`,
          fix: 'correct those records, or change the action to warn, drop or quarantine',
        },
      );
    }
  }
  return out;
}

/** What the engine said of the record, where its reason is this expectation's own failure (another expression may have failed first). */
function ownReason(name: string, reason: unknown): string {
  const r = String(reason ?? '');
  const field = `expect.${name}.sql`;
  if (r === divisionByZeroReason(field)) return ' (division by zero)';
  const said = r.startsWith(`${field} `) ? /failed on this record: (.*)$/s.exec(r)?.[1] : undefined;
  return said ? ` (${said})` : '';
}
