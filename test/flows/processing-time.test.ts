/**
 * sequenceBy: { processingTime: true } (docs/FLOWS.md "Processing time"), on every engine: each
 * commit stamps its records with its time, which is their sequence; the order of arrival is taken
 * as the order of truth. Records of one key within one commit tie (SEMANTICS §3), whatever their
 * line order.
 */
import { describe, expect, it } from 'vitest';
import { applyRows, type Driver, defineFlow, readTargetWith, ScdError } from '../../src/index.js';
import { storeNames } from '../../src/store/names.js';
import { engines } from '../engines.js';

const flow = defineFlow({ target: 'dim_pt', keys: 'id', sequenceBy: { processingTime: true } });
const ms = (v: unknown) => new Date(v as string | Date).getTime();

async function withDriver<T>(open: () => Promise<Driver>, fn: (driver: Driver) => Promise<T>): Promise<T> {
  const driver = await open();
  try {
    return await fn(driver);
  } finally {
    await driver.close();
  }
}

for (const engine of engines) {
  describe(`${engine.name}: processing time`, () => {
    it("stamps each commit's records with the commit's time: later commits are later versions", async () => {
      await withDriver(engine.open, async (driver) => {
        const t0 = Date.now();
        await applyRows(driver, flow, [
          { id: 1, city: 'Pune' },
          { id: 2, city: 'Delhi' },
        ]);
        const t1 = Date.now();
        await new Promise((r) => setTimeout(r, 5));
        const second = await applyRows(driver, flow, [{ id: 1, city: 'Bengaluru' }]);
        const t2 = Date.now();
        expect(second.versionsClosed).toBe(1);
        const rows = await readTargetWith(driver, flow);
        // The stamping column is the sequence, excepted from the output like an implied column.
        expect(rows.map((r) => Object.keys(r).sort())).toEqual(Array(3).fill(['__END_AT', '__START_AT', 'city', 'id']));
        expect(rows.map((r) => [r.id, r.city, r.__END_AT === null])).toEqual([
          [1, 'Pune', false],
          [1, 'Bengaluru', true],
          [2, 'Delhi', true],
        ]);
        const [pune, bengaluru, delhi] = rows;
        // One instant per commit, within the commit's run.
        expect(ms(pune!.__START_AT)).toBe(ms(delhi!.__START_AT));
        expect(ms(pune!.__START_AT)).toBeGreaterThanOrEqual(t0);
        expect(ms(pune!.__START_AT)).toBeLessThanOrEqual(t1);
        expect(ms(bengaluru!.__START_AT)).toBeGreaterThan(t1);
        expect(ms(bengaluru!.__START_AT)).toBeLessThanOrEqual(t2);
        expect(ms(pune!.__END_AT)).toBe(ms(bengaluru!.__START_AT));
      });
    });

    it('the caveat: a re-sent old change is a new event, and it is now the truth', async () => {
      await withDriver(engine.open, async (driver) => {
        await applyRows(driver, flow, [{ id: 1, city: 'Pune' }]);
        await applyRows(driver, flow, [{ id: 1, city: 'Bengaluru' }]);
        const same = await applyRows(driver, flow, [{ id: 1, city: 'Bengaluru' }]);
        expect([same.eventsApplied, same.duplicates, same.versionsAdded, same.versionsClosed]).toEqual([1, 0, 0, 0]);
        await applyRows(driver, flow, [{ id: 1, city: 'Pune' }]);
        const rows = await readTargetWith(driver, flow);
        expect(rows.map((r) => r.city)).toEqual(['Pune', 'Bengaluru', 'Pune']);
      });
    });

    it('two changes of one key in one commit tie: counted, and the line order does not decide', async () => {
      const twice = [
        { id: 1, city: 'Pune' },
        { id: 1, city: 'Bengaluru' },
      ];
      const targets = [];
      for (const rows of [twice, [...twice].reverse()]) {
        targets.push(
          await withDriver(engine.open, async (driver) => {
            const r = await applyRows(driver, flow, rows);
            expect(r.ties).toBe(2);
            return (await readTargetWith(driver, flow)).map((x) => [x.id, x.city, x.__END_AT]);
          }),
        );
      }
      // SEMANTICS §3: the tie's order is the payload's canonical text ("Bengaluru" < "Pune"): Pune is last.
      expect(targets[0]).toEqual([[1, 'Pune', null]]);
      expect(targets[1]).toEqual(targets[0]);
    });

    it('a record without a key is quarantined with its own line (the stamp leaves the staged rows as they were)', async () => {
      await withDriver(engine.open, async (driver) => {
        const r = await applyRows(driver, flow, [
          { id: 1, city: 'Pune' },
          { id: null, city: 'nowhere' },
          { id: 3, city: 'Goa' },
        ]);
        expect([r.eventsApplied, r.quarantined]).toEqual([2, 1]);
        const q = await driver.query(`SELECT line, raw FROM ${driver.dialect.quote(storeNames(flow.target).quarantine)}`);
        expect(q.map((x) => [Number(x.line), String(x.raw)])).toEqual([[2, '{"id":null,"city":"nowhere"}']]);
      });
    });

    it('refuses a source that has the column it adds, in one line', async () => {
      await withDriver(engine.open, async (driver) => {
        const e = await applyRows(driver, flow, [{ id: 1, _processed_at: '2026-01-01' }]).catch((x) => x);
        expect(e).toBeInstanceOf(ScdError);
        expect((e as ScdError).oneLine()).toContain('"_processed_at"');
        expect(await driver.columns('dim_pt')).toBeUndefined();
      });
    });
  });
}
