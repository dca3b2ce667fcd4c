/**
 * Numbers beyond every double, through `bin/scd` on every engine (docs/TYPES.md "Fitting",
 * docs/QUERYING.md "Values as read").
 *
 * - A JSON or CSV number beyond a double (`1e999`, `-1e999`) fits no number column: declared
 *   double, decimal or bigint, or a column typed by its values. It used to be stored as ±Infinity;
 *   now its record is quarantined with its text as written and a reason naming the column, and
 *   the other records of the commit apply. ±1e308 and -0.0 are doubles and kept as they are.
 * - A double column may still hold ±Infinity and NaN (from Parquet, a table): every reader writes
 *   them. NDJSON and `show` write valid JSON (the strings "Infinity", "-Infinity", "NaN"), CSV and
 *   the table write the words, `scd serve` shows the key, commit and as-of pages.
 */
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { describe, it } from 'vitest';
import { driverPerRequest, loadFlowFile, openDriver, startServer } from '../../src/index.js';
import { cliDatabases, cliTestDir } from '../history/fixtures/cli-databases.js';
import { parseNdjson, type Row, scd, scdOk } from '../history/fixtures/history.js';
import { mkdir } from './fixtures/util.js';

const tmp = cliTestDir();

/** Declared: dbl, dec, big. Typed by their values: f (fractions: double), n (integers: bigint). */
const FLOW = { target: 'm', keys: 'id', sequenceBy: 'seq', columnTypes: { dbl: 'double', dec: 'decimal(12,2)', big: 'bigint' } };

/** A good record of id `id` with `column` set to `value` (JSON text). */
function record(id: number, column?: string, value?: string): string {
  const values: Record<string, string> = { dbl: '1.5', dec: '2.25', big: '7', f: '0.5', n: '3' };
  if (column) values[column] = value!;
  return `{"id":${id},"seq":1,${Object.entries(values)
    .map(([k, v]) => `"${k}":${v}`)
    .join(',')}}`;
}

const COLUMNS = ['dbl', 'dec', 'big', 'f', 'n'] as const;

/** NDJSON: a good record, ±1e308 in the double, then 1e999 or -1e999 in each number column. */
const NDJSON = [record(1), record(2, 'dbl', '1e308'), record(3, 'dbl', '-1e308'), ...COLUMNS.map((c, i) => record(10 + i, c, i % 2 ? '-1e999' : '1e999'))];
/** A JSON array of the same kind. */
const JSON_ARRAY = [record(20), ...COLUMNS.map((c, i) => record(30 + i, c, i % 2 ? '1E+999' : '-1e999'))];
/** CSV: the same numbers as text, and -0.0 (kept as a double's negative zero). */
const CSV_LINES = [
  'id,seq,dbl,dec,big,f,n',
  '40,1,-0.0,1.00,5,2.5,4',
  ...COLUMNS.map((c, i) => {
    const v: Record<string, string> = { dbl: '1.5', dec: '2.25', big: '7', f: '0.5', n: '3' };
    v[c] = i % 2 ? '-1e999' : '1e999';
    return `${50 + i},1,${v.dbl},${v.dec},${v.big},${v.f},${v.n}`;
  }),
];

function project(name: string, flow: object, settings: { database: string; schema?: string }) {
  const dir = mkdir(tmp.dir, name);
  const flowFile = path.join(dir, 'flow.json');
  writeFileSync(flowFile, JSON.stringify({ ...flow, ...settings }, null, 2));
  return { dir, flowFile };
}

