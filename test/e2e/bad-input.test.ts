/**
 * Bad input never crashes a run nor half-applies it (SEMANTICS §6): a record that cannot become an
 * event (malformed line, null key or sequence, unfit value) is quarantined and counted; a file
 * that cannot be read at all is one quarantined record (its path and the reason).
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { errorLines, libApply, libExport, ndjson, parseNdjson, queryDb, scd, scdOk, tablesOf, tempDir } from './fixtures/cli.js';

let tmp: { dir: string; cleanup: () => void };
beforeAll(() => {
  tmp = tempDir();
});
afterAll(() => tmp.cleanup());

const FLOW_YAML = 'target: items\nkeys: [id]\nsequenceBy: ts\ndatabase: items.duckdb\n';

/** A folder with the items flow and a first batch already applied. */
async function started(name: string): Promise<{ dir: string; db: string; before: string }> {
  const dir = path.join(tmp.dir, name);
  mkdirSync(dir);
  writeFileSync(path.join(dir, 'flow.yaml'), FLOW_YAML);
  writeFileSync(
    path.join(dir, 'b1.ndjson'),
    ndjson([
      { id: 1, ts: 1, qty: 5, label: 'one' },
      { id: 2, ts: 1, qty: 6, label: 'two' },
    ]),
  );
  await libApply(path.join(dir, 'flow.yaml'), [path.join(dir, 'b1.ndjson')]);
  const before = await libExport(path.join(dir, 'flow.yaml'));
  return { dir, db: path.join(dir, 'items.duckdb'), before };
}

async function commitCount(db: string): Promise<number> {
  return Number((await queryDb(db, `SELECT count(*) AS n FROM _scd_commits`))[0]!.n);
}

async function exportOf(dir: string): Promise<string> {
  return libExport(path.join(dir, 'flow.yaml'));
}

describe('a malformed line is quarantined, the rest of the file applied (SEMANTICS §6)', () => {
  it('a malformed NDJSON line: kept with file, line, reason and raw text; counts add up', async () => {
    const { dir, db } = await started('malformed');
    const badLine = '{"id":2,"ts":2 "qty":8}';
    writeFileSync(path.join(dir, 'bad.ndjson'), `{"id":1,"ts":2,"qty":7,"label":"x"}\n${badLine}\n{"id":3,"ts":2,"qty":9,"label":"z"}\n`);
    const r = await scd(['apply', 'flow.yaml', '--input', 'bad.ndjson', '--json'], dir);
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    const res = JSON.parse(r.stdout.trim());
    expect(res).toMatchObject({ version: 2, rowsRead: 3, eventsApplied: 2, duplicates: 0, quarantined: 1 });
    const q = await queryDb(db, 'SELECT file, line, reason, raw FROM _scd_items_quarantine');
    expect(q).toHaveLength(1);
    expect(path.basename(String(q[0]!.file))).toBe('bad.ndjson');
    expect(Number(q[0]!.line)).toBe(2);
    expect(String(q[0]!.reason)).toMatch(/malformed JSON/);
    expect(q[0]!.raw).toBe(badLine);
    const rows = parseNdjson(await exportOf(dir));
    expect(rows.filter((x) => x.__END_AT === null).map((x) => [x.id, x.label])).toEqual([
      [1, 'x'],
      [2, 'two'],
      [3, 'z'],
    ]);
  });

  it('a malformed FIRST line, and lines that are JSON but not objects, each at their own line', async () => {
    const { dir, db } = await started('malformed-first');
    writeFileSync(path.join(dir, 'bad.ndjson'), 'not json\n{"id":5,"ts":2,"qty":7,"label":"x"}\n[1,2]\n"text"\n');
    const r = await scd(['apply', 'flow.yaml', '--input', 'bad.ndjson', '--json'], dir);
    expect(r.code).toBe(0);
    expect(JSON.parse(r.stdout.trim())).toMatchObject({ rowsRead: 4, eventsApplied: 1, quarantined: 3 });
    const q = await queryDb(db, 'SELECT line, raw FROM _scd_items_quarantine ORDER BY line');
    expect(q.map((x) => [Number(x.line), x.raw])).toEqual([
      [1, 'not json'],
      [3, '[1,2]'],
      [4, '"text"'],
    ]);
  });

  it('blank lines in NDJSON and CSV: bad records after them are quarantined at their physical lines', async () => {
    const { dir, db } = await started('blank-lines');
    writeFileSync(path.join(dir, 'b3.ndjson'), '{"id":7,"ts":3,"qty":1,"label":"a"}\n\n   \n{"id":null,"ts":3,"qty":2,"label":"b"}\n');
    writeFileSync(path.join(dir, 'b4.csv'), 'id,ts,qty,label\n8,4,1,c\n\n9,4,2,d,extra\n\n,4,3,no key\n');
    for (const input of ['b3.ndjson', 'b4.csv']) {
      const r = await scd(['apply', 'flow.yaml', '--input', input, '--json'], dir);
      expect(r.stderr).not.toMatch(/bug in scdkit|refused a statement/);
      expect(r.code, input).toBe(0);
    }
    const q = await queryDb(db, 'SELECT file, line FROM _scd_items_quarantine ORDER BY file, line');
    expect(q.map((x) => [path.basename(String(x.file)), Number(x.line)])).toEqual([
      ['b3.ndjson', 4],
      ['b4.csv', 4],
      ['b4.csv', 6],
    ]);
  });

  it('a CSV row with too many fields is quarantined at its physical line; later lines keep theirs', async () => {
    const { dir, db } = await started('csv-reject');
    writeFileSync(path.join(dir, 'b2.csv'), 'id,ts,qty,label\n1,2,5,one,extra\n2,2,6,two b\n,3,1,no key\n');
    const r = await scd(['apply', 'flow.yaml', '--input', 'b2.csv', '--json'], dir);
    expect(r.stderr).not.toMatch(/bug in scdkit|refused a statement/);
    expect(r.code).toBe(0);
    const res = JSON.parse(r.stdout.trim());
    expect(res).toMatchObject({ rowsRead: 3, eventsApplied: 1, quarantined: 2 });
    const q = await queryDb(db, 'SELECT line, reason, raw FROM _scd_items_quarantine ORDER BY line');
    // Physical lines: the header is line 1, the rejected row line 2, the null key line 4.
    expect(q.map((x) => Number(x.line))).toEqual([2, 4]);
    expect(String(q[0]!.raw)).toContain('extra');
    expect(String(q[1]!.reason)).toMatch(/key.*id.*null/);
  });
});

