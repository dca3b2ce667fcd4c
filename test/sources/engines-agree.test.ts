/**
 * The same input gives the same history on every engine, through `bin/scd` on DuckDB and
 * PostgreSQL (PGlite, and the server when SCD_TEST_POSTGRES_URL is set) (docs/TYPES.md "Times",
 * "Fitting"):
 *
 * - a time's digits beyond microseconds are dropped, never rounded: `23:59:59.9999999Z` stays
 *   before midnight (PostgreSQL used to make it midnight, tying it with the next event, and a
 *   version vanished), zoned and wall-clock, as sequence and as a plain column, JSON, CSV, Parquet;
 * - a leap second (`23:59:60`) is no time: its record is quarantined with the column named
 *   (PostgreSQL used to read the next minute);
 * - a number written with an exponent fits no integer column, whole (`2.04e2`) or not (`2.5e0`):
 *   quarantined from a bigint key or column, also from a Debezium row and from a CSV applied with a
 *   JSON file in one commit (where PostgreSQL used to apply 204).
 */
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { describe, it } from 'vitest';
import { openDriver } from '../../src/index.js';
import { cliDatabases, cliTestDir } from '../history/fixtures/cli-databases.js';
import { parseNdjson, type Row, scdOk } from '../history/fixtures/history.js';
import { mkdir } from './fixtures/util.js';

const tmp = cliTestDir();

function project(name: string, flow: object, settings: { database: string; schema?: string }) {
  const dir = mkdir(tmp.dir, name);
  const flowFile = path.join(dir, 'flow.json');
  writeFileSync(flowFile, JSON.stringify({ ...flow, ...settings }, null, 2));
  return { dir, flowFile };
}

/** Write `lines` to `name` in `dir`; its path. */
function file(dir: string, name: string, lines: string[]): string {
  const p = path.join(dir, name);
  writeFileSync(p, lines.join('\n') + '\n');
  return p;
}

async function apply(p: { dir: string; flowFile: string }, input: string | string[]): Promise<Row> {
  const inputs = (Array.isArray(input) ? input : [input]).flatMap((f) => ['--input', f]);
  return parseNdjson((await scdOk(['apply', p.flowFile, ...inputs, '--json'], p.dir)).stdout)[0]!;
}

async function exported(p: { dir: string; flowFile: string }): Promise<Row[]> {
  return parseNdjson((await scdOk(['export', p.flowFile, '--format', 'ndjson'], p.dir)).stdout);
}

async function quarantine(p: { dir: string; flowFile: string }): Promise<Row[]> {
  return parseNdjson((await scdOk(['quarantine', p.flowFile, '--format', 'ndjson'], p.dir)).stdout);
}

