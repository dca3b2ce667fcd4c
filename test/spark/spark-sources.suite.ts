/**
 * Sources on Spark + Delta beyond files:
 * - a table source (`source: { table, watermark }`): rows of a Delta table in the flow's database,
 *   the second apply reading only the rows above the watermark, as on DuckDB
 *   (test/sources/tables.test.ts). The watermark is written after the commit record: a failure
 *   between the two leaves it behind, and the next apply reads those rows again as duplicates,
 *   never skipping one;
 * - a Debezium folder (test/sources/debezium.test.ts's PostgreSQL connector): DuckDB's target and
 *   counts;
 * - input files named by URL (`file://…` here, standing in for `s3://…` or `abfss://…`, which this
 *   machine cannot reach): Spark reads them at that name; the commit names them as written; a
 *   landing folder at an URL is listed and hashed by Spark, and applied exactly once as a local
 *   one is (test/sources/landing.test.ts);
 * - a CSV's bad records (a short and a long record, a value that does not fit, CRLF endings, a BOM,
 *   unicode, a quoted comma): each quarantined with its own line and raw text, as DuckDB
 *   quarantines them (test/sources/csv-quarantine.test.ts on DuckDB and PostgreSQL).
 */

import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { applyFiles, applySourceWith, type Driver, defineFlow, flowStatus, readTargetWith, resolveInputs } from '../../src/index.js';
import { storeNames } from '../../src/store/names.js';
import { engines, sparkEngine } from '../engines.js';
import { tempDir } from '../helpers.js';
import { FIXTURES } from '../sources/fixtures/util.js';

const flow = defineFlow({
  target: 'people',
  keys: ['id'],
  sequenceBy: 'ts',
  applyAsDeletes: "op = 'delete'",
  exceptColumns: ['change_id', 'op'],
  source: { table: 'raw_changes', watermark: 'change_id' },
});
type Change = [number, number, number, string, string];
const values = (rows: Change[]) => rows.map((r) => `(${r[0]}, ${r[1]}, ${r[2]}, '${r[3]}', '${r[4]}')`).join(', ');
const plain = (rows: Array<Record<string, unknown>>) =>
  rows.map((r) => ({ id: Number(r.id), name: r.name, start: Number(r.__START_AT), end: r.__END_AT === null ? null : Number(r.__END_AT) }));