describe('numbers beyond every double', { timeout: 600_000 }, () => {
  for (const db of cliDatabases) {
    it(`${db.name}: 1e999 and -1e999 are quarantined from every number column (NDJSON, JSON, CSV); ±1e308 and -0.0 are kept`, async ({ expect }) => {
      const p = project(`in-${db.name}`, FLOW, db.settings(path.join(tmp.dir, `in-${db.name}`)));
      const files = {
        ndjson: [path.join(p.dir, 'a.ndjson'), NDJSON.join('\n') + '\n'],
        json: [path.join(p.dir, 'b.json'), `[\n${JSON_ARRAY.join(',\n')}\n]\n`],
        csv: [path.join(p.dir, 'c.csv'), CSV_LINES.join('\n') + '\n'],
      } as const;
      for (const [file, text] of Object.values(files)) writeFileSync(file, text);
      const applied = [];
      for (const [file] of Object.values(files)) applied.push(parseNdjson((await scdOk(['apply', p.flowFile, '--input', file, '--json'], p.dir)).stdout)[0]!);
      expect(applied.map((r) => [r.rowsRead, r.eventsApplied, r.quarantined])).toEqual([
        [8, 3, 5],
        [6, 1, 5],
        [6, 1, 5],
      ]);

      const quarantined = parseNdjson((await scdOk(['quarantine', p.flowFile, '--format', 'ndjson'], p.dir)).stdout);
      const bad = (id: number) => quarantined.find((q) => String(q.raw).includes(`"id":${id},`) || String(q.raw).startsWith(`${id},`));
      for (const [i, column] of COLUMNS.entries())
        for (const [id, raw] of [
          [10 + i, NDJSON[3 + i]!],
          [30 + i, JSON_ARRAY[1 + i]!],
          [50 + i, CSV_LINES[2 + i]!],
        ] as const) {
          const q = bad(id);
          expect(q, `record ${id}`).toBeDefined();
          expect(q!.raw, `record ${id}`).toBe(raw);
          expect(q!.reason, `record ${id}`).toMatch(new RegExp(`^value -?1.* does not fit column "${column}"`));
        }
      expect(quarantined).toHaveLength(15);

      // What was kept, as every reader writes it.
      const rows = parseNdjson((await scdOk(['export', p.flowFile, '--format', 'ndjson'], p.dir)).stdout);
      expect(rows.map((r) => r.id)).toEqual([1, 2, 3, 20, 40]);
      const dbl = Object.fromEntries(rows.map((r) => [r.id, r.dbl]));
      expect(dbl[2]).toBe(1e308);
      expect(dbl[3]).toBe(-1e308);
      expect(Object.is(dbl[40], -0)).toBe(true);
      const csv = (await scdOk(['export', p.flowFile, '--format', 'csv'], p.dir)).stdout.trimEnd().split('\n');
      expect(csv.slice(1).map((l) => l.split(',')[2])).toEqual(['1.5', '1e+308', '-1e+308', '1.5', '-0']);
    });

    it(`${db.name}: a column typed a decimal by its values (an integer beyond 2^53, a fraction) quarantines 1e999 and "-1e999"`, async ({ expect }) => {
      const p = project(`dec-${db.name}`, { target: 'w', keys: 'id', sequenceBy: 's' }, db.settings(path.join(tmp.dir, `dec-${db.name}`)));
      const lines = ['{"id":1,"s":1,"w":9007199254740993}', '{"id":2,"s":1,"w":1.5}', '{"id":3,"s":1,"w":1e999}', '{"id":4,"s":1,"w":"-1e999"}'];
      const file = path.join(p.dir, 'w.ndjson');
      writeFileSync(file, lines.join('\n') + '\n');
      expect(parseNdjson((await scdOk(['apply', p.flowFile, '--input', file, '--json'], p.dir)).stdout)[0]).toMatchObject({ eventsApplied: 2, quarantined: 2 });
      const quarantined = parseNdjson((await scdOk(['quarantine', p.flowFile, '--format', 'ndjson'], p.dir)).stdout);
      expect(quarantined.map((q) => q.raw)).toEqual(lines.slice(2));
      for (const q of quarantined) expect(q.reason).toMatch(/does not fit column "w" \("?(DECIMAL\(20,1\)|numeric\(20,1\))"?\)/);
      expect((await scdOk(['export', p.flowFile, '--format', 'csv'], p.dir)).stdout.split('\n').slice(1, 3)).toEqual(['1,1,9007199254740993.0,1,', '2,1,1.5,1,']);
    });

    it(`${db.name}: a double column holding ±Infinity and NaN (from Parquet) is written by every reader`, async ({ expect }) => {
      const p = project(`inf-${db.name}`, { target: 'inf', keys: 'id', sequenceBy: 'seq' }, db.settings(path.join(tmp.dir, `inf-${db.name}`)));
      const parquet = path.join(p.dir, 'inf.parquet');
      const duck = await openDriver(':memory:');
      try {
        await duck.run(
          `COPY (SELECT * FROM (VALUES (1, 1, CAST('inf' AS DOUBLE), 'a'), (2, 1, CAST('-inf' AS DOUBLE), 'b'), (3, 1, CAST('nan' AS DOUBLE), 'Infinity'), (4, 1, CAST('-0.0' AS DOUBLE), 'NaN')) t(id, seq, v, s))
           TO '${parquet.replace(/'/g, "''")}' (FORMAT parquet)`,
        );
      } finally {
        await duck.close();
      }
      expect(parseNdjson((await scdOk(['apply', p.flowFile, '--input', parquet, '--json'], p.dir)).stdout)[0]).toMatchObject({ eventsApplied: 4, quarantined: 0 });

      const nd = (await scdOk(['export', p.flowFile, '--format', 'ndjson'], p.dir)).stdout;
      const rows = nd
        .trimEnd()
        .split('\n')
        .map((l) => JSON.parse(l) as Row); // every line is JSON
      expect(rows.map((r) => [r.v, r.s])).toEqual([
        ['Infinity', 'a'],
        ['-Infinity', 'b'],
        ['NaN', 'Infinity'],
        [-0, 'NaN'],
      ]);
      const csv = (await scdOk(['export', p.flowFile, '--format', 'csv'], p.dir)).stdout.trimEnd().split('\n');
      expect(csv.slice(1).map((l) => l.split(',').slice(0, 4).join(','))).toEqual(['1,1,Infinity,a', '2,1,-Infinity,b', '3,1,NaN,Infinity', '4,1,-0,NaN']);
      const table = (await scdOk(['export', p.flowFile, '--format', 'table'], p.dir)).stdout.trimEnd().split('\n');
      expect(table.slice(2).map((l) => l.split(/\s+/).slice(0, 4).join(' '))).toEqual(['1 1 Infinity a', '2 1 -Infinity b', '3 1 NaN Infinity', '4 1 -0 NaN']);
      for (const id of [1, 2, 3]) {
        const shown = (await scdOk(['show', p.flowFile, '--key', `id=${id}`, '--format', 'ndjson'], p.dir)).stdout;
        expect((JSON.parse(shown.trim()) as Row).v).toBe(['Infinity', '-Infinity', 'NaN'][id - 1]);
      }
      const text = await scd(['show', p.flowFile, '--key', 'id=1', '--format', 'table'], p.dir);
      expect(text.code, text.stderr).toBe(0);

      const flow = loadFlowFile(p.flowFile);
      const server = await startServer({ flow, source: driverPerRequest(flow.database, { schema: flow.schema }), log: () => {} });
      try {
        for (const [page, shows] of [
          ['/key?id=1', 'Infinity'],
          ['/key?id=2', '-Infinity'],
          ['/key?id=3', 'NaN'],
          ['/commits/1', 'Infinity'],
          ['/as-of?t=1', '-Infinity'],
          ['/', 'inf'],
        ] as const) {
          const res = await fetch(new URL(page, server.url));
          const body = await res.text();
          expect(res.status, `${page}: ${body.slice(0, 300)}`).toBe(200);
          expect(body, page).toContain(shows);
        }
      } finally {
        await server.close();
      }
    });
  }
});
