/**
 * Inputs: every file format gives the same target; folders expand in name order; quarantine
 * positions point at the right line (CSV: physical line, header = 1) or record (JSON array).
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { applyFiles, type Driver, defineFlow, type InputFile, openDriver, readTargetWith, resolveInputs, ScdError } from '../../src/index.js';
import { tempDir } from '../helpers.js';

const RECORDS = [
  { id: 1, name: 'Ann, A', ts: 1, op: 'U' },
  { id: 2, name: 'Bob "B"', ts: 1, op: 'U' },
  { id: 1, name: 'Ann B', ts: 2, op: 'U' },
  { id: 2, name: 'Bob "B"', ts: 3, op: 'D' },
];
const EXPECTED = [
  { id: 1, name: 'Ann, A', ts: 1, __START_AT: 1, __END_AT: 2 },
  { id: 1, name: 'Ann B', ts: 2, __START_AT: 2, __END_AT: null },
  { id: 2, name: 'Bob "B"', ts: 1, __START_AT: 1, __END_AT: 3 },
];
const flow = defineFlow({ target: 'people', keys: 'id', sequenceBy: 'ts', applyAsDeletes: "op = 'D'", exceptColumns: ['op'] });

let tmp: { dir: string; cleanup: () => void };
let dir: string;

const ndjsonText = (rows: object[]) => rows.map((r) => JSON.stringify(r)).join('\n') + '\n';
const csvField = (v: unknown) => (v === null ? '' : /[",\n]/.test(String(v)) ? `"${String(v).replace(/"/g, '""')}"` : String(v));
const csvText = (rows: Array<Record<string, unknown>>) => [Object.keys(rows[0]!).join(','), ...rows.map((r) => Object.values(r).map(csvField).join(','))].join('\n') + '\n';

function write(name: string, text: string): string {
  const file = path.join(dir, name);
  writeFileSync(file, text);
  return file;
}

async function toParquet(name: string, rows: object[]): Promise<string> {
  const src = write(`${name}.src.ndjson`, ndjsonText(rows));
  const file = path.join(dir, name);
  const d = await openDriver(':memory:');
  try {
    await d.run(`COPY (SELECT * FROM read_json('${src}')) TO '${file}' (FORMAT parquet)`);
  } finally {
    await d.close();
  }
  return file;
}

/** Apply batches of files, each as one commit, on a fresh database; return the target rows. */
async function target(batches: string[][]): Promise<{ rows: Array<Record<string, unknown>>; driver: Driver; quarantined: number[] }> {
  const driver = await openDriver(':memory:');
  const quarantined: number[] = [];
  for (const b of batches) quarantined.push((await applyFiles(driver, flow, resolveInputs(b))).quarantined);
  return { rows: await readTargetWith(driver, flow), driver, quarantined };
}

beforeAll(() => {
  tmp = tempDir('scdkit-inputs-');
  dir = tmp.dir;
});
afterAll(() => tmp.cleanup());

describe('every input format gives the same target', () => {
  const cases: Array<[string, () => Promise<string> | string]> = [
    ['.ndjson', () => write('r.ndjson', ndjsonText(RECORDS))],
    ['.jsonl', () => write('r.jsonl', ndjsonText(RECORDS))],
    ['.json (NDJSON)', () => write('nd.json', ndjsonText(RECORDS))],
    ['.json (array)', () => write('arr.json', JSON.stringify(RECORDS, null, 2))],
    ['.csv', () => write('r.csv', csvText(RECORDS))],
    ['.parquet', () => toParquet('r.parquet', RECORDS)],
    ['.NDJSON (upper-case extension)', () => write('R.NDJSON', ndjsonText(RECORDS))],
    ['.ndjson with CRLF line ends and no final newline', () => write('crlf.ndjson', RECORDS.map((r) => JSON.stringify(r)).join('\r\n'))],
  ];
  it.each(cases)('%s', async (_, make) => {
    const file = await make();
    const { rows, driver } = await target([[file]]);
    await driver.close();
    expect(rows).toEqual(EXPECTED);
  });

  it('mixed formats across commits (csv, then json array, then parquet)', async () => {
    const a = write('m1.csv', csvText(RECORDS.slice(0, 2)));
    const b = write('m2.json', JSON.stringify([RECORDS[2]]));
    const c = await toParquet('m3.parquet', [RECORDS[3]!]);
    const { rows, driver, quarantined } = await target([[a], [b], [c]]);
    await driver.close();
    expect(quarantined).toEqual([0, 0, 0]);
    expect(rows).toEqual(EXPECTED);
  });

  it('mixed formats in ONE commit', async () => {
    const a = write('one1.jsonl', ndjsonText(RECORDS.slice(0, 2)));
    const b = write('one2.csv', csvText(RECORDS.slice(2)));
    const { rows, driver } = await target([[a, b]]);
    await driver.close();
    expect(rows).toEqual(EXPECTED);
  });
});

