/**
 * Every quarantined CSV record carries its own raw text and its own line, through `bin/scd`, and
 * DuckDB and PostgreSQL quarantine the same records alike (SEMANTICS §6; decision 0210): quoted
 * values over several lines before and after bad records, short and long records, values that do
 * not fit, CRLF endings (a record's raw text never holds its line ending, only the breaks inside
 * its quoted values), a BOM, unicode, and a line of invalid UTF-8 (its bytes shown as \xHH, the
 * other records' raw text as written, never re-serialized), and a NUL byte.
 */
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { describe, it } from 'vitest';
import { cliDatabases, cliTestDir } from '../history/fixtures/cli-databases.js';
import { parseNdjson, scdOk } from '../history/fixtures/history.js';
import { mkdir } from './fixtures/util.js';

const tmp = cliTestDir();

const FLOW = { target: 'payments', keys: 'id', sequenceBy: 'seq', columnTypes: { amount: 'decimal(12,2)', seq: 'bigint' } };
const FIELDS = (found: number) => `expected 4 fields, found ${found}`;
const UNFIT = (value: string) => new RegExp(`^value ${value} does not fit column "amount"`);

interface Expected {
  line: number;
  raw: string;
  reason: string | RegExp;
}

/**
 * The input files as bytes, each with the records it quarantines (its own line and raw text) and
 * the keys it applies. Each file is its own commit.
 */
const FILES: Array<{ name: string; bytes: Buffer; quarantined: Expected[]; applied: number[] }> = [
  {
    // Quoted values over two lines before and after the bad records; a BOM; unicode.
    name: 'multiline.csv',
    bytes: Buffer.from(
      '\uFEFFid,seq,amount,note\n' +
        '1,1,10.50,"first\nline two"\n' + // lines 2-3
        '2,1,7\n' + // line 4: short
        '3,1,abc,"naïve ü"\n' + // line 5: bad value
        '4,1,1.25,"ok 🎉"\n' + // line 6
        '5,1,1,2,3\n' + // line 7: long
        '6,1,2.5,"multi\nafter, bad"\n' + // lines 8-9
        '7,1,x9,"quoted ""q"""\n' + // line 10: bad value
        '8,1,-0.01,\n' + // line 11
        '9,1,1e999,"spans\ntwo"\n' + // lines 12-13: bad value over two lines
        '10,1,3,end\n', // line 14
    ),
    quarantined: [
      { line: 4, raw: '2,1,7', reason: FIELDS(3) },
      { line: 5, raw: '3,1,abc,"naïve ü"', reason: UNFIT('abc') },
      { line: 7, raw: '5,1,1,2,3', reason: FIELDS(5) },
      { line: 10, raw: '7,1,x9,"quoted ""q"""', reason: UNFIT('x9') },
      { line: 12, raw: '9,1,1e999,"spans\ntwo"', reason: UNFIT('1e999') },
    ],
    applied: [1, 4, 6, 8, 10],
  },
  {
    // CRLF endings: a quoted CRLF inside a value stays in the raw text, the line's own CRLF does not.
    name: 'crlf.csv',
    bytes: Buffer.from(
      'id,seq,amount,note\r\n' +
        '11,1,1.5,x\r\n' + // line 2
        '12,1,7\r\n' + // line 3: short
        '13,1,abc,bad\r\n' + // line 4: bad value
        '14,1,2,"é\r\nz"\r\n' + // lines 5-6
        '15,1,1,2,3\r\n' + // line 7: long
        '16,1,no,"two\r\nlines"\r\n' + // lines 8-9: bad value
        '17,1,4,€\r\n', // line 10
    ),
    quarantined: [
      { line: 3, raw: '12,1,7', reason: FIELDS(3) },
      { line: 4, raw: '13,1,abc,bad', reason: UNFIT('abc') },
      { line: 7, raw: '15,1,1,2,3', reason: FIELDS(5) },
      { line: 8, raw: '16,1,no,"two\r\nlines"', reason: UNFIT('no') },
    ],
    applied: [11, 14, 17],
  },
  {
    // A line of invalid UTF-8 beside records with bad values: each its own text.
    name: 'invalid-utf8.csv',
    bytes: Buffer.concat([
      Buffer.from('\uFEFFid,seq,amount,note\n21,1,1.5,ok\n22,1,2,'), // lines 1-3
      Buffer.from([0xff, 0xfe]),
      Buffer.from(' bad\n23,1,abc,"ü"\n24,1,zz,"x\ny"\n25,1,3,"日本"\n'), // lines 4, 5-6, 7
    ]),
    quarantined: [
      { line: 3, raw: '22,1,2,\\xFF\\xFE bad', reason: 'invalid UTF-8' },
      { line: 4, raw: '23,1,abc,"ü"', reason: UNFIT('abc') },
      { line: 5, raw: '24,1,zz,"x\ny"', reason: UNFIT('zz') },
    ],
    applied: [21, 25],
  },
  {
    // Every record on its own line, a blank line and CRLF endings: DuckDB's reader reads it as written.
    name: 'plain-crlf.csv',
    bytes: Buffer.from('id,seq,amount,note\r\n31,1,abc,é\r\n\r\n32,1,2,"a, b"\r\n33,1,-,z\r\n'),
    quarantined: [
      { line: 2, raw: '31,1,abc,é', reason: UNFIT('abc') },
      { line: 5, raw: '33,1,-,z', reason: UNFIT('-') },
    ],
    applied: [32],
  },
  {
    // A NUL byte: no engine's text holds one, so its record is quarantined (shown as \x00).
    name: 'nul.csv',
    bytes: Buffer.from('id,seq,amount,note\n41,1,1,"a\u0000b"\n42,1,2,ok\n'),
    quarantined: [{ line: 2, raw: '41,1,1,"a\\x00b"', reason: 'a NUL character in a field' }],
    applied: [42],
  },
];

