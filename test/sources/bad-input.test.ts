/**
 * Bad and changed input (SEMANTICS §6). No record is lost and none crashes a run.
 *
 * 1. A corpus of malformed input: every record is accounted for (rows read = applied +
 *    duplicates + quarantined), each bad one is in the quarantine table with file, line and
 *    reason, and `scd quarantine FLOW --raw`, fixed by hand and re-fed as a file, is applied.
 * 2. Expectations, like Databricks expectations: warn (counted, applied), drop (counted as
 *    dropped, not applied), quarantine (reason 'expectation "name" failed'), fail (the commit is
 *    refused, nothing applied, one line naming the expectation); counts in `expectations`.
 * 3. Schema changes: a new source column is refused with a message naming it, unless
 *    `schemaEvolution: add-columns` (null in older versions); integer meeting a fraction is
 *    widened to the decimal that holds both (never a double), older values kept; text where integers were, no value fitting, is refused with the fix.
 *
 * (One file, so the PostgreSQL engine (PGlite) starts once for all three.)
 */
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { applyFiles, applyRows, defineFlow, type FlowInput, readTargetWith, resolveInputs, ScdError } from '../../src/index.js';
import { engines } from '../engines.js';
import { assertBuilt, commitLog, expectAccounted, mkdir, ndjson, onDuckFile, plain, quarantined, type Row, scd, scdOk, tempDir } from './fixtures/util.js';

let tmp: { dir: string; cleanup: () => void };
beforeAll(() => {
  tmp = tempDir();
});
afterAll(() => tmp.cleanup());

// ---------------------------------------------------------------------------------------------
// 1. A corpus of malformed input
// ---------------------------------------------------------------------------------------------

const CORPUS_FLOW: FlowInput = { target: 'orders', keys: ['id'], sequenceBy: 'ts' };
const CORPUS_FIRST: Row[] = [
  { id: 1, ts: 1, qty: 5, note: 'a' },
  { id: 2, ts: 1, qty: 6, note: 'b' },
  { id: 3, ts: 1, qty: 1, note: 'c' },
];
const HUGE = 'x'.repeat(1024 * 1024); // a 1 MB string value: big, but a record like any other

/** The corpus, line by line (line numbers are 1-based physical lines; line 10 is empty). */
function corpus(): Buffer {
  const lines: Array<string | Buffer> = [
    '{"id":1,"ts":2,"qty":7,"note":"ok"}', // 1 good
    '{"id":2,"ts":2,"qty":8,"no', // 2 truncated JSON
    '{"id":3,"ts":2,"qty":"seven","note":"wrong type"}', // 3 a string in an integer column
    Buffer.concat([Buffer.from('{"id":4,"ts":2,"qty":1,"note":"caf'), Buffer.from([0xe9, 0xff]), Buffer.from('"}')]), // 4 invalid UTF-8
    '{"ts":2,"qty":2,"note":"no id"}', // 5 missing key
    '{"id":6,"ts":null,"qty":3,"note":"null sequence"}', // 6 null sequence
    JSON.stringify({ id: 7, ts: 2, qty: 4, note: HUGE }), // 7 a 1 MB value: applied
    '[{"id":8,"ts":2}]', // 8 a JSON array
    '42', // 9 a bare number
    '', // 10 an empty line: not a record
    '{"id":9,"ts":2,"qty":"12","note":"numeric text"}', // 11 "12" fits an integer column: applied
    '{"id":10,"ts":"2024-x","qty":1,"note":"bad sequence"}', // 12 an uncastable sequence
  ];
  return Buffer.concat(lines.map((l) => Buffer.concat([typeof l === 'string' ? Buffer.from(l) : l, Buffer.from('\n')])));
}

/** Where each bad record must be, and why (line → reason). */
const BAD: Array<[number, RegExp]> = [
  [2, /malformed JSON/],
  [3, /seven.*does not fit column "qty"/],
  [4, /invalid UTF-8/],
  [5, /key column "id" is null/],
  [6, /sequence column "ts" is null/],
  [8, /not a JSON object/],
  [9, /not a JSON object/],
  [12, /2024-x.*does not fit column "ts"/],
];

