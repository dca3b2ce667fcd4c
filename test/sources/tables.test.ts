/**
 * Table and query sources: `source: { table }` or `{ query }` in the same database.
 * With a watermark column only rows above the last applied value are read; without one every
 * row is read each time and rows already applied are duplicates.
 */
import { describe, expect, it } from 'vitest';
import { applySourceWith, type Driver, defineFlow, type FlowInput, readTargetWith, ScdError } from '../../src/index.js';
import { engines } from '../engines.js';
import { commitLog, expectAccounted, plain } from './fixtures/util.js';

async function createRaw(driver: Driver, table = 'raw_changes'): Promise<void> {
  await driver.run(`CREATE TABLE ${table} (change_id INTEGER, id INTEGER, ts INTEGER, op VARCHAR(8), name VARCHAR(40))`);
  await insert(driver, table, [
    [1, 1, 1, 'upsert', 'ann'],
    [2, 2, 1, 'upsert', 'bob'],
    [3, 1, 2, 'upsert', 'anne'],
  ]);
}

async function insert(driver: Driver, table: string, rows: Array<[number, number, number, string, string]>): Promise<void> {
  for (const r of rows) await driver.run(`INSERT INTO ${table} VALUES ($1, $2, $3, $4, $5)`, r);
}

const BASE = { target: 'people', keys: ['id'], sequenceBy: 'ts', applyAsDeletes: "op = 'delete'", exceptColumns: ['change_id', 'op'] } satisfies Partial<FlowInput>;

const AFTER_FIRST = [
  { id: 1, ts: 1, name: 'ann', __START_AT: 1, __END_AT: 2 },
  { id: 1, ts: 2, name: 'anne', __START_AT: 2, __END_AT: null },
  { id: 2, ts: 1, name: 'bob', __START_AT: 1, __END_AT: null },
];
const AFTER_SECOND = [
  { id: 1, ts: 1, name: 'ann', __START_AT: 1, __END_AT: 2 },
  { id: 1, ts: 2, name: 'anne', __START_AT: 2, __END_AT: null },
  { id: 2, ts: 1, name: 'bob', __START_AT: 1, __END_AT: 3 },
  { id: 3, ts: 3, name: 'cy', __START_AT: 3, __END_AT: null },
];
const NEW_ROWS: Array<[number, number, number, string, string]> = [
  [4, 2, 3, 'delete', 'bob'],
  [5, 3, 3, 'upsert', 'cy'],
];

