/**
 * Types come from what the good records say, over every record of the commit (docs/TYPES.md): a
 * record that differs from all the others, however late in the file, neither degrades the
 * column's type nor goes unnoticed — it fits the type, or it is quarantined alone.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { applyFiles, defineFlow, openDriver, resolveInputs } from '../../src/index.js';
import { regular } from '../json-records.js';

/** Records a file holds: no sample is taken, so a few hundred show what thousands would. */
const N = 500;

const dir = mkdtempSync(path.join(tmpdir(), 'scdkit-inferred-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** The last record, the column it is about, the type that column gets, and whether it is quarantined. */
const late: Array<[string, Record<string, unknown>, string, string, boolean]> = [
  ['integer, then a fraction', { id: N, n: 1.5 }, 'n', 'DOUBLE', false],
  ['integer, then a text', { id: N, n: 'abc' }, 'n', 'BIGINT', true],
  // JSON.stringify writes a JavaScript number this large with an exponent (1.2345678901234569e+23),
  // which makes the column a double; the same integer written out in digits makes it decimal(38,0).
  ['integer, then one beyond 64 bits written with an exponent', { id: N, n: 1.2345678901234569e23 }, 'n', 'DOUBLE', false],
  ['boolean, then a text', { id: N, b: 'yes' }, 'b', 'BOOLEAN', true],
  ['text, then a number', { id: N, s: 5 }, 's', 'VARCHAR', false],
  ['text, then an object', { id: N, s: { a: 1 } }, 's', 'VARCHAR', false],
  ['date, then a timestamp', { id: N, d: '2024-01-01T10:00:00' }, 'd', 'TIMESTAMP', false],
  ['date, then a text', { id: N, d: 'nope' }, 'd', 'DATE', true],
  ['timestamp, then one with an offset', { id: N, t: '2024-01-01T10:00:00+02:00' }, 't', 'TIMESTAMP WITH TIME ZONE', false],
  ['a key no other record has', { id: N, fresh: 7 }, 'fresh', 'BIGINT', false],
];

async function applyOne(name: string, records: Array<Record<string, unknown>>) {
  const file = path.join(dir, `${name.replace(/\W+/g, '_')}.ndjson`);
  writeFileSync(file, records.map((r) => JSON.stringify(r)).join('\n') + '\n');
  const driver = await openDriver(':memory:');
  const result = await applyFiles(driver, defineFlow({ target: 't', keys: ['id'], sequenceBy: 'n2' }), resolveInputs([file])).catch(async (e) => {
    await driver.close();
    throw e;
  });
  const types = Object.fromEntries((await driver.query(`SELECT column_name AS c, data_type AS t FROM information_schema.columns WHERE table_name = 't'`)).map((r) => [r.c, r.t]));
  const quarantine = await driver.query(`SELECT line, reason, raw FROM _scd_t_quarantine ORDER BY line`);
  return { driver, result, types, quarantine };
}

describe('DuckDB: inferred types over every record', () => {
  it('a regular file gets the narrowest types its values fit, and every record is at its line', async () => {
    const { driver, result, types } = await applyOne(
      'regular',
      Array.from({ length: N }, (_, i) => ({ ...regular(i), n2: i })),
    );
    try {
      expect(result).toMatchObject({ rowsRead: N, eventsApplied: N, quarantined: 0 });
      expect(types).toMatchObject({ id: 'BIGINT', n: 'BIGINT', x: 'DOUBLE', b: 'BOOLEAN', s: 'VARCHAR', d: 'DATE', t: 'TIMESTAMP' });
    } finally {
      await driver.close();
    }
  });

  for (const [name, last, column, type, quarantined] of late) {
    it(`${name} after ${N - 1} records: ${column} is ${type}${quarantined ? ', that record quarantined alone' : ''}`, async () => {
      const records = [...Array.from({ length: N - 1 }, (_, i) => ({ ...regular(i), n2: i })), { ...last, n2: N }];
      const { driver, result, types, quarantine } = await applyOne(name, records);
      try {
        expect(types[column]).toBe(type);
        expect(result).toMatchObject({ rowsRead: N, eventsApplied: quarantined ? N - 1 : N, quarantined: quarantined ? 1 : 0 });
        if (quarantined) {
          expect(quarantine).toHaveLength(1);
          expect(Number(quarantine[0]!.line)).toBe(N);
          expect(String(quarantine[0]!.reason)).toMatch(new RegExp(`does not fit column "${column}"`));
          expect(quarantine[0]!.raw).toBe(JSON.stringify({ ...last, n2: N }));
        }
      } finally {
        await driver.close();
      }
    });
  }
});