for (const engine of engines) {
  describe(`blank lines on ${engine.name}`, () => {
    it('a bad record after blank lines is quarantined at its physical line (readers skip blank lines)', async () => {
      const dir = mkdir(tmp.dir, `blank-${engine.name}`);
      const file = path.join(dir, 'blank.ndjson');
      const lines = [
        '{"id":1,"ts":1,"qty":5}',
        '',
        '{"id":2,"ts":1,"qty":6}',
        '   ',
        '\t',
        '{"id":null,"ts":1,"qty":7}',
        '{"id":4,"ts":null,"qty":8}',
        '',
        '{"id":5,"ts":1,"qty":9}',
      ];
      writeFileSync(file, lines.join('\n') + '\n\n');
      const driver = await engine.open();
      try {
        const r = await applyFiles(driver, defineFlow(CORPUS_FLOW), resolveInputs([file]));
        expectAccounted(r);
        expect(r).toMatchObject({ rowsRead: 5, eventsApplied: 3, quarantined: 2 });
        const q = await quarantined(driver, 'orders');
        expect(q.map((x) => [x.line, x.reason])).toEqual([
          [6, expect.stringMatching(/key column "id" is null/)],
          [7, expect.stringMatching(/sequence column "ts" is null/)],
        ]);
      } finally {
        await driver.close();
      }
    });
  });

  describe(`blank lines in a CSV on ${engine.name}`, () => {
    it('blank lines are skipped; rejected and bad records are quarantined at their physical lines', async () => {
      const dir = mkdir(tmp.dir, `blank-csv-${engine.name}`);
      const driver = await engine.open();
      try {
        const flow = defineFlow(CORPUS_FLOW);
        // Without a rejected line, then with one between the blank lines.
        const files: Array<[string, string[], Array<[number, RegExp]>]> = [
          [
            'a.csv',
            ['id,ts,qty', '1,1,5', '', '2,1,6', ',1,7', '4,,8'],
            [
              [5, /key column "id" is null/],
              [6, /sequence column "ts" is null/],
            ],
          ],
          [
            'b.csv',
            ['id,ts,qty', '1,2,5', '', '2,2,6,extra', '', ',2,7', '4,,8', '5,2,9'],
            [
              [4, /3.*4|4.*3/],
              [6, /key column "id" is null/],
              [7, /sequence column "ts" is null/],
            ],
          ],
        ];
        for (const [name, lines, bad] of files) {
          const file = path.join(dir, name);
          writeFileSync(file, lines.join('\n') + '\n');
          const r = await applyFiles(driver, flow, resolveInputs([file]));
          expectAccounted(r);
          expect(r.quarantined, name).toBe(bad.length);
          const q = (await quarantined(driver, 'orders')).filter((x) => x.file === name);
          expect(
            q.map((x) => x.line),
            name,
          ).toEqual(bad.map(([l]) => l));
          for (const [k, [, reason]] of bad.entries()) expect(q[k]!.reason, `${name} line ${bad[k]![0]}`).toMatch(reason);
        }
      } finally {
        await driver.close();
      }
    });
  });

  describe(`a CSV whose quoted values span lines on ${engine.name}`, () => {
    it('each record is placed on its first line: bad ones after a quoted newline are quarantined at their physical line', async () => {
      const dir = mkdir(tmp.dir, `quoted-csv-${engine.name}`);
      const file = path.join(dir, 'notes.csv');
      // Lines 3, 8, 9 and 12 continue a quoted value (8 is blank inside it); line 4 is blank.
      const lines = ['id,ts,note', '1,1,"two', 'lines"', '', '2,1,"a ""q"" one"', ',1,no key', '4,,"three', '', 'lines"', '5,1,y', ',1,"again', 'no key"'];
      writeFileSync(file, lines.join('\n') + '\n');
      const driver = await engine.open();
      try {
        const flow = defineFlow({ target: 'notes', keys: ['id'], sequenceBy: 'ts' });
        const r = await applyFiles(driver, flow, resolveInputs([file]));
        expectAccounted(r);
        expect(r).toMatchObject({ rowsRead: 6, eventsApplied: 3, quarantined: 3 });
        const q = await quarantined(driver, 'notes');
        expect(q.map((x) => [x.line, x.reason])).toEqual([
          [6, expect.stringMatching(/key column "id" is null/)],
          [7, expect.stringMatching(/sequence column "ts" is null/)],
          [11, expect.stringMatching(/key column "id" is null/)],
        ]);
        expect((await readTargetWith(driver, flow)).map((x) => [x.id, x.note])).toEqual([
          [1, 'two\nlines'],
          [2, 'a "q" one'],
          [5, 'y'],
        ]);
      } finally {
        await driver.close();
      }
    });
  });

  describe(`malformed corpus on ${engine.name}`, () => {
    it('every record is accounted for; each bad one is quarantined with file, line and reason', async () => {
      const dir = mkdir(tmp.dir, `corpus-${engine.name}`);
      const file = path.join(dir, 'corpus.ndjson');
      writeFileSync(file, corpus());
      const flow = defineFlow(CORPUS_FLOW);
      const driver = await engine.open();
      try {
        const r1 = await applyRows(driver, flow, CORPUS_FIRST);
        expectAccounted(r1);
        const r = await applyFiles(driver, flow, resolveInputs([file]));
        expectAccounted(r);
        // 11 records (the empty line is none): 3 applied + 8 quarantined.
        expect(r).toMatchObject({ rowsRead: 11, eventsApplied: 3, duplicates: 0, quarantined: 8, dropped: 0, skipped: 0 });

        const q = await quarantined(driver, 'orders');
        expect(q.map((x) => [x.commit, x.file, x.line])).toEqual(BAD.map(([line]) => [2, 'corpus.ndjson', line]));
        for (const [i, [, reason]] of BAD.entries()) expect(q[i]!.reason, `line ${BAD[i]![0]}`).toMatch(reason);
        // The raw text is kept for what could not be parsed.
        expect(q[0]!.raw).toBe('{"id":2,"ts":2,"qty":8,"no');
        expect(q[2]!.raw).toContain('caf');
        expect(q[5]!.raw).toBe('[{"id":8,"ts":2}]');
        expect(q[6]!.raw).toBe('42');

        const current = plain(await readTargetWith(driver, flow)).filter((x) => x.__END_AT === null);
        expect(current.map((x) => [x.id, x.ts, x.qty, x.note === HUGE ? 'HUGE' : x.note])).toEqual([
          [1, 2, 7, 'ok'],
          [2, 1, 6, 'b'],
          [3, 1, 1, 'c'],
          [7, 2, 4, 'HUGE'],
          [9, 2, 12, 'numeric text'],
        ]);
        expect((current[3]!.note as string).length).toBe(1024 * 1024);
      } finally {
        await driver.close();
      }
    });
  });
}

