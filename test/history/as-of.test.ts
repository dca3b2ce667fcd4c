/**
 * as-of (versions valid at T: start <= T < end, or current), show (every version of one key and
 * what changed) and the <target>_current view, on the seed's customer dimension.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { applyRows, asOfQuery, type Driver, defineFlow, keyHistory, readRows, readTargetWith } from '../../src/index.js';
import { engines } from '../engines.js';
import { CUSTOMER_BATCHES, CUSTOMER_FLOW, CUSTOMER_TARGET, customerRow } from './fixtures/customers.js';

const flow = defineFlow(CUSTOMER_FLOW);
const tomb = defineFlow({ ...CUSTOMER_FLOW, target: 'dim_customer_t', deletes: 'tombstone' });

/** [customer_id, customer_name, city, __START_AT] of the rows valid at `at`. */
async function asOf(driver: Driver, f = flow, at: string) {
  const rows = await readRows(driver, await asOfQuery(driver, f, at));
  return rows.map((r) => [r.customer_id, r.customer_name, r.city, r.__START_AT]);
}

for (const engine of engines) {
  describe(`${engine.name}: as-of, show, current view`, () => {
    let driver: Driver;
    beforeAll(async () => {
      driver = await engine.open();
      for (const b of CUSTOMER_BATCHES) {
        await applyRows(driver, flow, b);
        await applyRows(driver, tomb, b);
      }
    });
    afterAll(() => driver?.close());

    it('the target is the hand-written history', async () => {
      expect(await readTargetWith(driver, flow)).toEqual(CUSTOMER_TARGET.map(customerRow));
    });

    it('as-of T returns the versions with start <= T < end (or current), whole rows', async () => {
      expect(await readRows(driver, await asOfQuery(driver, flow, '2025-01-01'))).toEqual([
        customerRow(CUSTOMER_TARGET[0]!),
        customerRow(CUSTOMER_TARGET[3]!),
        customerRow(CUSTOMER_TARGET[4]!),
      ]);
      expect(await asOf(driver, flow, '2026-07-01')).toEqual([
        [501, 'Rahul M. Mehta', 'Pune', '2026-06-01'],
        [502, 'Anita Sharma', 'Pune', '2023-06-15'],
        [504, 'Priya Nair', 'Chennai', '2026-03-10'],
      ]);
    });

    it('at boundaries: T equal to a start gives the version starting then; T equal to an end excludes the ended one', async () => {
      // 2026-03-10 ends Bengaluru and starts Pune and Priya.
      expect(await asOf(driver, flow, '2026-03-10')).toEqual([
        [501, 'Rahul Mehta', 'Pune', '2026-03-10'],
        [502, 'Anita Sharma', 'Pune', '2023-06-15'],
        [504, 'Priya Nair', 'Chennai', '2026-03-10'],
      ]);
      // The day before: still Bengaluru, no Priya.
      expect(await asOf(driver, flow, '2026-03-09')).toEqual([
        [501, 'Rahul Mehta', 'Bengaluru', '2024-01-01'],
        [502, 'Anita Sharma', 'Pune', '2023-06-15'],
      ]);
      // Vikram's version ends on 2025-02-01 (his delete): not valid then.
      expect(await asOf(driver, flow, '2025-02-01')).toEqual([
        [501, 'Rahul Mehta', 'Bengaluru', '2024-01-01'],
        [502, 'Anita Sharma', 'Pune', '2023-06-15'],
      ]);
      expect(await asOf(driver, flow, '2025-01-31')).toEqual([
        [501, 'Rahul Mehta', 'Bengaluru', '2024-01-01'],
        [502, 'Anita Sharma', 'Pune', '2023-06-15'],
        [503, 'Vikram Rao', 'Delhi', '2024-05-01'],
      ]);
      // Rahul's very first day; Anita's very first day.
      expect(await asOf(driver, flow, '2024-01-01')).toEqual([
        [501, 'Rahul Mehta', 'Bengaluru', '2024-01-01'],
        [502, 'Anita Sharma', 'Pune', '2023-06-15'],
      ]);
      expect(await asOf(driver, flow, '2023-06-15')).toEqual([[502, 'Anita Sharma', 'Pune', '2023-06-15']]);
    });

    it('before any version: no rows', async () => {
      expect(await asOf(driver, flow, '2023-06-14')).toEqual([]);
      expect(await asOf(driver, flow, '1999-01-01')).toEqual([]);
    });

    it('tombstone flow: a deleted key is not returned after its delete, and is before it', async () => {
      const rows = await readTargetWith(driver, tomb);
      expect(rows.filter((r) => r.customer_id === 503)).toEqual([
        { customer_id: 503, customer_name: 'Vikram Rao', city: 'Delhi', effective_date: '2024-05-01', __START_AT: '2024-05-01', __END_AT: '2025-02-01', __DELETED: false },
        { customer_id: 503, customer_name: null, city: null, effective_date: null, __START_AT: '2025-02-01', __END_AT: null, __DELETED: true },
      ]);
      expect(await asOf(driver, tomb, '2025-06-01')).toEqual([
        [501, 'Rahul Mehta', 'Bengaluru', '2024-01-01'],
        [502, 'Anita Sharma', 'Pune', '2023-06-15'],
      ]);
      expect(await asOf(driver, tomb, '2025-02-01')).toEqual([
        [501, 'Rahul Mehta', 'Bengaluru', '2024-01-01'],
        [502, 'Anita Sharma', 'Pune', '2023-06-15'],
      ]);
      expect(await asOf(driver, tomb, '2025-01-01')).toEqual([
        [501, 'Rahul Mehta', 'Bengaluru', '2024-01-01'],
        [502, 'Anita Sharma', 'Pune', '2023-06-15'],
        [503, 'Vikram Rao', 'Delhi', '2024-05-01'],
      ]);
    });

    it('show: every version of one key, oldest first, with the columns that changed', async () => {
      const h = await keyHistory(driver, flow, { customer_id: '501' });
      expect(h).toEqual([
        { ...customerRow(CUSTOMER_TARGET[0]!), _changed: '(first)', _ties: 0 },
        { ...customerRow(CUSTOMER_TARGET[1]!), _changed: 'city, effective_date', _ties: 0 },
        { ...customerRow(CUSTOMER_TARGET[2]!), _changed: 'customer_name, effective_date', _ties: 0 },
      ]);
      expect(await keyHistory(driver, flow, { customer_id: '502' })).toEqual([{ ...customerRow(CUSTOMER_TARGET[3]!), _changed: '(first)', _ties: 0 }]);
      expect(await keyHistory(driver, flow, { customer_id: '777' })).toEqual([]);
      await expect(keyHistory(driver, flow, { id: '501' })).rejects.toThrow(/not a key/);
    });

    it('the <target>_current view has one row per live key (deleted keys absent), also with tombstones', async () => {
      const cur = async (t: string) =>
        (await driver.query(`SELECT customer_id, city FROM "${t}" ORDER BY customer_id`)).map((r) => ({ customer_id: Number(r.customer_id), city: r.city }));
      const expected = [
        { customer_id: 501, city: 'Pune' },
        { customer_id: 502, city: 'Pune' },
        { customer_id: 504, city: 'Chennai' },
      ];
      expect(await cur('dim_customer_current')).toEqual(expected);
      expect(await cur('dim_customer_t_current')).toEqual(expected);
    });
  });
}