describe('quarantine positions', () => {
  it('CSV: the physical line (the header is line 1)', async () => {
    const file = write('q.csv', 'id,name,ts,op\n1,a,1,U\n,b,1,U\n3,c,,U\n');
    const { driver, quarantined } = await target([[file]]);
    try {
      expect(quarantined).toEqual([2]);
      const q = await driver.query('SELECT line, reason FROM _scd_people_quarantine ORDER BY line');
      expect(q.map((r) => Number(r.line))).toEqual([3, 4]);
      expect(String(q[0]!.reason)).toMatch(/id/);
      expect(String(q[1]!.reason)).toMatch(/ts/);
    } finally {
      await driver.close();
    }
  });

  it('JSON array: the record number (1-based)', async () => {
    const file = write(
      'q.json',
      JSON.stringify([
        { id: 1, name: 'a', ts: 1, op: 'U' },
        { id: null, name: 'b', ts: 1, op: 'U' },
      ]),
    );
    const { driver, quarantined } = await target([[file]]);
    try {
      expect(quarantined).toEqual([1]);
      const q = await driver.query('SELECT file, line FROM _scd_people_quarantine');
      expect(q.map((r) => [r.file, Number(r.line)])).toEqual([[file, 2]]);
    } finally {
      await driver.close();
    }
  });

  it('NDJSON in a multi-file commit: each record keeps its own file and line', async () => {
    const a = write(
      'qa.ndjson',
      ndjsonText([
        { id: 1, name: 'a', ts: 1, op: 'U' },
        { id: null, name: 'x', ts: 1, op: 'U' },
      ]),
    );
    const b = write('qb.ndjson', ndjsonText([{ id: null, name: 'y', ts: 1, op: 'U' }]));
    const { driver } = await target([[a, b]]);
    try {
      const q = await driver.query('SELECT file, line FROM _scd_people_quarantine ORDER BY file, line');
      expect(q.map((r) => [r.file, Number(r.line)])).toEqual([
        [a, 2],
        [b, 1],
      ]);
    } finally {
      await driver.close();
    }
  });
});

describe('resolveInputs', () => {
  it('expands a folder to its data files in name order, skipping hidden, _ and unknown files', () => {
    const f = path.join(dir, 'landing');
    mkdirSync(path.join(f, 'sub'), { recursive: true });
    for (const n of ['b.ndjson', 'a.csv', 'c.parquet', '.hidden.ndjson', '_tmp.ndjson', 'notes.txt', 'sub/z.ndjson']) writeFileSync(path.join(f, n), '');
    const got = resolveInputs([f]);
    expect(got.map((x: InputFile) => [path.basename(x.path), x.format])).toEqual([
      ['a.csv', 'csv'],
      ['b.ndjson', 'ndjson'],
      ['c.parquet', 'parquet'],
    ]);
    expect(got.every((x) => path.isAbsolute(x.path))).toBe(true);
  });

  it('a declared format overrides the extension', () => {
    const file = write('data.txt', ndjsonText(RECORDS));
    expect(resolveInputs([file], 'ndjson')).toEqual([{ path: file, format: 'ndjson' }]);
  });

  it('a missing file: INPUT_UNREADABLE naming it', () => {
    let err: unknown;
    try {
      resolveInputs([path.join(dir, 'gone.ndjson')]);
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(ScdError);
    expect((err as ScdError).code).toBe('INPUT_UNREADABLE');
    expect((err as ScdError).oneLine()).toContain('gone.ndjson');
  });

  it('an unknown extension: says which extensions work', () => {
    const file = write('data.xml', '<x/>');
    let err: unknown;
    try {
      resolveInputs([file]);
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(ScdError);
    expect((err as ScdError).oneLine()).toContain('data.xml');
    expect((err as ScdError).fix).toMatch(/\.ndjson.*\.csv.*\.parquet/);
  });
});