describe.skipIf(!sparkEngine)('a table source on Spark + Delta (SCD_TEST_SPARK_URL)', { timeout: 900_000 }, () => {
  let spark: Driver;
  beforeAll(async () => {
    spark = await sparkEngine!.open();
    await spark.run(`CREATE TABLE raw_changes (change_id INT, id INT, ts INT, op STRING, name STRING) USING delta`);
    await spark.run(
      `INSERT INTO raw_changes VALUES ${values([
        [1, 1, 1, 'upsert', 'ann'],
        [2, 2, 1, 'upsert', 'bob'],
        [3, 1, 2, 'upsert', 'anne'],
      ])}`,
    );
  }, 300_000);
  afterAll(async () => spark?.close());

  it('the second apply reads only the rows above the watermark', async () => {
    const [r1] = (await applySourceWith(spark, flow)).results;
    expect(r1).toMatchObject({ version: 1, rowsRead: 3, eventsApplied: 3, inputs: ['table raw_changes'] });
    await spark.run(
      `INSERT INTO raw_changes VALUES ${values([
        [4, 2, 3, 'delete', 'bob'],
        [5, 3, 3, 'upsert', 'cy'],
      ])}`,
    );
    const [r2] = (await applySourceWith(spark, flow)).results;
    expect(r2).toMatchObject({ version: 2, rowsRead: 2, eventsApplied: 2, duplicates: 0 });
    expect(plain(await readTargetWith(spark, flow))).toEqual([
      { id: 1, name: 'ann', start: 1, end: 2 },
      { id: 1, name: 'anne', start: 2, end: null },
      { id: 2, name: 'bob', start: 1, end: 3 },
      { id: 3, name: 'cy', start: 3, end: null },
    ]);
  });

  it('a failure after the commit record leaves the watermark behind: the next apply reads those rows again as duplicates', async () => {
    await spark.run(`INSERT INTO raw_changes VALUES ${values([[6, 3, 4, 'upsert', 'cyd']])}`);
    const target = spark as unknown as { run: (sql: string, params?: unknown[]) => Promise<void> };
    const run = target.run.bind(spark);
    target.run = async (sql, params) => {
      // The watermark's write is refused: the commit before it stands.
      if (/^DELETE FROM `_scd_watermarks`|^INSERT INTO `_scd_watermarks`/.test(sql)) throw new Error('simulated failure before the watermark');
      return run(sql, params);
    };
    try {
      await expect(applySourceWith(spark, flow)).rejects.toThrow(/simulated failure before the watermark/);
    } finally {
      target.run = run;
    }
    const [again] = (await applySourceWith(spark, flow)).results;
    expect(again).toMatchObject({ version: 4, rowsRead: 1, eventsApplied: 0, duplicates: 1 });
    const rows = plain(await readTargetWith(spark, flow));
    expect(rows.filter((r) => r.id === 3)).toEqual([
      { id: 3, name: 'cy', start: 3, end: 4 },
      { id: 3, name: 'cyd', start: 4, end: null },
    ]);
  });

  it('a Debezium folder (snapshot, stream, tombstones, an unknown op, a truncate, a key change) gives the target and counts DuckDB gives', async () => {
    const debezium = defineFlow({ target: 'customers', keys: ['id'], source: { path: path.join(FIXTURES, 'debezium', 'postgres'), format: 'debezium' } });
    const duck = await engines.find((e) => e.name === 'duckdb')!.open();
    try {
      const counts = (r: object) => {
        const { rowsRead, skipped, quarantined, eventsApplied, duplicates, ties, keysChanged, versionsAdded, versionsClosed } = r as Record<string, number>;
        return { rowsRead, skipped, quarantined, eventsApplied, duplicates, ties, keysChanged, versionsAdded, versionsClosed };
      };
      const [onSpark] = (await applySourceWith(spark, debezium)).results;
      const [onDuck] = (await applySourceWith(duck, debezium)).results;
      expect(counts(onSpark!)).toEqual(counts(onDuck!));
      expect(onSpark).toMatchObject({ rowsRead: 17, skipped: 2, quarantined: 1, eventsApplied: 14 });
      const rows = async (d: Driver) => (await readTargetWith(d, debezium)).map((r) => JSON.stringify(r, (_, v) => (typeof v === 'bigint' ? Number(v) : v)));
      expect(await rows(spark)).toEqual(await rows(duck));
    } finally {
      await duck.close();
    }
  });

  it('a Debezium row with a number written with an exponent in a bigint key or column is quarantined, as on DuckDB (docs/TYPES.md "Fitting")', async () => {
    const tmp = tempDir();
    try {
      const land = path.join(tmp.dir, 'land');
      mkdirSync(land);
      writeFileSync(
        path.join(land, 'e.ndjson'),
        [
          '{"op":"c","after":{"id":1,"v":"a"},"source":{"ts_ms":1}}',
          '{"op":"c","after":{"id":2.04e2,"v":"b"},"source":{"ts_ms":2}}',
          '{"op":"c","after":{"id":3,"v":"c","n":2e1},"source":{"ts_ms":3}}',
        ].join('\n') + '\n',
      );
      const exponents = defineFlow({ target: 'exponents', keys: ['id'], source: { path: land, format: 'debezium' }, columnTypes: { id: 'bigint', n: 'bigint' } });
      const [result] = (await applySourceWith(spark, exponents)).results;
      expect(result).toMatchObject({ rowsRead: 3, eventsApplied: 1, quarantined: 2 });
      expect((await readTargetWith(spark, exponents)).map((r) => Number(r.id))).toEqual([1]);
    } finally {
      tmp.cleanup();
    }
  });
});