/** The engine's own name of the column's type, in a reason, is the one difference allowed. */
const sameOnEveryEngine = (reason: string) => reason.replace(/\("[^"]*"\)/g, '(type)');

describe('a quarantined CSV record carries its own raw text and line, through bin/scd', { timeout: 600_000 }, () => {
  it('on every engine alike: multi-line values around bad records, short and long records, bad values, CRLF, a BOM, unicode, invalid UTF-8, a NUL', async ({ expect }) => {
    const seen = new Map<string, Array<Record<string, unknown>>>();
    // One engine after another: the CLI runs in this process, one command at a time.
    for (const db of cliDatabases) {
      const dir = mkdir(tmp.dir, `csv-quarantine-${db.name}`);
      const flowFile = path.join(dir, 'flow.json');
      writeFileSync(flowFile, JSON.stringify({ ...FLOW, ...db.settings(dir) }, null, 2));
      for (const f of FILES) {
        writeFileSync(path.join(dir, f.name), f.bytes);
        const [applied] = parseNdjson((await scdOk(['apply', flowFile, '--input', f.name, '--json'], dir)).stdout);
        expect(applied, `${db.name} ${f.name}`).toMatchObject({ eventsApplied: f.applied.length, quarantined: f.quarantined.length });
      }
      const ids = parseNdjson((await scdOk(['export', flowFile, '--format', 'ndjson'], dir)).stdout).map((r) => Number(r.id));
      expect(
        ids.sort((a, b) => a - b),
        db.name,
      ).toEqual(FILES.flatMap((f) => f.applied).sort((a, b) => a - b));
      const rows = parseNdjson((await scdOk(['quarantine', flowFile, '--format', 'ndjson'], dir)).stdout).map((r) => ({
        file: path.basename(String(r.file)),
        line: Number(r.line),
        raw: r.raw,
        reason: String(r.reason),
      }));
      for (const f of FILES) {
        const got = rows.filter((r) => r.file === f.name).sort((a, b) => a.line - b.line);
        expect(
          got.map(({ line, raw }) => ({ line, raw })),
          `${db.name} ${f.name}`,
        ).toEqual(f.quarantined.map(({ line, raw }) => ({ line, raw })));
        got.forEach((r, k) => {
          const want = f.quarantined[k]!.reason;
          if (typeof want === 'string') expect(r.reason, `${db.name} ${f.name} line ${r.line}`).toBe(want);
          else expect(r.reason, `${db.name} ${f.name} line ${r.line}`).toMatch(want);
        });
      }
      seen.set(
        db.name,
        rows.map((r) => ({ ...r, reason: sameOnEveryEngine(r.reason) })).sort((a, b) => a.file.localeCompare(b.file) || a.line - b.line),
      );
    }
    const [first, ...others] = [...seen.entries()];
    for (const [name, rows] of others) expect(rows, `${name} quarantines as ${first![0]} does`).toEqual(first![1]);
  });

  it('a header of names equal but for case, in a file with a bad record: the good records apply, the bad one is quarantined alone', async ({ expect }) => {
    // One engine after another: the CLI runs in this process, one command at a time.
    for (const db of cliDatabases) {
      const dir = mkdir(tmp.dir, `csv-names-${db.name}`);
      const flowFile = path.join(dir, 'flow.json');
      writeFileSync(flowFile, JSON.stringify({ target: 'people', keys: 'id', sequenceBy: 'seq', ...db.settings(dir) }, null, 2));
      writeFileSync(path.join(dir, 'people.csv'), 'id,seq,Name,name\n1,1,Zoë,zoe\n2,1\n3,1,"Ann\nB",ann\n');
      const [applied] = parseNdjson((await scdOk(['apply', flowFile, '--input', 'people.csv', '--json'], dir)).stdout);
      expect(applied, db.name).toMatchObject({ rowsRead: 3, eventsApplied: 2, quarantined: 1 });
      const rows = parseNdjson((await scdOk(['export', flowFile, '--format', 'ndjson'], dir)).stdout);
      // DuckDB's names ignore case: the second is name_1 there, as its reader names it.
      expect(
        rows.map((r) => Object.values(r).slice(0, 4)),
        db.name,
      ).toEqual([
        [1, 1, 'Zoë', 'zoe'],
        [3, 1, 'Ann\nB', 'ann'],
      ]);
      const quarantine = parseNdjson((await scdOk(['quarantine', flowFile, '--format', 'ndjson'], dir)).stdout);
      expect(
        quarantine.map((q) => [q.line, q.raw, q.reason]),
        db.name,
      ).toEqual([[3, '2,1', 'expected 4 fields, found 2']]);
    }
  });
});
