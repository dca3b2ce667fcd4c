/**
 * PostgreSQL types a batch with plain casts first (Dialect.castOrFail; plan/record-failures.ts
 * mapBatch): its tryCast is a plpgsql helper that opens a subtransaction per value. A value that
 * does not fit fails that statement, which is undone, and the batch is typed again with tryCast:
 * the record is quarantined with why, as before, and every other value is the same either way.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import type { Driver } from '../../src/dialects/driver.js';
import { QueryError } from '../../src/errors.js';
import { applyFiles, defineFlow, resolveInputs } from '../../src/index.js';
import { engines } from '../engines.js';

const dir = mkdtempSync(path.join(os.tmpdir(), 'scd-optimistic-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const flow = defineFlow({
  target: 'm',
  keys: 'id',
  sequenceBy: 'seq',
  columnTypes: { n: 'bigint', d: 'decimal(10,2)', x: 'double', day: 'date', t: 'timestamp' },
});

/** Records as written (a JSON number beyond 2^53 stays as written). */
const GOOD = [
  '{"id":1,"seq":1,"n":9007199254740993,"d":"12345678.25","x":0.1,"day":"2024-02-29","t":"2025-03-01 10:00:00.123456"}',
  '{"id":2,"seq":1,"n":-5,"d":0.5,"x":-1e308,"day":"2025-12-31","t":"2025-03-01T10:00:00+05:30"}',
];
/** One value that does not fit per record, each of a kind the shape check lets through. */
const MISFITS = [
  '{"id":3,"seq":1,"n":99999999999999999999}',
  '{"id":4,"seq":1,"d":123456789012.5}',
  '{"id":5,"seq":1,"x":1e-400}',
  '{"id":6,"seq":1,"day":"2025-02-30"}',
  '{"id":7,"seq":1,"t":"2025-02-30 10:00:00"}',
];

/** The batch's typing statements as they ran, and whether each failed. */
function typingStatements(driver: Driver): Array<{ tryCasts: boolean; failed: boolean }> {
  const seen: Array<{ tryCasts: boolean; failed: boolean }> = [];
  const run = driver.run.bind(driver);
  driver.run = async (sql: string, params?: unknown[]) => {
    if (!/^CREATE TEMP TABLE "_scd_batch"/.test(sql)) return run(sql, params);
    const entry = { tryCasts: sql.includes('_scd_try_cast'), failed: false };
    seen.push(entry);
    try {
      return await run(sql, params);
    } catch (e) {
      entry.failed = e instanceof QueryError;
      throw e;
    }
  };
  return seen;
}

async function apply(driver: Driver, name: string, lines: string[]) {
  const file = path.join(dir, `${name}.ndjson`);
  writeFileSync(file, `${lines.join('\n')}\n`);
  return applyFiles(driver, flow, resolveInputs([file]));
}

const stored = async (driver: Driver) =>
  driver.query(
    `SELECT CAST(id AS integer) AS id, CAST(n AS text) AS n, CAST(d AS text) AS d, CAST(x AS text) AS x, CAST(day AS text) AS day, CAST(t AS text) AS t FROM m ORDER BY id`,
  );

for (const engine of engines.filter((e) => e.name !== 'duckdb'))
  describe(`${engine.name}: a batch typed with plain casts, then with try casts`, () => {
    it('a batch whose values all fit is typed once, with plain casts, exactly', async () => {
      const driver = await engine.open();
      try {
        const typing = typingStatements(driver);
        const result = await apply(driver, 'good', GOOD);
        expect([result.eventsApplied, result.quarantined]).toEqual([2, 0]);
        expect(typing).toEqual([{ tryCasts: false, failed: false }]);
        expect(await stored(driver)).toEqual([
          { id: 1, n: '9007199254740993', d: '12345678.25', x: '0.1', day: '2024-02-29', t: '2025-03-01 10:00:00.123456+00' },
          { id: 2, n: '-5', d: '0.50', x: '-1e+308', day: '2025-12-31', t: '2025-03-01 04:30:00+00' },
        ]);
      } finally {
        await driver.close();
      }
    });

    it('a value that does not fit fails the plain casts; typed again with try casts, only its record is quarantined', async () => {
      const driver = await engine.open();
      try {
        const typing = typingStatements(driver);
        const result = await apply(driver, 'misfits', [...GOOD, ...MISFITS]);
        expect([result.eventsApplied, result.quarantined]).toEqual([2, 5]);
        expect(typing).toEqual([
          { tryCasts: false, failed: true },
          { tryCasts: true, failed: false },
        ]);
        expect((await stored(driver)).map((r) => [r.id, r.x])).toEqual([
          [1, '0.1'],
          [2, '-1e+308'],
        ]);
        const reasons = await driver.query(`SELECT reason FROM "_scd_m_quarantine" ORDER BY line`);
        expect(reasons.map((r) => String(r.reason).replace(/^value .* (does not fit column "\w+").*$/, '$1'))).toEqual([
          'does not fit column "n"',
          'does not fit column "d"',
          'does not fit column "x"',
          'does not fit column "day"',
          'does not fit column "t"',
        ]);
      } finally {
        await driver.close();
      }
    });
  });