describe('scd quarantine FLOW --raw, fixed by hand, re-fed as a file (CLI, DuckDB file)', () => {
  it('prints one raw record a line; the fixed file applies them all', async () => {
    assertBuilt();
    const dir = mkdir(tmp.dir, 'refeed');
    writeFileSync(path.join(dir, 'flow.yaml'), 'target: orders\nkeys: [id]\nsequenceBy: ts\ndatabase: orders.duckdb\n');
    writeFileSync(path.join(dir, 'corpus.ndjson'), corpus());
    await onDuckFile(path.join(dir, 'orders.duckdb'), (driver) => applyRows(driver, defineFlow(CORPUS_FLOW), CORPUS_FIRST));
    const applied = await scd(['apply', 'flow.yaml', '--input', 'corpus.ndjson'], dir);
    expect(applied.code, applied.stderr).toBe(0);
    expect(applied.stdout).toMatch(/^commit 2: read 11 rows = 3 applied \+ 0 duplicates \+ 8 quarantined/m);

    const listed = await scdOk(['quarantine', 'flow.yaml', '--format', 'ndjson'], dir);
    const rows = listed.stdout
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as Row);
    expect(rows.map((x) => [x.commit, path.basename(String(x.file)), Number(x.line)])).toEqual(BAD.map(([line]) => [2, 'corpus.ndjson', line]));

    const raw = (await scdOk(['quarantine', 'flow.yaml', '--raw'], dir)).stdout;
    const lines = raw.split('\n');
    expect(lines.pop()).toBe(''); // one record a line, each ended by a newline
    expect(lines).toHaveLength(8);

    // Fixed by hand: each raw line, recognised by its content, rewritten as the record meant.
    const fixes: Array<[RegExp, Row]> = [
      [/^\{"id":2,"ts":2,"qty":8,"no$/, { id: 2, ts: 2, qty: 8, note: 'fixed truncation' }],
      [/seven/, { id: 3, ts: 2, qty: 7, note: 'fixed type' }],
      [/caf/, { id: 4, ts: 2, qty: 1, note: 'café' }],
      [/no id/, { id: 5, ts: 2, qty: 2, note: 'fixed key' }],
      [/null sequence/, { id: 6, ts: 2, qty: 3, note: 'fixed sequence' }],
      [/^\[\{"id":8,"ts":2\}\]$/, { id: 8, ts: 2, qty: 0, note: 'was an array' }],
      [/^42$/, { id: 42, ts: 2, qty: 42, note: 'was a number' }],
      [/2024-x/, { id: 10, ts: 2, qty: 1, note: 'fixed sequence type' }],
    ];
    const fixed = lines.map((l) => {
      const hits = fixes.filter(([re]) => re.test(l));
      expect(hits, `raw line ${l}`).toHaveLength(1);
      return hits[0]![1];
    });
    expect(new Set(fixed.map((f) => f.id)).size).toBe(8);
    writeFileSync(path.join(dir, 'fixed.ndjson'), ndjson(fixed));

    const refed = await scd(['apply', 'flow.yaml', '--input', 'fixed.ndjson', '--json'], dir);
    expect(refed.code, refed.stderr).toBe(0);
    expect(JSON.parse(refed.stdout)).toMatchObject({ version: 3, rowsRead: 8, eventsApplied: 8, duplicates: 0, quarantined: 0 });

    await onDuckFile(path.join(dir, 'orders.duckdb'), async (driver) => {
      const log = await commitLog(driver, 'orders');
      for (const c of log) expect(c.rowsRead).toBe(c.eventsApplied + c.duplicates + c.quarantined);
      const current = plain(await readTargetWith(driver, defineFlow(CORPUS_FLOW))).filter((x) => x.__END_AT === null);
      expect(current.map((x) => [x.id, x.qty, x.note === HUGE ? 'HUGE' : x.note])).toEqual([
        [1, 7, 'ok'],
        [2, 8, 'fixed truncation'],
        [3, 7, 'fixed type'],
        [4, 1, 'café'],
        [5, 2, 'fixed key'],
        [6, 3, 'fixed sequence'],
        [7, 4, 'HUGE'],
        [8, 0, 'was an array'],
        [9, 12, 'numeric text'],
        [10, 1, 'fixed sequence type'],
        [42, 42, 'was a number'],
      ]);
      // The quarantine keeps its history: the fixed records were applied, the bad ones stay listed.
      expect((await quarantined(driver, 'orders')).length).toBe(8);
    });
  });
});

// ---------------------------------------------------------------------------------------------
// 2. Expectations
// ---------------------------------------------------------------------------------------------

const flowWith = (action: 'warn' | 'drop' | 'quarantine' | 'fail'): FlowInput => ({
  target: 'users',
  keys: ['id'],
  sequenceBy: 'ts',
  expect: { valid_email: { sql: "email LIKE '%@%'", action } },
});

const USERS_FIRST: Row[] = [{ id: 9, ts: 1, email: 'first@example.com' }];
// Two of four records fail valid_email: one without '@', one with a null email (not true = failed).
const USERS_BATCH: Row[] = [
  { id: 1, ts: 2, email: 'ann@example.com' },
  { id: 2, ts: 2, email: 'bob.example.com' },
  { id: 3, ts: 2, email: null },
  { id: 4, ts: 2, email: 'dee@example.com' },
];
const ids = (rows: Row[]) => rows.map((r) => r.id);

for (const engine of engines) {
  describe(`expectations on ${engine.name}`, () => {
    it('warn: failed records are counted and applied', async () => {
      const flow = defineFlow(flowWith('warn'));
      const driver = await engine.open();
      try {
        await applyRows(driver, flow, USERS_FIRST);
        const r = await applyRows(driver, flow, USERS_BATCH);
        expectAccounted(r);
        expect(r).toMatchObject({ rowsRead: 4, eventsApplied: 4, dropped: 0, quarantined: 0, expectations: { valid_email: 2 } });
        expect(ids(plain(await readTargetWith(driver, flow)))).toEqual([1, 2, 3, 4, 9]);
        expect((await commitLog(driver, 'users')).map((c) => c.expectations)).toEqual([{ valid_email: 0 }, { valid_email: 2 }]);
      } finally {
        await driver.close();
      }
    });

    it('drop: failed records are counted as dropped and not applied', async () => {
      const flow = defineFlow(flowWith('drop'));
      const driver = await engine.open();
      try {
        await applyRows(driver, flow, USERS_FIRST);
        const r = await applyRows(driver, flow, USERS_BATCH);
        expectAccounted(r);
        expect(r).toMatchObject({ rowsRead: 4, eventsApplied: 2, duplicates: 0, dropped: 2, quarantined: 0, expectations: { valid_email: 2 } });
        expect(ids(plain(await readTargetWith(driver, flow)))).toEqual([1, 4, 9]);
        expect(await quarantined(driver, 'users')).toEqual([]);
        expect((await commitLog(driver, 'users'))[1]).toMatchObject({ dropped: 2, expectations: { valid_email: 2 } });
      } finally {
        await driver.close();
      }
    });

    it('quarantine: failed records go to the quarantine table with file, line and reason', async () => {
      const dir = mkdir(tmp.dir, `quarantine-${engine.name}`);
      const file = path.join(dir, 'batch.ndjson');
      writeFileSync(file, ndjson(USERS_BATCH));
      const flow = defineFlow(flowWith('quarantine'));
      const driver = await engine.open();
      try {
        await applyRows(driver, flow, USERS_FIRST);
        const r = await applyFiles(driver, flow, resolveInputs([file]));
        expectAccounted(r);
        expect(r).toMatchObject({ rowsRead: 4, eventsApplied: 2, dropped: 0, quarantined: 2, expectations: { valid_email: 2 } });
        const q = await quarantined(driver, 'users');
        expect(q.map((x) => [x.commit, x.file, x.line, x.reason])).toEqual([
          [2, 'batch.ndjson', 2, 'expectation "valid_email" failed'],
          [2, 'batch.ndjson', 3, 'expectation "valid_email" failed'],
        ]);
        expect(JSON.parse(q[0]!.raw)).toMatchObject({ id: 2, email: 'bob.example.com' });
        expect(ids(plain(await readTargetWith(driver, flow)))).toEqual([1, 4, 9]);
      } finally {
        await driver.close();
      }
    });

    it('fail: the commit is refused, nothing applied, one line naming the expectation', async () => {
      const flow = defineFlow(flowWith('fail'));
      const driver = await engine.open();
      try {
        await applyRows(driver, flow, USERS_FIRST);
        const before = await readTargetWith(driver, flow);
        const err = await applyRows(driver, flow, USERS_BATCH).then(
          () => undefined,
          (e: unknown) => e,
        );
        expect(err).toBeInstanceOf(ScdError);
        const line = (err as ScdError).oneLine();
        expect(line).not.toContain('\n');
        expect(line).toMatch(/expectation "valid_email" .*failed on 2 records.*nothing was applied/);
        expect(await readTargetWith(driver, flow)).toEqual(before);
        expect((await commitLog(driver, 'users')).length).toBe(1);
        // A batch where every record passes is applied.
        const ok = await applyRows(driver, flow, [USERS_BATCH[0]!, USERS_BATCH[3]!]);
        expect(ok).toMatchObject({ version: 2, eventsApplied: 2, expectations: { valid_email: 0 } });
      } finally {
        await driver.close();
      }
    });

    it('several expectations in one flow: counts per expectation; every record counted once', async () => {
      const flow = defineFlow({
        target: 'users',
        keys: ['id'],
        sequenceBy: 'ts',
        expect: {
          has_domain: { sql: "email LIKE '%.%'", action: 'warn' },
          positive_age: { sql: 'age > 0', action: 'drop' },
          valid_email: { sql: "email LIKE '%@%'", action: 'quarantine' },
        },
      });
      const driver = await engine.open();
      try {
        const r = await applyRows(driver, flow, [
          { id: 1, ts: 1, email: 'ann@example.com', age: 30 }, // passes all
          { id: 2, ts: 1, email: 'bob@localhost', age: 40 }, // warned
          { id: 3, ts: 1, email: 'cy@example.com', age: -1 }, // dropped
          { id: 4, ts: 1, email: 'no-at.example.com', age: 20 }, // quarantined
          { id: 5, ts: 1, email: 'nothing', age: 0 }, // fails all three: counted once
        ]);
        expectAccounted(r);
        expect(r.expectations).toEqual({ has_domain: 2, positive_age: 2, valid_email: 2 });
        expect(r.rowsRead).toBe(5);
        expect(r.eventsApplied).toBe(2);
        expect(r.dropped + r.quarantined).toBe(3);
        expect(ids(plain(await readTargetWith(driver, flow)))).toEqual([1, 2]);
      } finally {
        await driver.close();
      }
    });
  });
}

describe('a failed "fail" expectation through bin/scd (DuckDB file)', () => {
  it('prints one line naming the expectation and the fix, exits non-zero, applies nothing', async () => {
    assertBuilt();
    const dir = mkdir(tmp.dir, 'cli-fail');
    writeFileSync(
      path.join(dir, 'flow.yaml'),
      `target: users\nkeys: [id]\nsequenceBy: ts\ndatabase: users.duckdb\nexpect:\n  valid_email:\n    sql: "email LIKE '%@%'"\n    action: fail\n`,
    );
    writeFileSync(path.join(dir, 'batch.ndjson'), ndjson(USERS_BATCH));
    await onDuckFile(path.join(dir, 'users.duckdb'), (driver) => applyRows(driver, defineFlow(flowWith('fail')), USERS_FIRST));
    const r = await scd(['apply', 'flow.yaml', '--input', 'batch.ndjson'], dir);
    expect(r.code).not.toBe(0);
    expect(r.stdout).toBe('');
    const lines = r.stderr.split('\n').filter((l) => l.trim() !== '' && !l.startsWith('  '));
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatch(/^scd: .*expectation "valid_email".*failed on 2 records, first at .*batch\.ndjson:2; nothing was applied.*\(fix: /);
    await onDuckFile(path.join(dir, 'users.duckdb'), async (driver) => {
      expect((await commitLog(driver, 'users')).length).toBe(1);
    });
  });
});

// ---------------------------------------------------------------------------------------------
// 3. Schema changes
// ---------------------------------------------------------------------------------------------

const ACCOUNTS: FlowInput = { target: 'accounts', keys: ['id'], sequenceBy: 'ts' };
const ACCOUNTS_FIRST = [
  { id: 1, ts: 1, name: 'ann', amount: 5 },
  { id: 2, ts: 1, name: 'bob', amount: 7 },
];

async function refusal(p: Promise<unknown>): Promise<ScdError> {
  const e = await p.then(
    () => undefined,
    (err: unknown) => err,
  );
  expect(e).toBeInstanceOf(ScdError);
  return e as ScdError;
}

for (const engine of engines) {
  describe(`schema changes on ${engine.name}`, () => {
    it('a new source column is refused with a message naming it; nothing is applied', async () => {
      const flow = defineFlow(ACCOUNTS);
      const driver = await engine.open();
      try {
        await applyRows(driver, flow, ACCOUNTS_FIRST);
        const before = await readTargetWith(driver, flow);
        const e = await refusal(applyRows(driver, flow, [{ id: 1, ts: 2, name: 'ann', amount: 5, email: 'ann@example.com' }]));
        expect(e.message).toMatch(/new source column "email"/);
        expect(e.oneLine()).toMatch(/\(fix: .*schemaEvolution: add-columns/);
        expect(await readTargetWith(driver, flow)).toEqual(before);
        expect((await commitLog(driver, 'accounts')).length).toBe(1);
      } finally {
        await driver.close();
      }
    });

    it('schemaEvolution: add-columns adds it: null in older versions, values in newer ones', async () => {
      const flow = defineFlow({ ...ACCOUNTS, schemaEvolution: 'add-columns' });
      const driver = await engine.open();
      try {
        await applyRows(driver, flow, ACCOUNTS_FIRST);
        const r = await applyRows(driver, flow, [{ id: 1, ts: 2, name: 'ann', amount: 5, email: 'ann@example.com' }]);
        expectAccounted(r);
        expect(plain(await readTargetWith(driver, flow))).toEqual([
          { id: 1, ts: 1, name: 'ann', amount: 5, email: null, __START_AT: 1, __END_AT: 2 },
          { id: 1, ts: 2, name: 'ann', amount: 5, email: 'ann@example.com', __START_AT: 2, __END_AT: null },
          { id: 2, ts: 1, name: 'bob', amount: 7, email: null, __START_AT: 1, __END_AT: null },
        ]);
        // A later batch without the column sets it to null (a missing column is a null).
        await applyRows(driver, flow, [{ id: 2, ts: 3, name: 'bob', amount: 8 }]);
        expect(plain(await readTargetWith(driver, flow)).filter((x) => x.id === 2)).toEqual([
          { id: 2, ts: 1, name: 'bob', amount: 7, email: null, __START_AT: 1, __END_AT: 3 },
          { id: 2, ts: 3, name: 'bob', amount: 8, email: null, __START_AT: 3, __END_AT: null },
        ]);
      } finally {
        await driver.close();
      }
    });

    it('integer meeting a fraction is widened to a decimal: the column type changes, older values are kept', async () => {
      const flow = defineFlow(ACCOUNTS);
      const driver = await engine.open();
      try {
        await applyRows(driver, flow, ACCOUNTS_FIRST);
        const typeOf = async () => (await driver.columns('accounts'))!.find((c) => c.name === 'amount')!.type;
        expect(await typeOf()).toMatch(/^(BIGINT|INTEGER|bigint|integer)$/);
        const r = await applyRows(driver, flow, [{ id: 1, ts: 2, name: 'ann', amount: 5.25 }]);
        expectAccounted(r);
        expect(r.quarantined).toBe(0);
        expect(await typeOf()).toMatch(/^(DECIMAL\(21,2\)|numeric\(21,2\))$/);
        expect(plain(await readTargetWith(driver, flow))).toEqual([
          { id: 1, ts: 1, name: 'ann', amount: 5, __START_AT: 1, __END_AT: 2 },
          { id: 1, ts: 2, name: 'ann', amount: 5.25, __START_AT: 2, __END_AT: null },
          { id: 2, ts: 1, name: 'bob', amount: 7, __START_AT: 1, __END_AT: null },
        ]);
        // Integers still fit the widened column.
        await applyRows(driver, flow, [{ id: 2, ts: 2, name: 'bob', amount: 9 }]);
        expect(
          plain(await readTargetWith(driver, flow))
            .filter((x) => x.__END_AT === null)
            .map((x) => x.amount),
        ).toEqual([5.25, 9]);
      } finally {
        await driver.close();
      }
    });

    it('text where integers were, no value fitting: refused with the fix; nothing applied', async () => {
      const flow = defineFlow(ACCOUNTS);
      const driver = await engine.open();
      try {
        await applyRows(driver, flow, ACCOUNTS_FIRST);
        const before = await readTargetWith(driver, flow);
        const e = await refusal(
          applyRows(driver, flow, [
            { id: 1, ts: 2, name: 'ann', amount: 'lots' },
            { id: 2, ts: 2, name: 'bob', amount: 'a few' },
          ]),
        );
        expect(e.message).toMatch(/column "amount" changed type from \w+ to \w+, and none of its values fits/);
        expect(e.oneLine()).toMatch(/\(fix: cast it to \w+ in the source/);
        expect(await readTargetWith(driver, flow)).toEqual(before);
        expect((await commitLog(driver, 'accounts')).length).toBe(1);
      } finally {
        await driver.close();
      }
    });
  });
}
