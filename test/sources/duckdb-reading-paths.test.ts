/**
 * DuckDB's JSON staging takes shortcuts for speed (docs/decisions/
 * 0027-duckdb-json-reading-takes-the-cheap-test-first.md); each shortcut has a slow path, and both must give the same records, columns and raw text.
 */
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { applyFiles, defineFlow, openDriver, resolveInputs } from '../../src/index.js';
import { tempDir } from './fixtures/util.js';

const tmp = tempDir('scdkit-reading-paths-');
afterAll(() => tmp.cleanup());

/** Lines past DuckDB's key sample (the first 20,480 lines name the columns). */
const LONG = 20_600;

async function apply(name: string, lines: string[]) {
  const file = path.join(tmp.dir, name);
  writeFileSync(file, lines.join('\n') + '\n');
  const driver = await openDriver(':memory:');
  try {
    const result = await applyFiles(driver, defineFlow({ target: 't', keys: ['id'], sequenceBy: 'n' }), resolveInputs([file]));
    const types = Object.fromEntries((await driver.query(`SELECT column_name AS c, data_type AS t FROM information_schema.columns WHERE table_name = 't'`)).map((r) => [r.c, r.t]));
    const rows = (await driver.query(`SELECT * FROM t ORDER BY id`)).map((r): Record<string, unknown> => ({ ...r, id: Number(r.id) }));
    const quarantine = await driver.query(`SELECT line, reason, raw FROM _scd_t_quarantine ORDER BY line`);
    return { result, types, rows, quarantine };
  } finally {
    await driver.close();
  }
}

describe('DuckDB: JSON staging shortcuts', () => {
  it('a key first seen after the key sample is a column, with its value, and the other records are untouched', async () => {
    const lines = Array.from({ length: LONG }, (_, i) => JSON.stringify({ id: i, n: i, s: `v${i}` }));
    lines[LONG - 3] = JSON.stringify({ id: LONG - 3, n: LONG - 3, s: 'late', fresh: 'x' });
    lines[LONG - 2] = JSON.stringify({ id: LONG - 2, n: 'not a number', s: 'bad' });
    const { result, types, rows, quarantine } = await apply('late-key.ndjson', lines);
    expect(result).toMatchObject({ rowsRead: LONG, eventsApplied: LONG - 1, quarantined: 1 });
    expect(types).toMatchObject({ id: 'BIGINT', n: 'BIGINT', s: 'VARCHAR', fresh: 'VARCHAR' });
    expect(rows.filter((r) => r.fresh !== null)).toEqual([expect.objectContaining({ id: LONG - 3, s: 'late', fresh: 'x' })]);
    expect(rows.find((r) => r.id === 7)).toMatchObject({ s: 'v7', fresh: null });
    expect(quarantine).toEqual([{ line: String(LONG - 1), reason: expect.stringContaining('does not fit column "n"'), raw: lines[LONG - 2] }]);
  });

  it('records that give the same keys in other orders, or fewer of them, need no other column', async () => {
    const orders = [
      (i: number) => `{"id":${i},"n":${i},"s":"a${i}","b":true}`,
      (i: number) => `{"b":false,"s":"b${i}","n":${i},"id":${i}}`,
      (i: number) => `{"n":${i},"id":${i}}`,
      (i: number) => `{"id":${i},"n":${i},"s":"x${i}","b":null}`,
    ];
    const lines = Array.from({ length: 40 }, (_, i) => orders[i % orders.length]!(i));
    const { result, types, rows } = await apply('orders.ndjson', lines);
    expect(result).toMatchObject({ rowsRead: 40, eventsApplied: 40, quarantined: 0 });
    expect(Object.keys(types).filter((c) => !c.startsWith('__'))).toEqual(['id', 'n', 's', 'b']);
    expect(rows.slice(0, 4).map((r) => [r.id, r.s, r.b])).toEqual([
      [0, 'a0', true],
      [1, 'b1', false],
      [2, null, null],
      [3, 'x3', null],
    ]);
  });

  it('lines of spaces, tabs and carriage returns only hold no record; any other character makes one', async () => {
    const lines = ['{"id":1,"n":1}', '', ' \t ', '\t', '{"id":2,"n":2}', ' \f ', '\u00a0', ' x '];
    const { result, quarantine } = await apply('blanks.ndjson', lines);
    expect(result).toMatchObject({ rowsRead: 5, eventsApplied: 2, quarantined: 3 });
    expect(quarantine.map((q) => [Number(q.line), q.raw])).toEqual([
      [6, ' \f '],
      [7, '\u00a0'],
      [8, ' x '],
    ]);
    const crlf = await apply('blanks-crlf.ndjson', ['{"id":1,"n":1}\r', ' \r', '\t\r', '{"id":2,"n":2}\r']);
    expect(crlf.result).toMatchObject({ rowsRead: 2, eventsApplied: 2, quarantined: 0 });
  });
});