describe.skipIf(!sparkEngine)('input files at URLs on Spark + Delta (SCD_TEST_SPARK_URL)', { timeout: 900_000 }, () => {
  let spark: Driver;
  let tmp: { dir: string; cleanup: () => void };
  beforeAll(async () => {
    tmp = tempDir();
    spark = await sparkEngine!.open();
  }, 300_000);
  afterAll(async () => {
    await spark?.close();
    tmp?.cleanup();
  });

  it('NDJSON and CSV at file:// URLs: read by Spark at that name, named so in the commit and the quarantine; the column JSON in one file and text in the other is JSON in both', async () => {
    const urls = defineFlow({ target: 'from_urls', keys: ['id'], sequenceBy: 'ts' });
    const ndjson = path.join(tmp.dir, 'day1.ndjson');
    writeFileSync(ndjson, ['{"id":1,"ts":1,"name":"ann"}', '{"id":2,"ts":1,"name":"bob"}', 'not json'].join('\n') + '\n');
    const csv = path.join(tmp.dir, 'day2.csv');
    writeFileSync(csv, 'id,ts,name\n1,2,anne\n');
    const inputs = [`file://${ndjson}`, `file://${csv}`];
    const result = await applyFiles(spark, urls, resolveInputs(inputs));
    expect(result).toMatchObject({ version: 1, rowsRead: 4, eventsApplied: 3, quarantined: 1, inputs });
    expect(plain(await readTargetWith(spark, urls))).toEqual([
      { id: 1, name: 'ann', start: 1, end: 2 },
      { id: 1, name: 'anne', start: 2, end: null },
      { id: 2, name: 'bob', start: 1, end: null },
    ]);
    const quarantined = await spark.query(`SELECT file, line, raw FROM ${storeNames(urls.target).quarantine}`);
    expect(quarantined.map((r) => ({ ...r, line: Number(r.line) }))).toEqual([{ file: inputs[0], line: 3, raw: 'not json' }]);
  });

  it('files and a landing folder whose names hold glob characters (* ? [ ] { }) are read as named: no other file, none missing', async () => {
    const globs = defineFlow({ target: 'globbed', keys: ['id'], sequenceBy: 'ts' });
    const dir = path.join(tmp.dir, 'odd [names] {a,b}');
    mkdirSync(dir);
    const put = (name: string, rows: object[]) => writeFileSync(path.join(dir, name), rows.map((r) => JSON.stringify(r)).join('\n') + '\n');
    // Each decoy is a file that the name beside it, read as a glob pattern, would match.
    put('day[1]*.ndjson', [{ id: 1, ts: 1, name: 'ann' }]);
    put('day1x.ndjson', [{ id: 9, ts: 1, name: 'decoy' }]);
    put('day?.ndjson', [{ id: 2, ts: 1, name: 'bob' }]);
    put('dayx.ndjson', [{ id: 9, ts: 1, name: 'decoy' }]);
    const inputs = [path.join(dir, 'day[1]*.ndjson'), path.join(dir, 'day?.ndjson')];
    const result = await applyFiles(spark, globs, resolveInputs(inputs));
    expect(result).toMatchObject({ version: 1, rowsRead: 2, eventsApplied: 2 });
    expect(plain(await readTargetWith(spark, globs)).map((r) => r.name)).toEqual(['ann', 'bob']);

    // The same folder as a landing folder: listed and hashed by Spark at its own name, its four
    // files applied once each.
    const landed = defineFlow({ target: 'globbed_landing', keys: ['id'], sequenceBy: 'ts', source: { path: `file://${dir}/` } });
    expect((await flowStatus(spark, landed)).pendingFiles).toBe(4);
    const first = await applySourceWith(spark, landed);
    expect(first.results).toHaveLength(1);
    expect(first.results[0]).toMatchObject({ rowsRead: 4, eventsApplied: 3 });
    expect(await applySourceWith(spark, landed)).toMatchObject({ results: [], alreadyApplied: 4, warnings: [] });
  });

  it('a landing folder at an URL: Spark lists and hashes it; new files once, in name order (hidden files and subfolders left out); a changed file is reported, never applied again', async () => {
    const folder = path.join(tmp.dir, 'landing');
    mkdirSync(folder);
    const url = `file://${folder}/`;
    const landed = defineFlow({ target: 'landed', keys: ['id'], sequenceBy: 'ts', source: { path: url } });
    const put = (name: string, rows: object[]) => writeFileSync(path.join(folder, name), rows.map((r) => JSON.stringify(r)).join('\n') + '\n');
    put('b.ndjson', [{ id: 2, ts: 1, name: 'bob' }]);
    put('a.ndjson', [{ id: 1, ts: 1, name: 'ann' }]);
    put('_writing.ndjson', [{ id: 9, ts: 1, name: 'not yet' }]);
    put('.hidden.ndjson', [{ id: 9, ts: 1, name: 'never' }]);
    mkdirSync(path.join(folder, 'sub'));
    put('sub/z.ndjson', [{ id: 9, ts: 1, name: 'in a subfolder' }]);
    // `scd status` counts the folder's files as Spark lists them, before the first apply too.
    expect((await flowStatus(spark, landed)).pendingFiles).toBe(2);
    const first = await applySourceWith(spark, landed);
    expect(first.results.map((r) => r.inputs)).toEqual([[`${url}a.ndjson`, `${url}b.ndjson`]]);
    expect(await applySourceWith(spark, landed)).toMatchObject({ results: [], alreadyApplied: 2, warnings: [] });
    put('c.ndjson', [{ id: 1, ts: 2, name: 'anne' }]);
    put('a.ndjson', [{ id: 1, ts: 1, name: 'ann, rewritten' }]);
    expect((await flowStatus(spark, landed)).pendingFiles).toBe(1);
    const third = await applySourceWith(spark, landed);
    expect(third.results.map((r) => ({ version: r.version, inputs: r.inputs }))).toEqual([{ version: 2, inputs: [`${url}c.ndjson`] }]);
    expect(third.warnings).toEqual([`${url}a.ndjson changed after commit 1 applied it; it is not applied again (fix: put new changes in a new file)`]);
    expect(third.alreadyApplied).toBe(1);
    expect(plain(await readTargetWith(spark, landed))).toEqual([
      { id: 1, name: 'ann', start: 1, end: 2 },
      { id: 1, name: 'anne', start: 2, end: null },
      { id: 2, name: 'bob', start: 1, end: null },
    ]);
  });
});

