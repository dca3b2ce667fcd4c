/**
 * Processing time at the grain of a date, and a dated initial load followed by processing-time
 * batches (docs/FLOWS.md "Processing time"), through `bin/scd` on DuckDB and PostgreSQL (PGlite,
 * and the server when SCD_TEST_POSTGRES_URL is set): the PySpark and Delta Lake article's flow,
 * whose existing rows carry their effective date and whose later batches take `current_date()`.
 * Then a rebuild, which must change nothing.
 */

import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, it } from 'vitest';
import { PostgresDriver } from '../../src/dialects/postgres/index.js';
import { freshSchema } from '../engines.js';
import { assertBuilt, parseNdjson, type Row, scd, scdOk, tempDir } from '../history/fixtures/history.js';
import { ndjson, writeFlowProject } from './fixtures/flow-projects.js';

let tmp: { dir: string; cleanup: () => void };
beforeAll(() => {
  assertBuilt();
  tmp = tempDir('scdkit-processing-date-');
});
afterAll(() => tmp?.cleanup());

/** Today's date in UTC (the flows' time zone), as the commit sees it. */
const todayUtc = () => new Date().toISOString().slice(0, 10);

const ARTICLE = {
  target: 'dim_customer_scd2',
  keys: 'customer_id',
  sequenceBy: { processingTime: 'date', column: 'effective_date' },
  startAtColumn: 'effective_date',
  endAtColumn: 'end_date',
  isCurrentColumn: 'is_current',
};
/** The table as the article creates it: each row with its effective date. */
const EXISTING = [
  { customer_id: 501, customer_name: 'Rahul Mehta', city: 'Bengaluru', effective_date: '2024-01-01' },
  { customer_id: 502, customer_name: 'Anita Sharma', city: 'Pune', effective_date: '2023-06-15' },
];
/** Today's updates: no date; Rahul moved, Priya is new, Anita is not in the batch. */
const INCOMING = [
  { customer_id: 501, customer_name: 'Rahul Mehta', city: 'Pune' },
  { customer_id: 504, customer_name: 'Priya Nair', city: 'Chennai' },
];

interface Place {
  engine: string;
  database: (dir: string) => string;
  /** A schema of its own on a shared server, dropped when the returned closer runs. */
  schema?: () => Promise<{ schema: string; close: () => Promise<void> }>;
}
const url = process.env.SCD_TEST_POSTGRES_URL;
const PLACES: Place[] = [
  { engine: 'duckdb', database: () => 'scd.duckdb' },
  { engine: 'pglite', database: (dir) => `pglite://${path.join(dir, 'pg')}` },
  ...(url
    ? [
        {
          engine: 'postgres',
          database: () => url,
          schema: async () => {
            const schema = freshSchema();
            const owner = await PostgresDriver.connect(url, { schema, dropSchemaOnClose: true });
            return { schema, close: () => owner.close() };
          },
        },
      ]
    : []),
];

const project = (name: string, flow: Record<string, unknown>, files: Record<string, Row[]>) => writeFlowProject(tmp.dir, name, flow, files);