describe('a file that cannot be read at all is one quarantined record; the rest applies', () => {
  it('a broken element of a JSON array: that element is quarantined with its text and number, the others apply', async () => {
    const { dir, db } = await started('broken-array');
    const text = '[{"id":1,"ts":2,"qty":7,"label":"x"},\n{"id":2,"ts":2 "qty":8}]';
    writeFileSync(path.join(dir, 'bad.json'), text + '\n');
    const r = await scdOk(['apply', 'flow.yaml', '--input', 'bad.json', '--json'], dir);
    expect(JSON.parse(r.stdout.trim())).toMatchObject({ version: 2, rowsRead: 2, eventsApplied: 1, quarantined: 1 });
    const q = await queryDb(db, 'SELECT line, reason, raw FROM _scd_items_quarantine');
    expect(q).toEqual([{ line: '2', reason: expect.stringMatching(/^malformed JSON: .* of the element$/), raw: '{"id":2,"ts":2 "qty":8}' }]);
    expect(await commitCount(db)).toBe(2);
    const rows = parseNdjson(await exportOf(dir));
    expect(rows.filter((x) => x.__END_AT === null).map((x) => [x.id, x.label])).toEqual([
      [1, 'x'],
      [2, 'two'],
    ]);
  });

  it('a good file and an unreadable one in the same commit: the good one applies, the other is one quarantined record', async () => {
    const { dir, db } = await started('half');
    writeFileSync(
      path.join(dir, 'a_good.ndjson'),
      ndjson([
        { id: 1, ts: 9, qty: 50, label: 'changed' },
        { id: 7, ts: 9, qty: 1, label: 'new' },
      ]),
    );
    writeFileSync(path.join(dir, 'b_bad.parquet'), 'this is not parquet at all, just some text that is long enough\n');
    const r = await scdOk(['apply', 'flow.yaml', '--input', 'a_good.ndjson', 'b_bad.parquet', '--json'], dir);
    expect(JSON.parse(r.stdout.trim())).toMatchObject({ version: 2, rowsRead: 3, eventsApplied: 2, quarantined: 1 });
    const q = await queryDb(db, 'SELECT file, line, reason FROM _scd_items_quarantine');
    expect(q).toEqual([{ file: expect.stringMatching(/b_bad\.parquet$/), line: null, reason: expect.stringMatching(/cannot be read as parquet/) }]);
    const rows = parseNdjson(await exportOf(dir));
    expect(rows.filter((x) => x.__END_AT === null).map((x) => [x.id, x.label])).toEqual([
      [1, 'changed'],
      [2, 'two'],
      [7, 'new'],
    ]);
  });

  it('a first batch where no line is readable creates no target, with one clear line', async () => {
    const dir = path.join(tmp.dir, 'malformed-new');
    mkdirSync(dir);
    writeFileSync(path.join(dir, 'flow.yaml'), FLOW_YAML);
    writeFileSync(path.join(dir, 'bad.ndjson'), 'nope\n{"id":2,\n');
    const r = await scd(['apply', 'flow.yaml', '--input', 'bad.ndjson'], dir);
    expect(r.code).not.toBe(0);
    const lines = errorLines(r.stderr);
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatch(/\(fix: /);
    expect(await tablesOf(path.join(dir, 'items.duckdb'))).not.toContain('items');
  });
});

describe('records that cannot become events are quarantined', () => {
  it('null key and null sequence: counted, kept with file, line, reason and raw text', async () => {
    const { dir, db } = await started('nulls');
    writeFileSync(
      path.join(dir, 'b2.ndjson'),
      ndjson([
        { id: null, ts: 2, qty: 7, label: 'no key' },
        { id: 2, ts: null, qty: 8, label: 'no sequence' },
        { id: 2, ts: 3, qty: 9, label: 'fine' },
        { id: 1, ts: 1, qty: 5, label: 'one' }, // duplicate of batch 1
        { ts: 4, qty: 1, label: 'key missing altogether' },
      ]),
    );
    const r = await scdOk(['apply', 'flow.yaml', '--input', 'b2.ndjson', '--json'], dir);
    const res = JSON.parse(r.stdout.trim());
    expect(res).toMatchObject({ version: 2, rowsRead: 5, eventsApplied: 1, duplicates: 1, quarantined: 3 });
    expect(res.rowsRead).toBe(res.eventsApplied + res.duplicates + res.quarantined);

    const q = await queryDb(db, `SELECT file, line, reason, raw FROM _scd_items_quarantine ORDER BY line`);
    expect(q.map((x) => [path.basename(String(x.file)), Number(x.line)])).toEqual([
      ['b2.ndjson', 1],
      ['b2.ndjson', 2],
      ['b2.ndjson', 5],
    ]);
    expect(String(q[0]!.reason)).toMatch(/key.*id.*null/);
    expect(String(q[1]!.reason)).toMatch(/sequence.*ts.*null/);
    expect(String(q[2]!.reason)).toMatch(/key.*id.*null/);
    expect(JSON.parse(String(q[0]!.raw))).toMatchObject({ id: null, ts: 2, qty: 7, label: 'no key' });
    expect(JSON.parse(String(q[1]!.raw))).toMatchObject({ id: 2, ts: null, label: 'no sequence' });
    expect(path.isAbsolute(String(q[0]!.file))).toBe(true);

    const rows = parseNdjson(await exportOf(dir));
    expect(rows).toEqual([
      { id: 1, ts: 1, qty: 5, label: 'one', __START_AT: 1, __END_AT: null },
      { id: 2, ts: 1, qty: 6, label: 'two', __START_AT: 1, __END_AT: 3 },
      { id: 2, ts: 3, qty: 9, label: 'fine', __START_AT: 3, __END_AT: null },
    ]);
  });

  it('a later value that does not fit the column type is quarantined with a reason naming the column', async () => {
    const { dir, db } = await started('unfit');
    writeFileSync(
      path.join(dir, 'b2.ndjson'),
      ndjson([
        { id: 1, ts: 2, qty: 'twelve', label: 'bad qty' },
        { id: 2, ts: 'yesterday', qty: 1, label: 'bad ts' },
        { id: 2, ts: 5, qty: 3, label: 'ok' },
      ]),
    );
    const r = await scdOk(['apply', 'flow.yaml', '--input', 'b2.ndjson', '--json'], dir);
    const res = JSON.parse(r.stdout.trim());
    expect(res).toMatchObject({ rowsRead: 3, eventsApplied: 1, duplicates: 0, quarantined: 2 });
    const q = await queryDb(db, `SELECT line, reason, raw FROM _scd_items_quarantine ORDER BY line`);
    expect(q.map((x) => Number(x.line))).toEqual([1, 2]);
    expect(String(q[0]!.reason)).toMatch(/qty/);
    expect(String(q[0]!.reason)).toMatch(/twelve/);
    expect(String(q[1]!.reason)).toMatch(/ts/);
    expect(JSON.parse(String(q[0]!.raw))).toMatchObject({ id: 1, qty: 'twelve' });
    const rows = parseNdjson(await exportOf(dir));
    expect(rows.find((x) => x.id === 1 && x.__END_AT === null)).toMatchObject({ qty: 5, label: 'one' });
  });

  it('a new column in a later batch is refused with a message naming it; nothing applied', async () => {
    const { dir, db, before } = await started('new-column');
    writeFileSync(path.join(dir, 'b2.ndjson'), ndjson([{ id: 3, ts: 2, qty: 1, label: 'x', colour: 'red' }]));
    const r = await scd(['apply', 'flow.yaml', '--input', 'b2.ndjson'], dir);
    expect(r.code).not.toBe(0);
    const lines = errorLines(r.stderr);
    expect(lines).toHaveLength(1);
    expect(lines[0]).toContain('"colour"');
    expect(lines[0]).toMatch(/fix: /);
    expect(await commitCount(db)).toBe(1);
    expect(await exportOf(dir)).toBe(before);
  });

  it('a later batch without a payload column sets it to null (not an error)', async () => {
    const { dir } = await started('dropped-column');
    writeFileSync(path.join(dir, 'b2.ndjson'), ndjson([{ id: 1, ts: 2, qty: 5 }]));
    await scdOk(['apply', 'flow.yaml', '--input', 'b2.ndjson'], dir);
    const rows = parseNdjson(await exportOf(dir));
    expect(rows.filter((x) => x.id === 1)).toEqual([
      { id: 1, ts: 1, qty: 5, label: 'one', __START_AT: 1, __END_AT: 2 },
      { id: 1, ts: 2, qty: 5, label: null, __START_AT: 2, __END_AT: null },
    ]);
  });
});

describe('empty and missing inputs', () => {
  it('an empty file on an existing target is a commit that reads 0 rows and changes nothing', async () => {
    const { dir, db, before } = await started('empty');
    writeFileSync(path.join(dir, 'empty.ndjson'), '');
    const r = await scd(['apply', 'flow.yaml', '--input', 'empty.ndjson', '--json'], dir);
    expect(r.stderr).not.toMatch(/bug in scdkit|refused a statement/);
    expect(r.code).toBe(0);
    expect(JSON.parse(r.stdout.trim())).toMatchObject({ version: 2, rowsRead: 0, eventsApplied: 0, quarantined: 0, keysChanged: 0 });
    expect(await commitCount(db)).toBe(2);
    expect(await exportOf(dir)).toBe(before);
  });

  it('a file of blank lines is an empty file too', async () => {
    const { dir, before } = await started('blank');
    writeFileSync(path.join(dir, 'blank.ndjson'), '\n\n');
    const r = await scd(['apply', 'flow.yaml', '--input', 'blank.ndjson', '--json'], dir);
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    expect(JSON.parse(r.stdout.trim())).toMatchObject({ rowsRead: 0 });
    expect(await exportOf(dir)).toBe(before);
  });

  it('an empty file as the FIRST input: one clear line, no target', async () => {
    const dir = path.join(tmp.dir, 'empty-new');
    mkdirSync(dir);
    writeFileSync(path.join(dir, 'flow.yaml'), FLOW_YAML);
    writeFileSync(path.join(dir, 'empty.ndjson'), '');
    const r = await scd(['apply', 'flow.yaml', '--input', 'empty.ndjson'], dir);
    expect(r.code).toBe(1);
    expect(errorLines(r.stderr)).toEqual([expect.stringMatching(/no (readable )?rows.*fix: /)]);
    expect(await tablesOf(path.join(dir, 'items.duckdb'))).not.toContain('items');
  });

  it('a missing input file: one line naming it, exit 1, nothing applied', async () => {
    const { dir, db, before } = await started('missing');
    const r = await scd(['apply', 'flow.yaml', '--input', 'b1.ndjson', 'gone.ndjson'], dir);
    expect(r.code).toBe(1);
    expect(errorLines(r.stderr)).toEqual([expect.stringMatching(/^scd: .*gone\.ndjson.*does not exist.*fix: /)]);
    expect(await commitCount(db)).toBe(1);
    expect(await exportOf(dir)).toBe(before);
  });
});