describe.skipIf(!sparkEngine)('a .json file that is not one valid document on Spark + Delta (SCD_TEST_SPARK_URL)', { timeout: 900_000 }, () => {
  let spark: Driver;
  let tmp: { dir: string; cleanup: () => void };
  beforeAll(async () => {
    tmp = tempDir();
    spark = await sparkEngine!.open();
  }, 300_000);
  afterAll(async () => {
    await spark?.close();
    tmp?.cleanup();
  });

  it('a broken element or a file cut short stops the run before anything changes (its records were silently not read); whole, it applies', async () => {
    const docs = defineFlow({ target: 'docs', keys: ['id'], sequenceBy: 'ts' });
    const first = path.join(tmp.dir, 'first.ndjson');
    writeFileSync(first, '\uFEFF{"id":1,"ts":1,"name":"ann"}\n');
    await applyFiles(spark, docs, resolveInputs([first]));
    const before = plain(await readTargetWith(spark, docs));
    expect(before).toEqual([{ id: 1, name: 'ann', start: 1, end: null }]);
    const whole = '[{"id":2,"ts":1,"name":"bob"},{"id":3,"ts":1,"name":"cy","name":"cyd"}]';
    for (const [name, text] of [
      ['broken.json', '[{"id":2,"ts":1,"name":"bob",{"id":3,"ts":1,"name":"cy"}]'],
      ['cut.json', whole.slice(0, 40)],
    ]) {
      const file = path.join(tmp.dir, name!);
      writeFileSync(file, text!);
      await expect(applyFiles(spark, docs, resolveInputs([file]))).rejects.toThrow(/not one valid JSON document .*nothing was applied \(fix: /);
      expect(plain(await readTargetWith(spark, docs))).toEqual(before);
    }
    const file = path.join(tmp.dir, 'whole.json');
    writeFileSync(file, `\uFEFF${whole}`);
    await applyFiles(spark, docs, resolveInputs([file]));
    expect(plain(await readTargetWith(spark, docs))).toEqual([...before, { id: 2, name: 'bob', start: 1, end: null }, { id: 3, name: 'cyd', start: 1, end: null }]);
  });
});

describe.skipIf(!sparkEngine)("a CSV's bad records on Spark + Delta (SCD_TEST_SPARK_URL)", { timeout: 900_000 }, () => {
  let tmp: { dir: string; cleanup: () => void };
  beforeAll(() => {
    tmp = tempDir();
  });
  afterAll(() => tmp?.cleanup());

  it('each quarantined with its own line and raw text (no line ending), and the reason DuckDB gives', async () => {
    const file = path.join(tmp.dir, 'payments.csv');
    // Every record on one line (docs/SPARK.md: a quoted value may not span lines on Spark).
    writeFileSync(
      file,
      '\uFEFFid,seq,amount,note\r\n' +
        '1,1,10.50,"a, b"\r\n' + // line 2
        '2,1,7\r\n' + // line 3: short
        '3,1,abc,"naïve ü"\r\n' + // line 4: does not fit
        '4,1,1.25,"ok 🎉"\r\n' + // line 5
        '5,1,1,2,3\r\n' + // line 6: long
        '6,1,x9,"quoted ""q"", too"\r\n' + // line 7: does not fit
        '7,1,-0.01,日本\r\n', // line 8
    );
    const payments = defineFlow({ target: 'csv_payments', keys: ['id'], sequenceBy: 'seq', columnTypes: { amount: 'decimal(12,2)', seq: 'bigint' } });
    const quarantineOn = async (engine: { open(): Promise<Driver> }) => {
      const driver = await engine.open();
      try {
        const result = await applyFiles(driver, payments, resolveInputs([file]));
        expect(result).toMatchObject({ rowsRead: 7, eventsApplied: 3, quarantined: 4 });
        const rows = await driver.query(`SELECT line, reason, raw FROM ${storeNames(payments.target).quarantine}`);
        return rows.map((r) => ({ line: Number(r.line), raw: r.raw, reason: String(r.reason).replace(/\("[^"]*"\)/g, '(type)') })).sort((a, b) => a.line - b.line);
      } finally {
        await driver.close();
      }
    };
    const onSpark = await quarantineOn(sparkEngine!);
    expect(onSpark.map(({ line, raw }) => ({ line, raw }))).toEqual([
      { line: 3, raw: '2,1,7' },
      { line: 4, raw: '3,1,abc,"naïve ü"' },
      { line: 6, raw: '5,1,1,2,3' },
      { line: 7, raw: '6,1,x9,"quoted ""q"", too"' },
    ]);
    expect(onSpark.map((r) => r.reason)).toEqual([
      'expected 4 fields, found 3',
      expect.stringMatching(/^value abc does not fit column "amount"/),
      'expected 4 fields, found 5',
      expect.stringMatching(/^value x9 does not fit column "amount"/),
    ]);
    expect(onSpark).toEqual(await quarantineOn(engines.find((e) => e.name === 'duckdb')!));
  });
});