describe('processing time as a date, after a dated load, through bin/scd', { timeout: 240_000 }, () => {
  for (const place of PLACES) {
    it(`${place.engine}: the article's dated rows keep their dates; today's batch starts and ends versions at today's date; a rebuild changes nothing`, async ({ expect }) => {
      const owned = await place.schema?.();
      try {
        const dir0 = path.join(tmp.dir, `article-${place.engine}`);
        const dir = project(
          `article-${place.engine}`,
          { ...ARTICLE, database: place.database(dir0), ...(owned ? { schema: owned.schema } : {}) },
          { '01_existing.ndjson': EXISTING, '02_today.ndjson': INCOMING },
        );
        await scdOk(['apply', 'flow.json', '--input', '01_existing.ndjson'], dir);
        const before = todayUtc();
        const second = await scdOk(['apply', 'flow.json', '--input', '02_today.ndjson', '--json'], dir);
        const after = todayUtc();
        // Rahul's Bengaluru version ends and his Pune one starts; Priya's starts.
        expect(JSON.parse(second.stdout)).toMatchObject({ keysChanged: 2, versionsAdded: 2, versionsClosed: 1, versionsChanged: 1, versionsRemoved: 0 });
        const rows = parseNdjson((await scdOk(['export', 'flow.json', '--format', 'ndjson'], dir)).stdout);
        const today = rows.find((r) => r.customer_id === 504)!.effective_date as string;
        expect([before, after]).toContain(today);
        // The article's "Step 4" table, ordered by customer_id and effective_date.
        expect(rows).toEqual([
          { customer_id: 501, customer_name: 'Rahul Mehta', city: 'Bengaluru', effective_date: '2024-01-01', end_date: today, is_current: false },
          { customer_id: 501, customer_name: 'Rahul Mehta', city: 'Pune', effective_date: today, end_date: null, is_current: true },
          { customer_id: 502, customer_name: 'Anita Sharma', city: 'Pune', effective_date: '2023-06-15', end_date: null, is_current: true },
          { customer_id: 504, customer_name: 'Priya Nair', city: 'Chennai', effective_date: today, end_date: null, is_current: true },
        ]);
        const rebuilt = JSON.parse((await scdOk(['rebuild', 'flow.json', '--json'], dir)).stdout);
        expect(rebuilt).toMatchObject({ operation: 'rebuild', keysChanged: 0, versionsAdded: 0, versionsChanged: 0, versionsRemoved: 0, versionsClosed: 0 });
        expect(parseNdjson((await scdOk(['export', 'flow.json', '--format', 'ndjson'], dir)).stdout)).toEqual(rows);
      } finally {
        await owned?.close();
      }
    });

    it(`${place.engine}: { processingTime: date } stamps the commit's date in _processed_at (a date column, columnTypes may say so)`, async ({ expect }) => {
      const owned = await place.schema?.();
      try {
        const dir0 = path.join(tmp.dir, `date-${place.engine}`);
        const flow = {
          target: 'dim_emp',
          keys: 'id',
          sequenceBy: { processingTime: 'date' },
          columnTypes: { _processed_at: 'date' },
          database: place.database(dir0),
          ...(owned ? { schema: owned.schema } : {}),
        };
        const dir = project(`date-${place.engine}`, flow, {
          '01.ndjson': [
            { id: 1, name: 'John', salary: 30000 },
            { id: 2, name: 'Jack', salary: 30000 },
          ],
        });
        const before = todayUtc();
        const first = JSON.parse((await scdOk(['apply', 'flow.json', '--input', '01.ndjson', '--json'], dir)).stdout);
        const after = todayUtc();
        expect(first).toMatchObject({ rowsRead: 2, eventsApplied: 2, quarantined: 0, versionsAdded: 2 });
        const rows = parseNdjson((await scdOk(['export', 'flow.json', '--format', 'ndjson'], dir)).stdout);
        expect(rows.map((r) => Object.keys(r))).toEqual([
          ['id', 'name', 'salary', '__START_AT', '__END_AT'],
          ['id', 'name', 'salary', '__START_AT', '__END_AT'],
        ]);
        expect([before, after]).toContain(rows[0]!.__START_AT);
        expect(rows[1]!.__START_AT).toBe(rows[0]!.__START_AT);
        // A second batch the same day: id 2's new record has the first one's sequence (today), a tie
        // (SEMANTICS §3) ordered by the values' text, 70000 after 30000: one version, its values 70000.
        writeFileSync(path.join(dir, '02.ndjson'), ndjson([{ id: 2, name: 'Jack', salary: 70000 }]));
        await scdOk(['apply', 'flow.json', '--input', '02.ndjson'], dir);
        const again = parseNdjson((await scdOk(['export', 'flow.json', '--format', 'ndjson'], dir)).stdout);
        if (todayUtc() === rows[0]!.__START_AT) expect(again.find((r) => r.id === 2)).toMatchObject({ salary: 70000, __START_AT: rows[0]!.__START_AT, __END_AT: null });
        await scdOk(['rebuild', 'flow.json'], dir);
        expect(parseNdjson((await scdOk(['export', 'flow.json', '--format', 'ndjson'], dir)).stdout)).toEqual(again);
      } finally {
        await owned?.close();
      }
    });
  }

  it('a processing time stamped as a timestamp, declared a date in columnTypes, is refused before anything is applied', async ({ expect }) => {
    const dir = project(
      'declared-date',
      { target: 'dim_x', keys: 'id', sequenceBy: { processingTime: true }, columnTypes: { _processed_at: 'date' }, database: 'x.duckdb' },
      { '01.ndjson': [{ id: 1, v: 'a' }] },
    );
    const r = await scd(['apply', 'flow.json', '--input', '01.ndjson'], dir);
    expect(r.code).not.toBe(0);
    expect(r.stderr).toMatch(/_processed_at.*holds the commit's time/);
    expect(r.stderr).toMatch(/processingTime: date/);
    const log = await scd(['log', 'flow.json', '--format', 'ndjson'], dir);
    expect(log.stdout).not.toMatch(/"version"/);
  });
});
