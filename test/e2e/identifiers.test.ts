/**
 * Identifier safety: column names with quotes, semicolons and comment markers, and keys/values
 * with quotes and unicode, survive apply + export without breaking anything.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openDriver } from '../../src/index.js';
import { errorLines, ndjson, parseNdjson, queryDb, scd, scdOk, tablesOf, tempDir } from './fixtures/cli.js';

const KEY = 'clé "id"';
const SEQ = "ts'";
const EVIL = 'a"; drop table x; --';
const EXCEPTED = 'un"tracked\'; select 1; --';

const K1 = `k'1"; drop table x; --`;
const K2 = '日本語 🗝';
const NOTE1 = `Zoë 😀 O'Brien "q" \\ back`;
const NOTE2 = 'line\nbreak\ttab, "comma"';

let tmp: { dir: string; cleanup: () => void };
let dir: string;
let db: string;

beforeAll(async () => {
  tmp = tempDir();
  dir = path.join(tmp.dir, 'w');
  mkdirSync(dir);
  db = path.join(dir, 'w.duckdb');
  writeFileSync(
    path.join(dir, 'flow.json'),
    JSON.stringify({
      target: 'weird',
      keys: [KEY],
      sequenceBy: SEQ,
      // A quoted name with ; and -- inside is still ONE expression.
      applyAsDeletes: `"a""; drop table x; --" = 'gone'`,
      exceptColumns: [EXCEPTED],
      database: 'w.duckdb',
    }),
  );
  const row = (k: string, s: number, evil: string | null, note: string | null) => ({ [KEY]: k, [SEQ]: s, [EVIL]: evil, note, [EXCEPTED]: 'drop me' });
  writeFileSync(path.join(dir, 'b1.ndjson'), ndjson([row(K1, 1, `v1 '"; --`, NOTE1), row(K2, 1, 'x', NOTE2)]));
  writeFileSync(path.join(dir, 'b2.ndjson'), ndjson([row(K1, 2, 'v2', NOTE1), row(K2, 3, 'gone', null)]));
  writeFileSync(
    path.join(dir, 'b3.ndjson'),
    ndjson([
      { [KEY]: null, [SEQ]: 4, [EVIL]: 'no key', note: `'; drop table x; --`, [EXCEPTED]: 'z' },
      { [KEY]: K1, [SEQ]: 5, [EVIL]: 'v2', note: `it's "fine"`, [EXCEPTED]: 'z' },
    ]),
  );
  // A table named x that any injected "drop table x" would remove.
  const driver = await openDriver(db);
  try {
    await driver.run('CREATE TABLE x (i INTEGER)');
    await driver.run('INSERT INTO x VALUES (42)');
  } finally {
    await driver.close();
  }
});
afterAll(() => tmp.cleanup());

const expected = [
  { [KEY]: K1, [SEQ]: 1, [EVIL]: `v1 '"; --`, note: NOTE1, __START_AT: 1, __END_AT: 2 },
  { [KEY]: K1, [SEQ]: 2, [EVIL]: 'v2', note: NOTE1, __START_AT: 2, __END_AT: 5 },
  { [KEY]: K1, [SEQ]: 5, [EVIL]: 'v2', note: `it's "fine"`, __START_AT: 5, __END_AT: null },
  { [KEY]: K2, [SEQ]: 1, [EVIL]: 'x', note: NOTE2, __START_AT: 1, __END_AT: 3 },
];

describe('identifiers and values that look like SQL', () => {
  it('round-trips through apply and export; nothing is dropped or injected', async () => {
    const results = [];
    for (const b of ['b1', 'b2', 'b3']) {
      const r = await scdOk(['apply', 'flow.json', '--input', `${b}.ndjson`, '--json'], dir);
      results.push(JSON.parse(r.stdout.trim()));
    }
    expect(results.map((r) => [r.rowsRead, r.eventsApplied, r.duplicates, r.quarantined])).toEqual([
      [2, 2, 0, 0],
      [2, 2, 0, 0],
      [2, 1, 0, 1],
    ]);
    const out = await scdOk(['export', 'flow.json', '--format', 'ndjson'], dir);
    const rows = parseNdjson(out.stdout);
    expect(rows).toEqual(expected);
    expect(Object.keys(rows[0]!)).toEqual([KEY, SEQ, EVIL, 'note', '__START_AT', '__END_AT']);

    // Table x is still there, with its row.
    expect(await queryDb(db, 'SELECT i FROM x')).toEqual([{ i: 42 }]);
    expect(await tablesOf(db)).toContain('weird');

    // The quarantined record keeps its raw text with the odd names, and a reason naming the key.
    const q = await queryDb(db, 'SELECT line, reason, raw FROM _scd_weird_quarantine');
    expect(q).toHaveLength(1);
    expect(Number(q[0]!.line)).toBe(1);
    expect(String(q[0]!.reason)).toContain(KEY);
    expect(JSON.parse(String(q[0]!.raw))).toMatchObject({ [KEY]: null, [EVIL]: 'no key', note: `'; drop table x; --` });
  });

  it('exports CSV with the odd names quoted so that a CSV reader gets them back', async () => {
    await scdOk(['export', 'flow.json', '--format', 'csv', '--out', 'w.csv'], dir);
    const driver = await openDriver(':memory:');
    try {
      const file = path.join(dir, 'w.csv').replace(/'/g, "''");
      const cols = await driver.query(`SELECT column_name FROM (DESCRIBE SELECT * FROM read_csv('${file}', header = true, all_varchar = true))`);
      expect(cols.map((c) => c.column_name)).toEqual([KEY, SEQ, EVIL, 'note', '__START_AT', '__END_AT']);
      const rows = await driver.query(`SELECT * FROM read_csv('${file}', header = true, all_varchar = true)`);
      expect(rows.map((r) => [r[KEY], r[EVIL], r.note])).toEqual(expected.map((r) => [r[KEY], r[EVIL], r.note]));
    } finally {
      await driver.close();
    }
  });

  it('a flow naming a column that is not in the source shows the odd names in one line', async () => {
    const other = path.join(tmp.dir, 'missing-key');
    mkdirSync(other);
    writeFileSync(path.join(other, 'flow.json'), JSON.stringify({ target: 'weird2', keys: ['clé "ID"'], sequenceBy: SEQ }));
    const r = await scd(['apply', 'flow.json', '--input', path.join(dir, 'b1.ndjson')], other);
    expect(r.code).toBe(1);
    const lines = errorLines(r.stderr);
    expect(lines).toHaveLength(1);
    expect(lines[0]).toContain('clé "ID"');
    expect(lines[0]).toContain(`did you mean "${KEY}"`);
  });
});
