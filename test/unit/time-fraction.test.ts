/**
 * A time's text as every engine reads it (typing/time-fraction.ts, typing/cast.ts; docs/TYPES.md
 * "Times"): the digits of a fraction beyond the sixth are dropped, never rounded, whatever follows
 * them (an offset); a fraction of six digits or fewer, and a text that is no time, are left as
 * they are; a leap second is no time. Pinned on each local engine.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Driver } from '../../src/index.js';
import { castStaged } from '../../src/typing/cast.js';
import { microsecondText } from '../../src/typing/time-fraction.js';
import { engines } from '../engines.js';

/** Text as written, and the instant it is (null: no time). */
const INSTANTS: Array<[string, string | null]> = [
  ['2025-01-01T23:59:59.9999999Z', '2025-01-01T23:59:59.999999Z'],
  ['2025-01-01T23:59:59.999999999+05:30', '2025-01-01T18:29:59.999999Z'],
  ['2025-01-01 23:59:59.99999950-01', '2025-01-02T00:59:59.999999Z'],
  ['2025-01-01T23:59:59.999999Z', '2025-01-01T23:59:59.999999Z'],
  ['2025-01-01T00:00:00.1+05:30', '2024-12-31T18:30:00.1Z'],
  ['2025-01-01T00:00:00.123+0530', '2024-12-31T18:30:00.123Z'],
  ['2025-01-01T00:00:00Z', '2025-01-01T00:00:00Z'],
  ['2016-12-31T23:59:60Z', null],
  ['2016-12-31T23:59:60.5Z', null],
];

/** Wall-clock text and the time it is (null: no time). */
const WALL_CLOCKS: Array<[string, string | null]> = [
  ['2025-06-30T23:59:59.9999996', '2025-06-30T23:59:59.999999'],
  ['2025-06-30 23:59:59.123456789', '2025-06-30T23:59:59.123456'],
  ['2025-06-30T23:59:59.5', '2025-06-30T23:59:59.5'],
  ['2016-12-31 23:59:60', null],
];

for (const engine of engines) {
  describe(`time text on ${engine.name}`, () => {
    let driver: Driver;
    beforeAll(async () => {
      driver = await engine.open();
    });
    afterAll(async () => {
      await driver.close();
    });
    const literal = (v: string) => `'${v.replace(/'/g, "''")}'`;

    it.each([
      ['an instant', 'timestamptz' as const, INSTANTS],
      ['a wall-clock time', 'timestamp' as const, WALL_CLOCKS],
    ])('%s keeps microseconds (digits beyond dropped), and a leap second is no time', async (_name, kind, cases) => {
      const d = driver.dialect;
      const type = d.types[kind];
      const cast = castStaged(d, 'x', { type: d.types.text, lexical: 'text' }, type, 'UTC').expr;
      // Each value read, against the expected time written with six digits at most (or none).
      const rows = await driver.query(
        `SELECT i, CASE WHEN c IS NULL THEN 'none' WHEN c = e THEN 'same' ELSE 'other' END AS got
         FROM (SELECT i, ${cast} AS c, CAST(y AS ${type}) AS e FROM (VALUES ${cases.map(([v, want], i) => `(${i}, ${literal(v)}, ${want === null ? 'NULL' : literal(want)})`).join(', ')}) v(i, x, y)) w ORDER BY i`,
      );
      expect(rows.map((r) => [cases[Number(r.i)]![0], r.got])).toEqual(cases.map(([v, want]) => [v, want === null ? 'none' : 'same']));
    });

    it('text that is no time, or has six digits or fewer, is left as it is', async () => {
      const d = driver.dialect;
      const texts = ['2025-01-01T00:00:00.123456+05:30', '2025-01-01T00:00:00.1+05:3012345', 'customer 12345678901234567890', '2025-01-01', ''];
      const rows = await driver.query(`SELECT i, ${microsecondText(d, 'x')} AS t FROM (VALUES ${texts.map((v, i) => `(${i}, ${literal(v)})`).join(', ')}) v(i, x) ORDER BY i`);
      expect(rows.map((r) => r.t)).toEqual(texts);
    });
  });
}
