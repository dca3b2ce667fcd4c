/**
 * PostgreSQL file handling: inputs are streamed into the engine with COPY (a large file never
 * sits in JS memory); records are staged as written (typing/ types them), parquet with its own types; exports to CSV
 * and parquet; tuple sequences as composite types.
 */
import { createWriteStream, readFileSync, statSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { applyFiles, type Driver, defineFlow, exportTargetWith, openDriver, readTargetWith, resolveInputs } from '../../src/index.js';
import { engines } from '../engines.js';
import { tempDir } from '../helpers.js';

const pgEngines = engines.filter((e) => e.name !== 'duckdb');

async function writeLarge(file: string, rows: number): Promise<void> {
  const out = createWriteStream(file);
  for (let i = 0; i < rows; i++) {
    const line = JSON.stringify({ id: i % 50_000, name: `customer ${i} with a longer name to make the line wide`, city: `city-${i % 97}`, seq: i }) + '\n';
    if (!out.write(line)) await new Promise<void>((r) => out.once('drain', r));
  }
  await new Promise<void>((r) => out.end(r));
}

for (const engine of pgEngines) {
  describe(`${engine.name}: files`, () => {
    const { dir, cleanup } = tempDir();
    let driver: Driver;
    beforeAll(async () => {
      driver = await engine.open();
    });
    afterAll(async () => {
      await driver.close();
      cleanup();
    });

    it('a large NDJSON file is streamed into the engine', async () => {
      const file = path.join(dir, 'large.ndjson');
      const rows = 150_000;
      await writeLarge(file, rows);
      const size = statSync(file).size;
      const flow = defineFlow({ target: 'dim_large', keys: 'id', sequenceBy: 'seq' });
      global.gc?.();
      const base = process.memoryUsage().heapUsed;
      let peak = base;
      const timer = setInterval(() => (peak = Math.max(peak, process.memoryUsage().heapUsed)), 20);
      const r = await applyFiles(driver, flow, resolveInputs([file])).finally(() => clearInterval(timer));
      expect(r.rowsRead).toBe(rows);
      expect(r.eventsApplied).toBe(rows);
      const n = await driver.query(`SELECT count(*) AS n, count(*) FILTER (WHERE "__END_AT" IS NULL) AS live FROM dim_large`);
      expect(n).toEqual([{ n: String(rows), live: '50000' }]);
      // The file's text never sat in the JS heap (a string copy would be about twice its size).
      if (engine.name === 'postgres') expect(peak - base).toBeLessThan(size);
    }, 240_000);

    it('CSV, a JSON array and parquet read with the expected types; exports to csv and parquet', async () => {
      const csv = path.join(dir, 'a.csv');
      writeFileSync(
        csv,
        'id,name,price,flag,day,at,atz\n1,"Kettle, large",25.5,true,2025-03-01,2025-03-01 10:00:00,2025-03-01T10:00:00Z\n2,,40,false,2025-03-02,2025-03-02T11:30:00,2025-03-02 12:00:00+05:30\n',
      );
      const json = path.join(dir, 'b.json');
      writeFileSync(
        json,
        JSON.stringify([{ id: 3, name: 'Toaster', price: 1, flag: null, day: '2025-03-03', at: '2025-03-03T09:00:00', atz: '2025-03-03T09:00:00Z', tags: ['x'] }], null, 2),
      );
      const flow = defineFlow({ target: 'dim_files', keys: 'id', sequenceBy: 'at', schemaEvolution: 'add-columns' });
      await applyFiles(driver, flow, resolveInputs([csv]));
      const types = Object.fromEntries(((await driver.columns('dim_files')) ?? []).map((c) => [c.name, c.type]));
      expect(types).toMatchObject({
        id: 'bigint',
        name: 'text',
        price: 'double precision',
        flag: 'boolean',
        day: 'date',
        at: 'timestamp without time zone',
        atz: 'timestamp with time zone',
      });
      await applyFiles(driver, flow, resolveInputs([json]));
      const rows = await readTargetWith(driver, flow);
      expect(rows.map((r) => [r.id, r.name, r.price, r.flag, r.day, r.at, r.atz, r.tags])).toEqual([
        [1, 'Kettle, large', 25.5, true, '2025-03-01', '2025-03-01T10:00:00', '2025-03-01T10:00:00Z', null],
        [2, null, 40, false, '2025-03-02', '2025-03-02T11:30:00', '2025-03-02T06:30:00Z', null],
        [3, 'Toaster', 1, null, '2025-03-03', '2025-03-03T09:00:00', '2025-03-03T09:00:00Z', ['x']],
      ]);

      const outCsv = path.join(dir, 'out.csv');
      await exportTargetWith(driver, flow, { format: 'csv', out: outCsv });
      const lines = readFileSync(outCsv, 'utf8').trim().split('\n');
      // tags came later (schemaEvolution: add-columns): it is added at the end.
      expect(lines[0]).toBe('id,name,price,flag,day,at,atz,__START_AT,__END_AT,tags');
      // The NDJSON values, as CSV to stdout has them (ISO-8601), not the engine's own CSV spelling.
      expect(lines[1]).toBe('1,"Kettle, large",25.5,true,2025-03-01,2025-03-01T10:00:00,2025-03-01T10:00:00Z,2025-03-01T10:00:00,,');

      const pq = path.join(dir, 'out.parquet');
      await exportTargetWith(driver, flow, { format: 'parquet', out: pq });
      const duck = await openDriver(':memory:');
      try {
        const back = await duck.query(`SELECT CAST(id AS INTEGER) AS id, name, flag, CAST(day AS VARCHAR) AS day, typeof("at") AS t FROM read_parquet('${pq}') ORDER BY id`);
        expect(back).toEqual([
          { id: 1, name: 'Kettle, large', flag: true, day: '2025-03-01', t: 'TIMESTAMP' },
          { id: 2, name: null, flag: false, day: '2025-03-02', t: 'TIMESTAMP' },
          { id: 3, name: 'Toaster', flag: null, day: '2025-03-03', t: 'TIMESTAMP' },
        ]);
        // Parquet input: written by DuckDB, read back through the PostgreSQL engine.
        const src = path.join(dir, 'in.parquet');
        await duck.run(`COPY (SELECT 4 AS id, 'Mixer' AS name, TIMESTAMP '2025-03-04 08:00:00' AS at, 2.5::DOUBLE AS price) TO '${src}' (FORMAT parquet)`);
      } finally {
        await duck.close();
      }
      const r = await applyFiles(driver, flow, resolveInputs([path.join(dir, 'in.parquet')]));
      expect(r.eventsApplied).toBe(1);
      expect((await readTargetWith(driver, flow)).find((x) => x.id === 4)).toMatchObject({ name: 'Mixer', price: 2.5, at: '2025-03-04T08:00:00' });
    });

    it('JSON keys become columns in order of first appearance, as DuckDB orders them', async () => {
      const file = path.join(dir, 'order.ndjson');
      const recs = [
        { id: 1, seq: 1, b: 1, a: 'x' },
        { c: 3, id: 2, a: 'y', seq: 1, d: '2025-01-01' },
        { id: 3, seq: 1, e: true },
      ];
      writeFileSync(file, recs.map((r) => JSON.stringify(r)).join('\n') + '\n');
      const flow = defineFlow({ target: 'dim_order', keys: ['id'], sequenceBy: 'seq' });
      await applyFiles(driver, flow, resolveInputs([file]));
      const cols = ((await driver.columns('_scd_dim_order_events')) ?? []).map((c) => c.name).filter((n) => !n.startsWith('__scd'));
      const duck = await openDriver(':memory:');
      try {
        await applyFiles(duck, flow, resolveInputs([file]));
        const want = ((await duck.columns('_scd_dim_order_events')) ?? []).map((c) => c.name).filter((n) => !n.startsWith('__scd'));
        expect(want).toEqual(['id', 'seq', 'b', 'a', 'c', 'd', 'e']);
        expect(cols).toEqual(want);
      } finally {
        await duck.close();
      }
    });

    it('NDJSON with LF, CR LF or lone CR line breaks stages the same: keys in order of first appearance, values as written, blank lines counted', async () => {
      // Keys first seen on later lines, after blank ones; an integer-like key (JS would reorder it).
      // LF and CR LF go through COPY as lines, a lone CR through the normalized form first.
      const lines = ['{"id":1,"seq":1,"zeta":"z"}', '', '{"seq":2,"10":"ten","id":2,"alpha":1.5}', '', '{"id":3,"seq":3,"beta":true,"zeta":"y"}'];
      const staged: Array<{ cols: string[]; rows: unknown[]; lexical: unknown[] }> = [];
      for (const [name, eol] of Object.entries({ lf: '\n', crlf: '\r\n', cr: '\r' })) {
        const file = path.join(dir, `breaks_${name}.ndjson`);
        writeFileSync(file, lines.join(eol) + eol);
        await driver.dropTemporary(['_t', '_r']);
        const s = await driver.stageFiles([{ path: file, format: 'ndjson', label: 'f' }], '_t', '_r');
        const cols = ((await driver.columns('_t')) ?? []).map((c) => `${c.name} ${c.type}`);
        const rows = await driver.query(
          `SELECT "id" #>> '{}' AS id, "10" #>> '{}' AS "10", "alpha" #>> '{}' AS alpha, "beta" #>> '{}' AS beta, "zeta" #>> '{}' AS zeta, CAST("__scd_line" AS integer) AS line, "__scd_raw" AS raw FROM "_t" ORDER BY 1`,
        );
        staged.push({ cols, rows, lexical: [...s.lexical.entries()] });
        expect(s.records).toBe(3);
      }
      expect(staged[0]!.cols).toEqual(['id jsonb', 'seq jsonb', 'zeta jsonb', '10 jsonb', 'alpha jsonb', 'beta jsonb', '__scd_file text', '__scd_line bigint', '__scd_raw text']);
      expect(staged[0]!.lexical).toEqual(['id', 'seq', 'zeta', '10', 'alpha', 'beta'].map((c) => [c, 'json']));
      expect(staged[0]!.rows).toEqual([
        { id: '1', 10: null, alpha: null, beta: null, zeta: 'z', line: 1, raw: lines[0] },
        { id: '2', 10: 'ten', alpha: '1.5', beta: null, zeta: null, line: 3, raw: lines[2] },
        { id: '3', 10: null, alpha: null, beta: 'true', zeta: 'y', line: 5, raw: lines[4] },
      ]);
      expect(staged[1]).toEqual(staged[0]);
      expect(staged[2]).toEqual(staged[0]);
    });

    it('a CSV read by COPY and one split in JavaScript stage alike: text as written, line and raw per record', async () => {
      // LF and CRLF go through COPY; a lone CR, or a quoted newline, through the JavaScript split.
      const records = ['1,"a, b",2024-1-5', '2,,1.50', '3,"say ""hi""",x'];
      const staged: unknown[] = [];
      for (const [name, eol, extra] of [
        ['lf', '\n', ''],
        ['crlf', '\r\n', ''],
        ['cr', '\r', ''],
        ['quoted', '\n', '4,"two\nlines",y'],
      ] as const) {
        const file = path.join(dir, `text_${name}.csv`);
        writeFileSync(file, ['id,v,w', ...records, ...(extra ? [extra] : [])].join(eol) + eol);
        await driver.dropTemporary(['_t', '_r']);
        const s = await driver.stageFiles([{ path: file, format: 'csv', label: 'f' }], '_t', '_r');
        expect(s.records).toBe(extra ? 4 : 3);
        expect([...s.lexical.entries()]).toEqual([
          ['id', 'text'],
          ['v', 'text'],
          ['w', 'text'],
        ]);
        const rows = await driver.query(`SELECT id, v, w, CAST("__scd_line" AS integer) AS line, "__scd_raw" AS raw FROM "_t" WHERE id <> '4' ORDER BY id`);
        staged.push(rows);
        if (extra)
          expect(await driver.query(`SELECT v, CAST("__scd_line" AS integer) AS line, "__scd_raw" AS raw FROM "_t" WHERE id = '4'`)).toEqual([
            { v: 'two\nlines', line: 5, raw: extra },
          ]);
      }
      expect(staged[0]).toEqual([
        { id: '1', v: 'a, b', w: '2024-1-5', line: 2, raw: records[0] },
        { id: '2', v: null, w: '1.50', line: 3, raw: records[1] },
        { id: '3', v: 'say "hi"', w: 'x', line: 4, raw: records[2] },
      ]);
      for (const s of staged.slice(1)) expect(s).toEqual(staged[0]);
    });

    it('unreadable lines and CSV rows with the wrong field count are quarantined at their line', async () => {
      const flow = defineFlow({ target: 'dim_bad', keys: 'id', sequenceBy: 'ts' });
      const nd = path.join(dir, 'bad.ndjson');
      writeFileSync(nd, 'not json\n{"id":5,"ts":2,"label":"x"}\n[1,2]\n"text"\n');
      const r1 = await applyFiles(driver, flow, resolveInputs([nd]));
      expect(r1).toMatchObject({ rowsRead: 4, eventsApplied: 1, quarantined: 3 });
      const csv = path.join(dir, 'bad.csv');
      writeFileSync(csv, 'id,ts,label\n1,2,one,extra\n2,2,"two\nlines"\n,3,no key\n3,4\n');
      const r2 = await applyFiles(driver, flow, resolveInputs([csv]));
      expect(r2).toMatchObject({ rowsRead: 4, eventsApplied: 1, quarantined: 3 });
      const q = await driver.query(`SELECT CAST(line AS integer) AS line, reason, raw FROM _scd_dim_bad_quarantine ORDER BY "__scd_commit", line`);
      expect(q.map((x) => [x.line, x.raw])).toEqual([
        [1, 'not json'],
        [3, '[1,2]'],
        [4, '"text"'],
        [2, '1,2,one,extra'],
        [5, expect.stringContaining('no key')],
        [6, '3,4'],
      ]);
      expect(String(q[4]!.reason)).toMatch(/key.*id.*null/);
      expect((await readTargetWith(driver, flow)).map((x) => [x.id, x.label])).toEqual([
        [2, 'two\nlines'],
        [5, 'x'],
      ]);
    });

    it('a tuple sequence is a composite type, exported as an object', async () => {
      const flow = defineFlow({ target: 'dim_tuple', keys: 'id', sequenceBy: ['ts', 'lsn'] });
      const file = path.join(dir, 't.ndjson');
      writeFileSync(
        file,
        [
          { id: 1, v: 'a', ts: 1, lsn: 2 },
          { id: 1, v: 'b', ts: 1, lsn: 3 },
        ]
          .map((r) => JSON.stringify(r))
          .join('\n'),
      );
      await applyFiles(driver, flow, resolveInputs([file]));
      expect(await readTargetWith(driver, flow)).toEqual([
        { id: 1, v: 'a', ts: 1, lsn: 2, __START_AT: { ts: 1, lsn: 2 }, __END_AT: { ts: 1, lsn: 3 } },
        { id: 1, v: 'b', ts: 1, lsn: 3, __START_AT: { ts: 1, lsn: 3 }, __END_AT: null },
      ]);
      const pq = path.join(dir, 'tuple.parquet');
      await exportTargetWith(driver, flow, { format: 'parquet', out: pq });
      const duck = await openDriver(':memory:');
      try {
        expect(await duck.query(`SELECT typeof(__START_AT) AS t FROM read_parquet('${pq}') LIMIT 1`)).toEqual([{ t: 'STRUCT(ts BIGINT, lsn BIGINT)' }]);
      } finally {
        await duck.close();
      }
    });
  });
}