for (const engine of engines) {
  describe(`table and query sources on ${engine.name}`, () => {
    it('table with a watermark: the second apply reads only the new rows', async () => {
      const driver = await engine.open();
      try {
        await createRaw(driver);
        const flow = defineFlow({ ...BASE, source: { table: 'raw_changes', watermark: 'change_id' } });
        const r1 = (await applySourceWith(driver, flow)).results;
        expect(r1.map((r) => [r.version, r.rowsRead, r.eventsApplied])).toEqual([[1, 3, 3]]);
        expect(r1[0]!.inputs).toEqual(['table raw_changes']);
        expect(plain(await readTargetWith(driver, flow))).toEqual(AFTER_FIRST);

        await insert(driver, 'raw_changes', NEW_ROWS);
        const r2 = (await applySourceWith(driver, flow)).results[0]!;
        expectAccounted(r2);
        expect(r2).toMatchObject({ version: 2, rowsRead: 2, eventsApplied: 2, duplicates: 0 });
        expect(plain(await readTargetWith(driver, flow))).toEqual(AFTER_SECOND);

        // Nothing new: nothing read.
        const r3 = (await applySourceWith(driver, flow)).results[0];
        if (r3) expect(r3).toMatchObject({ rowsRead: 0, eventsApplied: 0, keysChanged: 0 });
        expect(plain(await readTargetWith(driver, flow))).toEqual(AFTER_SECOND);
      } finally {
        await driver.close();
      }
    });

    it('table without a watermark: every apply reads all rows; the ones applied before are duplicates', async () => {
      const driver = await engine.open();
      try {
        await createRaw(driver);
        const flow = defineFlow({ ...BASE, source: { table: 'raw_changes' } });
        await applySourceWith(driver, flow);
        const again = (await applySourceWith(driver, flow)).results[0]!;
        expectAccounted(again);
        expect(again).toMatchObject({ version: 2, rowsRead: 3, eventsApplied: 0, duplicates: 3, keysChanged: 0 });
        expect(plain(await readTargetWith(driver, flow))).toEqual(AFTER_FIRST);

        await insert(driver, 'raw_changes', NEW_ROWS);
        const third = (await applySourceWith(driver, flow)).results[0]!;
        expectAccounted(third);
        expect(third).toMatchObject({ version: 3, rowsRead: 5, eventsApplied: 2, duplicates: 3 });
        expect(plain(await readTargetWith(driver, flow))).toEqual(AFTER_SECOND);
      } finally {
        await driver.close();
      }
    });

    it('query with a watermark: only the rows it selects, only the new ones', async () => {
      const driver = await engine.open();
      try {
        await createRaw(driver);
        // Rows of change 2 (bob) are filtered out by the query itself.
        const flow = defineFlow({
          ...BASE,
          source: { query: 'SELECT change_id, id, ts, op, upper(name) AS name FROM raw_changes WHERE id <> 2', trusted: true, watermark: 'change_id' },
        });
        const r1 = (await applySourceWith(driver, flow)).results[0]!;
        expect(r1).toMatchObject({ version: 1, rowsRead: 2, eventsApplied: 2, inputs: ['query'] });
        await insert(driver, 'raw_changes', [...NEW_ROWS, [6, 1, 4, 'delete', 'anne']]);
        const r2 = (await applySourceWith(driver, flow)).results[0]!;
        expectAccounted(r2);
        expect(r2).toMatchObject({ version: 2, rowsRead: 2, eventsApplied: 2, duplicates: 0 });
        expect(plain(await readTargetWith(driver, flow))).toEqual([
          { id: 1, ts: 1, name: 'ANN', __START_AT: 1, __END_AT: 2 },
          { id: 1, ts: 2, name: 'ANNE', __START_AT: 2, __END_AT: 4 },
          { id: 3, ts: 3, name: 'CY', __START_AT: 3, __END_AT: null },
        ]);
      } finally {
        await driver.close();
      }
    });

    it('query without a watermark: a second apply is all duplicates', async () => {
      const driver = await engine.open();
      try {
        await createRaw(driver);
        const flow = defineFlow({ ...BASE, source: { query: 'SELECT * FROM raw_changes', trusted: true } });
        const r1 = (await applySourceWith(driver, flow)).results[0]!;
        expect(r1).toMatchObject({ rowsRead: 3, eventsApplied: 3 });
        const r2 = (await applySourceWith(driver, flow)).results[0]!;
        expect(r2).toMatchObject({ rowsRead: 3, eventsApplied: 0, duplicates: 3, versionsAdded: 0, versionsChanged: 0, versionsRemoved: 0 });
        expect(plain(await readTargetWith(driver, flow))).toEqual(AFTER_FIRST);
        expect((await commitLog(driver, 'people')).map((c) => c.inputs)).toEqual([['query'], ['query']]);
      } finally {
        await driver.close();
      }
    });

    it('a schema-qualified table name (raw.customer_changes)', async () => {
      const driver = await engine.open();
      const schema = `raw_${engine.name}_${process.pid}`;
      try {
        await driver.run(`CREATE SCHEMA ${schema}`);
        await createRaw(driver, `${schema}.customer_changes`);
        const flow = defineFlow({ ...BASE, source: { table: `${schema}.customer_changes`, watermark: 'change_id' } });
        const r1 = (await applySourceWith(driver, flow)).results[0]!;
        expect(r1).toMatchObject({ rowsRead: 3, eventsApplied: 3, inputs: [`table ${schema}.customer_changes`] });
        await insert(driver, `${schema}.customer_changes`, NEW_ROWS);
        expect((await applySourceWith(driver, flow)).results[0]).toMatchObject({ rowsRead: 2, eventsApplied: 2 });
        expect(plain(await readTargetWith(driver, flow))).toEqual(AFTER_SECOND);
      } finally {
        await driver.run(`DROP SCHEMA IF EXISTS ${schema} CASCADE`).catch(() => undefined);
        await driver.close();
      }
    });

    it('a table that does not exist: one clear error naming it', async () => {
      const driver = await engine.open();
      try {
        const flow = defineFlow({ ...BASE, source: { table: 'no_such_table', watermark: 'change_id' } });
        const e = await applySourceWith(driver, flow).then(
          () => undefined,
          (err: unknown) => err,
        );
        expect(e).toBeInstanceOf(ScdError);
        expect((e as ScdError).message).toMatch(/cannot read table no_such_table/);
      } finally {
        await driver.close();
      }
    });
  });
}