describe('the engines agree on the same input', { timeout: 600_000 }, () => {
  for (const db of cliDatabases) {
    it(`${db.name}: digits beyond microseconds are dropped, never rounded (instant sequence, wall-clock column; JSON and CSV)`, async ({ expect }) => {
      const p = project(`frac-z-${db.name}`, { target: 'fz', keys: 'id', sequenceBy: 'ts' }, db.settings(path.join(tmp.dir, `frac-z-${db.name}`)));
      const json = file(p.dir, 'a.ndjson', [
        '{"id":1,"v":"a","seen":"2025-03-01T10:00:00.9999999","ts":"2025-01-01T23:59:59.9999999Z"}',
        '{"id":1,"v":"b","seen":"2025-03-01T10:00:00.1234565","ts":"2025-01-02T00:00:00Z"}',
      ]);
      const csv = file(p.dir, 'b.csv', ['id,v,seen,ts', '2,a,2025-03-01 10:00:00.99999999,2025-01-02T05:29:59.999999999+05:30', '2,b,2025-03-01 10:00:01,2025-01-02 00:00:00Z']);
      expect(await apply(p, json)).toMatchObject({ eventsApplied: 2, ties: 0, quarantined: 0, versionsAdded: 2 });
      expect(await apply(p, csv)).toMatchObject({ eventsApplied: 2, ties: 0, quarantined: 0, versionsAdded: 2 });
      expect((await exported(p)).map((r) => [r.id, r.v, r.seen, r.ts, r.__START_AT, r.__END_AT])).toEqual([
        [1, 'a', '2025-03-01T10:00:00.999999', '2025-01-01T23:59:59.999999Z', '2025-01-01T23:59:59.999999Z', '2025-01-02T00:00:00Z'],
        [1, 'b', '2025-03-01T10:00:00.123456', '2025-01-02T00:00:00Z', '2025-01-02T00:00:00Z', null],
        [2, 'a', '2025-03-01T10:00:00.999999', '2025-01-01T23:59:59.999999Z', '2025-01-01T23:59:59.999999Z', '2025-01-02T00:00:00Z'],
        [2, 'b', '2025-03-01T10:00:01', '2025-01-02T00:00:00Z', '2025-01-02T00:00:00Z', null],
      ]);
    });

    it(`${db.name}: digits beyond microseconds are dropped (wall-clock sequence, instant column; declared types; Parquet nanoseconds)`, async ({ expect }) => {
      const p = project(
        `frac-w-${db.name}`,
        { target: 'fw', keys: 'id', sequenceBy: 'at', columnTypes: { at: 'timestamp_ntz', z: 'timestamp' } },
        db.settings(path.join(tmp.dir, `frac-w-${db.name}`)),
      );
      const json = file(p.dir, 'a.ndjson', [
        '{"id":1,"at":"2025-06-30T23:59:59.9999996","z":"2025-06-30T23:59:59.9999996-02:00"}',
        '{"id":1,"at":"2025-07-01T00:00:00","z":"2025-07-01T00:00:00Z"}',
      ]);
      expect(await apply(p, json)).toMatchObject({ eventsApplied: 2, ties: 0, versionsAdded: 2 });
      const parquet = path.join(p.dir, 'c.parquet');
      const duck = await openDriver(':memory:');
      try {
        await duck.run(
          `COPY (SELECT 2 AS id, CAST('2025-06-30 23:59:59.9999999' AS TIMESTAMP_NS) AS "at", CAST('2025-07-01 01:59:59.9999999+00' AS TIMESTAMPTZ) AS z
                 UNION ALL SELECT 2, CAST('2025-07-01 00:00:00' AS TIMESTAMP_NS), CAST('2025-07-01 02:00:00+00' AS TIMESTAMPTZ))
           TO '${parquet.replace(/'/g, "''")}' (FORMAT parquet)`,
        );
      } finally {
        await duck.close();
      }
      expect(await apply(p, parquet)).toMatchObject({ eventsApplied: 2, ties: 0, quarantined: 0, versionsAdded: 2 });
      expect((await exported(p)).map((r) => [r.id, r.at, r.z, r.__END_AT])).toEqual([
        [1, '2025-06-30T23:59:59.999999', '2025-07-01T01:59:59.999999Z', '2025-07-01T00:00:00'],
        [1, '2025-07-01T00:00:00', '2025-07-01T00:00:00Z', null],
        [2, '2025-06-30T23:59:59.999999', '2025-07-01T01:59:59.999999Z', '2025-07-01T00:00:00'],
        [2, '2025-07-01T00:00:00', '2025-07-01T02:00:00Z', null],
      ]);
    });

    it(`${db.name}: a leap second is quarantined with the column named (JSON instant sequence, CSV wall-clock column)`, async ({ expect }) => {
      const p = project(
        `leap-${db.name}`,
        { target: 'lp', keys: 'id', sequenceBy: 'ts', columnTypes: { seen: 'timestamp_ntz' } },
        db.settings(path.join(tmp.dir, `leap-${db.name}`)),
      );
      const lines = [
        '{"id":1,"v":"a","ts":"2016-12-31T23:59:59Z","seen":"2016-12-31 12:00:00"}',
        '{"id":1,"v":"leap","ts":"2016-12-31T23:59:60Z","seen":"2016-12-31 12:00:00"}',
        '{"id":1,"v":"b","ts":"2017-01-01T00:00:00Z","seen":"2016-12-31 12:00:00"}',
        '{"id":2,"v":"a","ts":"2016-12-31T23:59:58Z","seen":"2016-12-31 12:00:00"}',
      ];
      expect(await apply(p, file(p.dir, 'a.ndjson', lines))).toMatchObject({ eventsApplied: 3, ties: 0, quarantined: 1 });
      const csvLines = ['id,v,ts,seen', '3,a,2017-01-01T00:00:01Z,2016-12-31 23:59:60', '3,b,2017-01-01T00:00:02Z,2017-01-01 00:00:00'];
      expect(await apply(p, file(p.dir, 'b.csv', csvLines))).toMatchObject({ eventsApplied: 1, quarantined: 1 });
      const q = await quarantine(p);
      expect(q.map((r) => r.raw).sort()).toEqual([lines[1], csvLines[1]].sort());
      expect(q.find((r) => r.raw === lines[1])!.reason).toMatch(/^value "?2016-12-31T23:59:60Z"? does not fit column "ts"/);
      expect(q.find((r) => r.raw === csvLines[1])!.reason).toMatch(/^value "?2016-12-31 23:59:60"? does not fit column "seen"/);
      expect((await exported(p)).map((r) => [r.id, r.v, r.__START_AT, r.__END_AT])).toEqual([
        [1, 'a', '2016-12-31T23:59:59Z', '2017-01-01T00:00:00Z'],
        [1, 'b', '2017-01-01T00:00:00Z', null],
        [2, 'a', '2016-12-31T23:59:58Z', null],
        [3, 'b', '2017-01-01T00:00:02Z', null],
      ]);
    });

    it(`${db.name}: a number with an exponent fits no integer key or column (files, a CSV with a JSON file, Debezium rows)`, async ({ expect }) => {
      const flow = { target: 'ex', keys: 'id', sequenceBy: 'seq', columnTypes: { id: 'bigint', qty: 'bigint' } };
      const p = project(`exp-${db.name}`, flow, db.settings(path.join(tmp.dir, `exp-${db.name}`)));
      const json = file(p.dir, 'a.ndjson', ['{"id":1,"seq":1,"qty":5}', '{"id":2.04e2,"seq":1,"qty":6}', '{"id":2.5e0,"seq":1,"qty":7}', '{"id":3,"seq":1,"qty":2E+1}']);
      const csv = file(p.dir, 'b.csv', ['id,seq,qty', '204e0,2,9', '3,2,1e2', '4,2,9']);
      // One commit: the CSV's columns are held as JSON with the JSON file's.
      expect(await apply(p, [json, csv])).toMatchObject({ rowsRead: 7, eventsApplied: 2, quarantined: 5 });
      const reasons = (await quarantine(p)).map((r) => String(r.reason).replace(/"?(BIGINT|bigint)"?/, 'bigint'));
      expect(reasons.filter((r) => /does not fit column "id" \(bigint\)$/.test(r))).toHaveLength(3);
      expect(reasons.filter((r) => /does not fit column "qty" \(bigint\)$/.test(r))).toHaveLength(2);
      expect((await exported(p)).map((r) => [r.id, r.qty])).toEqual([
        [1, 5],
        [4, 9],
      ]);

      // Debezium rows are read from the envelope's text as written, on every engine.
      const land = mkdir(p.dir, 'land');
      const dbz = project(
        `dbz-${db.name}`,
        { target: 'dz', keys: 'id', source: { path: land, format: 'debezium' }, columnTypes: { id: 'bigint', n: 'bigint' } },
        db.settings(path.join(tmp.dir, `dbz-${db.name}`)),
      );
      file(land, 'e.ndjson', [
        '{"op":"c","after":{"id":1,"v":"a"},"source":{"ts_ms":1}}',
        '{"op":"c","after":{"id":2.04e2,"v":"b"},"source":{"ts_ms":2}}',
        '{"op":"c","after":{"id":3,"v":"c","n":2e1},"source":{"ts_ms":3}}',
      ]);
      expect(parseNdjson((await scdOk(['apply', dbz.flowFile, '--json'], dbz.dir)).stdout)[0]).toMatchObject({ rowsRead: 3, eventsApplied: 1, quarantined: 2 });
      const dq = await quarantine(dbz);
      expect(dq.map((r) => String(r.reason).replace(/^value (\S+) does not fit column "(\w+)".*$/, '$2'))).toEqual(['id', 'n']);
      expect((await exported(dbz)).map((r) => r.id)).toEqual([1]);
    });
  }
});
