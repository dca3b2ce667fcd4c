/**
 * A time given by a person (as-of TIME, compact --before T) on every engine
 * (docs/decisions/0020-a-time-argument-is-checked-before-sql.md): one that does not parse, or that
 * the calendar does not have, is a person's error (ScdError USAGE), never a refused statement; the
 * forms accepted compare exactly against the sequence's type — a zone converted to UTC, a fraction
 * cut (not rounded) to the column's precision, a number floored for an integer sequence — on DuckDB
 * and PostgreSQL alike.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { applyRows, asOfQuery, compact, type Driver, defineFlow, type Flow, latestVersion, readRows, ScdError } from '../../src/index.js';
import { engines } from '../engines.js';
import { CUSTOMER_BATCHES, CUSTOMER_FLOW } from './fixtures/customers.js';

const customers = defineFlow(CUSTOMER_FLOW);
/** Key 1 is 'a' from 09:00, 'b' from 10:00 (no zone); key 2 the same instants in UTC (Z). */
const naive = defineFlow({ target: 'ts_naive', keys: 'id', sequenceBy: 'ts' });
const zoned = defineFlow({ target: 'ts_zoned', keys: 'id', sequenceBy: 'ts' });
const numeric = defineFlow({ target: 'seq_numeric', keys: 'id', sequenceBy: 'seq' });

async function valuesAt(driver: Driver, flow: Flow, at: string): Promise<unknown[]> {
  return (await readRows(driver, await asOfQuery(driver, flow, at))).map((r) => r.v ?? r.city);
}

async function refusal(p: Promise<unknown>): Promise<ScdError> {
  const e = await p.then(
    () => undefined,
    (err: unknown) => err,
  );
  expect(e).toBeInstanceOf(ScdError);
  expect((e as ScdError).code).toBe('USAGE');
  return e as ScdError;
}

for (const engine of engines) {
  describe(`${engine.name}: a time argument`, () => {
    let driver: Driver;
    beforeAll(async () => {
      driver = await engine.open();
      for (const b of CUSTOMER_BATCHES) await applyRows(driver, customers, b);
      await applyRows(driver, naive, [
        { id: 1, ts: '2025-06-15T09:00:00', v: 'a' },
        { id: 1, ts: '2025-06-15T10:00:00', v: 'b' },
      ]);
      await applyRows(driver, zoned, [
        { id: 1, ts: '2025-06-15T09:00:00Z', v: 'a' },
        { id: 1, ts: '2025-06-15T10:00:00Z', v: 'b' },
      ]);
      await applyRows(driver, numeric, [
        { id: 1, seq: 1, v: 'a' },
        { id: 1, seq: 2, v: 'b' },
      ]);
    });
    afterAll(() => driver?.close());

    it('as-of a time that does not parse, or is not in the calendar: one line naming it and the forms', async () => {
      for (const [at, why] of [
        ['June 15', ''],
        ['2025-13-45', ': there is no month 13'],
        ['2025-02-30', ': 2025-02 has 28 days'],
        ['2025-06-15T25:00:00', ': there is no hour 25'],
      ]) {
        for (const flow of [customers, naive, zoned]) {
          const e = await refusal(asOfQuery(driver, flow, at!));
          expect(e.oneLine()).toBe(`"${at}" is not a time${why} (fix: give 2025-06-15, 2025-06-15T09:00:00 or 2025-06-15T09:00:00Z)`);
        }
      }
      const n = await refusal(asOfQuery(driver, numeric, 'June 15'));
      expect(n.oneLine()).toMatch(/^"June 15" is not a number \(fix: the sequence "seq" is \w+: give a number such as 42\)$/);
      // The driver is fine afterwards (PostgreSQL: no aborted transaction left behind).
      expect(await valuesAt(driver, naive, '2025-06-15T09:30:00')).toEqual(['a']);
    });

    it('a date sequence: a date-time falls on its day (in UTC)', async () => {
      expect(await valuesAt(driver, customers, '2026-03-10T09:00:00')).toEqual(await valuesAt(driver, customers, '2026-03-10'));
      expect(await valuesAt(driver, customers, '2026-03-10T01:00:00+02:00')).toEqual(await valuesAt(driver, customers, '2026-03-09'));
      expect(await valuesAt(driver, customers, '2026-03-10')).not.toEqual(await valuesAt(driver, customers, '2026-03-09'));
    });

    it('a timestamp sequence: a zone is converted to UTC, the fraction is cut, not rounded', async () => {
      for (const flow of [naive, zoned]) {
        expect(await valuesAt(driver, flow, '2025-06-15T09:30:00')).toEqual(['a']);
        expect(await valuesAt(driver, flow, '2025-06-15 10:00')).toEqual(['b']);
        // 11:30 at +02:00 is 09:30 UTC (both engines would drop the zone against a column without one).
        for (const at of ['2025-06-15T11:30:00+02:00', '2025-06-15T11:30:00+0200', '2025-06-15T11:30:00+02', '2025-06-15T09:30:00Z'])
          expect(await valuesAt(driver, flow, at), `${flow.target} ${at}`).toEqual(['a']);
        expect(await valuesAt(driver, flow, '2025-06-15T05:30:00-04:30')).toEqual(['b']);
        // A hair before 10:00 is still 'a' (PostgreSQL rounds the seventh digit up to 10:00).
        expect(await valuesAt(driver, flow, '2025-06-15T09:59:59.9999999')).toEqual(['a']);
        expect(await valuesAt(driver, flow, '2025-06-15T08:59:59')).toEqual([]);
      }
    });

    it('a numeric sequence: a number, floored (DuckDB would round 1.5 to 2)', async () => {
      expect(await valuesAt(driver, numeric, '1')).toEqual(['a']);
      expect(await valuesAt(driver, numeric, '1.5')).toEqual(['a']);
      expect(await valuesAt(driver, numeric, '1.99')).toEqual(['a']);
      expect(await valuesAt(driver, numeric, '2')).toEqual(['b']);
      expect(await valuesAt(driver, numeric, '0.5')).toEqual([]);
      expect((await refusal(asOfQuery(driver, numeric, '2025-06-15'))).problem).toBe('"2025-06-15" is not a number');
    });

    it("compact --before a time that does not parse: a person's error, nothing committed", async () => {
      const latest = await latestVersion(driver, customers);
      for (const before of ['June 15', '2025-02-30']) {
        const e = await refusal(compact(driver, customers, before));
        expect(e.message).toMatch(new RegExp(`^"${before}" is not a time`));
      }
      expect((await refusal(compact(driver, numeric, 'soon'))).problem).toBe('"soon" is not a number');
      expect(await latestVersion(driver, customers)).toBe(latest);
      // A valid one still compacts.
      const r = await compact(driver, numeric, '2');
      expect(r.operation).toBe('compact');
    });
  });
}
