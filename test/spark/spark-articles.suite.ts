/**
 * The articles' flow options and the everyday paths, through `bin/scd` on Spark + Delta, each
 * compared with what the same project gives on DuckDB (test/flows/*, test/history/exact-output,
 * test/sources/beyond-double, test/e2e/landing-identity and cli-messages hold the DuckDB and
 * PostgreSQL tests of each):
 *
 * - a current flag of the flow's two values ('Y'/'N'), its change feed, a rebuild that changes nothing;
 * - an inclusive end (the next start less a day), a late change cutting a version, a rebuild;
 * - a dated initial load then a processing-time batch at the grain of a date
 *   (`{processingTime: date, column}`, which fills the staged rows' missing dates), a rebuild;
 *   processing time as a date in the column the commit adds (`{processingTime: date}`);
 * - a JSON number beyond a double (1e999) quarantined with its text; a decimal(20,1) holding
 *   9007199254740993.0 written exactly by the table and CSV exports;
 * - a landing folder moved elsewhere, or a file renamed in place, is not read again;
 * - `show --key` of a key with no versions and `quarantine --commit` beyond the last refused in one line.
 *
 * Every commit on Spark is a remote job of tens of seconds: each project commits as few times as
 * its point needs.
 */

import { mkdirSync, renameSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
// bin/scd in a child process: these suites run only against a Spark server, and have not been checked in-process.
import { parseNdjson, type RunResult, scdProcess } from '../e2e/fixtures/cli.js';
import { freshSchema, sparkEngine } from '../engines.js';
import { ndjson } from '../flows/fixtures/flow-projects.js';
import { tempDir } from '../helpers.js';

const url = process.env.SCD_TEST_SPARK_URL;

type Row = Record<string, unknown>;
type Place = 'spark' | 'duckdb';

describe.skipIf(!sparkEngine)("bin/scd on Spark: the articles' options and the everyday paths (SCD_TEST_SPARK_URL)", { timeout: 900_000 }, () => {
  const schema = freshSchema();
  const work = tempDir('scdkit-spark-articles-');

  afterAll(async () => {
    work.cleanup();
    const { SparkDriver } = await import('../../src/dialects/spark/spark-driver.js');
    await (await SparkDriver.connect(url!, { schema, dropSchemaOnClose: true })).close();
  });

  /** `work/<name>-<place>/flow.json` (the database: the Spark server's schema, or a DuckDB file) and each file as NDJSON. */
  function project(name: string, place: Place, flow: Row, files: Record<string, Row[] | string>): string {
    const dir = path.join(work.dir, `${name}-${place}`);
    mkdirSync(dir, { recursive: true });
    const database = place === 'spark' ? { database: url, schema } : { database: 'scd.duckdb' };
    writeFileSync(path.join(dir, 'flow.json'), JSON.stringify({ ...flow, ...database }));
    for (const [file, rows] of Object.entries(files)) {
      mkdirSync(path.dirname(path.join(dir, file)), { recursive: true });
      writeFileSync(path.join(dir, file), typeof rows === 'string' ? rows : ndjson(rows));
    }
    return dir;
  }

  async function ok(args: string[], cwd: string): Promise<RunResult> {
    const r = await scdProcess(args, cwd);
    if (r.code !== 0) throw new Error(`scd ${args.join(' ')} exited ${r.code}:\n${r.stderr}`);
    return r;
  }
  const exported = async (dir: string, format = 'ndjson') => (await ok(['export', 'flow.json', '--format', format], dir)).stdout;
  const json = async (args: string[], dir: string) => JSON.parse((await ok([...args, '--json'], dir)).stdout) as Row;
  const UNCHANGED = { keysChanged: 0, versionsAdded: 0, versionsChanged: 0, versionsRemoved: 0, versionsClosed: 0 };

  it("isCurrentValues ['Y', 'N']: 'Y' on current versions, 'N' on closed ones, in the target and the change feed; a rebuild changes nothing", async () => {
    const flow = { target: 'employees', keys: 'id', sequenceBy: 'seq', exceptColumns: ['seq'], isCurrentColumn: 'is_active', isCurrentValues: ['Y', 'N'] };
    const files = {
      '01.ndjson': [
        { id: 1, name: 'John', age: 32, salary: 30000, seq: 1 },
        { id: 2, name: 'Jack', age: 32, salary: 30000, seq: 1 },
      ],
      '02.ndjson': [{ id: 2, name: 'Jack', age: 36, salary: 70000, seq: 2 }],
    };
    const dir = project('current-values', 'spark', flow, files);
    await ok(['apply', 'flow.json', '--input', '01.ndjson'], dir);
    await ok(['apply', 'flow.json', '--input', '02.ndjson'], dir);
    const rows = parseNdjson(await exported(dir));
    expect(rows).toEqual([
      { id: 1, name: 'John', age: 32, salary: 30000, __START_AT: 1, __END_AT: null, is_active: 'Y' },
      { id: 2, name: 'Jack', age: 32, salary: 30000, __START_AT: 1, __END_AT: 2, is_active: 'N' },
      { id: 2, name: 'Jack', age: 36, salary: 70000, __START_AT: 2, __END_AT: null, is_active: 'Y' },
    ]);
    const feed = parseNdjson((await ok(['changes', 'flow.json', '--from-version', '2', '--format', 'ndjson'], dir)).stdout);
    expect(feed.map((r) => [r._change_type, r.salary, r.__END_AT, r.is_active]).sort()).toEqual(
      [
        ['insert', 70000, null, 'Y'],
        ['update_postimage', 30000, 2, 'N'],
        ['update_preimage', 30000, null, 'Y'],
      ].sort(),
    );
    expect(await json(['rebuild', 'flow.json'], dir)).toMatchObject(UNCHANGED);
    expect(parseNdjson(await exported(dir))).toEqual(rows);
  });

  it('endInclusive: the end is the next start less a day; as-of finds a version on its last day; a late change cuts it; a rebuild changes nothing', async () => {
    const flow = {
      target: 'dim_customer_incl',
      keys: 'customer_id',
      sequenceBy: 'effective_from',
      exceptColumns: ['effective_from'],
      startAtColumn: 'effective_from',
      endAtColumn: 'effective_to',
      endSentinel: '9999-12-31',
      endInclusive: true,
      isCurrentColumn: 'is_current',
      previousValues: { city: 'previous_city' },
    };
    const rec = (city: string, effective_from: string) => ({ customer_id: 'C101', name: 'Priya', city, effective_from });
    const row = (city: string, previous_city: string | null, effective_from: string, effective_to: string, is_current: boolean) => ({
      customer_id: 'C101',
      name: 'Priya',
      city,
      previous_city,
      effective_from,
      effective_to,
      is_current,
    });
    const dir = project('inclusive-end', 'spark', flow, {
      '01.ndjson': [rec('Pune', '2026-09-01'), rec('Bengaluru', '2026-10-01')],
      // Late: a change on 15 September, applied after October's.
      '02.ndjson': [rec('Pune East', '2026-09-15')],
    });
    const asOf = async (t: string) => parseNdjson((await ok(['as-of', 'flow.json', t, '--format', 'ndjson'], dir)).stdout).map((r) => r.city);
    await ok(['apply', 'flow.json', '--input', '01.ndjson'], dir);
    expect(parseNdjson(await exported(dir))).toEqual([row('Pune', null, '2026-09-01', '2026-09-30', false), row('Bengaluru', 'Pune', '2026-10-01', '9999-12-31', true)]);
    expect(await asOf('2026-09-30')).toEqual(['Pune']);
    expect(await json(['apply', 'flow.json', '--input', '02.ndjson'], dir)).toMatchObject({ keysChanged: 1, versionsAdded: 1, versionsChanged: 2, versionsClosed: 1 });
    const after = parseNdjson(await exported(dir));
    expect(after).toEqual([
      row('Pune', null, '2026-09-01', '2026-09-14', false),
      row('Pune East', 'Pune', '2026-09-15', '2026-09-30', false),
      row('Bengaluru', 'Pune East', '2026-10-01', '9999-12-31', true),
    ]);
    expect(await asOf('2026-09-15')).toEqual(['Pune East']);
    expect(await json(['rebuild', 'flow.json'], dir)).toMatchObject(UNCHANGED);
    expect(parseNdjson(await exported(dir))).toEqual(after);
  });

  it("{processingTime: date, column}: the dated load keeps its dates; today's batch starts and ends versions at today's date; a rebuild changes nothing", async () => {
    const todayUtc = () => new Date().toISOString().slice(0, 10);
    const flow = {
      target: 'dim_customer_scd2',
      keys: 'customer_id',
      sequenceBy: { processingTime: 'date', column: 'effective_date' },
      startAtColumn: 'effective_date',
      endAtColumn: 'end_date',
      isCurrentColumn: 'is_current',
    };
    const dir = project('processing-date', 'spark', flow, {
      '01_existing.ndjson': [
        { customer_id: 501, customer_name: 'Rahul Mehta', city: 'Bengaluru', effective_date: '2024-01-01' },
        { customer_id: 502, customer_name: 'Anita Sharma', city: 'Pune', effective_date: '2023-06-15' },
      ],
      '02_today.ndjson': [
        { customer_id: 501, customer_name: 'Rahul Mehta', city: 'Pune' },
        { customer_id: 504, customer_name: 'Priya Nair', city: 'Chennai' },
      ],
    });
    await ok(['apply', 'flow.json', '--input', '01_existing.ndjson'], dir);
    const before = todayUtc();
    const second = await json(['apply', 'flow.json', '--input', '02_today.ndjson'], dir);
    const after = todayUtc();
    expect(second).toMatchObject({ keysChanged: 2, versionsAdded: 2, versionsClosed: 1, versionsChanged: 1, versionsRemoved: 0, quarantined: 0 });
    const rows = parseNdjson(await exported(dir));
    const today = rows.find((r) => r.customer_id === 504)?.effective_date as string;
    expect([before, after]).toContain(today);
    expect(rows).toEqual([
      { customer_id: 501, customer_name: 'Rahul Mehta', city: 'Bengaluru', effective_date: '2024-01-01', end_date: today, is_current: false },
      { customer_id: 501, customer_name: 'Rahul Mehta', city: 'Pune', effective_date: today, end_date: null, is_current: true },
      { customer_id: 502, customer_name: 'Anita Sharma', city: 'Pune', effective_date: '2023-06-15', end_date: null, is_current: true },
      { customer_id: 504, customer_name: 'Priya Nair', city: 'Chennai', effective_date: today, end_date: null, is_current: true },
    ]);
    expect(await json(['rebuild', 'flow.json'], dir)).toMatchObject({ operation: 'rebuild', ...UNCHANGED });
    expect(parseNdjson(await exported(dir))).toEqual(rows);
  });

  it('{processingTime: date}: every record of a commit starts at its date, in the column the commit adds', async () => {
    const flow = { target: 'dim_emp', keys: 'id', sequenceBy: { processingTime: 'date' } };
    const dir = project('processing-date-only', 'spark', flow, {
      '01.ndjson': [
        { id: 1, name: 'John', salary: 30000 },
        { id: 2, name: 'Jack', salary: 30000 },
      ],
    });
    const before = new Date().toISOString().slice(0, 10);
    expect(await json(['apply', 'flow.json', '--input', '01.ndjson'], dir)).toMatchObject({ rowsRead: 2, eventsApplied: 2, quarantined: 0, versionsAdded: 2 });
    const after = new Date().toISOString().slice(0, 10);
    const rows = parseNdjson(await exported(dir));
    expect(rows.map((r) => Object.keys(r))).toEqual([
      ['id', 'name', 'salary', '__START_AT', '__END_AT'],
      ['id', 'name', 'salary', '__START_AT', '__END_AT'],
    ]);
    expect([before, after]).toContain(rows[0]!.__START_AT);
    expect(rows[1]!.__START_AT).toBe(rows[0]!.__START_AT);
  });

  describe('exact values and the messages of a missing key and commit', () => {
    const flow = { target: 'exact', keys: 'id', sequenceBy: 'seq', columnTypes: { dec: 'decimal(20,1)', dbl: 'double' } };
    /** Exact decimals as JSON strings (their text reaches the decimal as written); 1e999 fits no number column. */
    const RECORDS =
      [
        '{"id":1,"seq":1,"dec":"9007199254740993.0","dbl":1.5,"s":"héllo ✓ 東京 🎉"}',
        '{"id":2,"seq":1,"dec":"-0.1","dbl":1e308,"s":""}',
        '{"id":3,"seq":1,"dec":"1.0","dbl":1e999,"s":"beyond"}',
        '{"id":4,"seq":1,"dec":1e999,"dbl":2.5,"s":"beyond too"}',
        '{"id":5,"seq":1,"dec":null,"dbl":null,"s":null}',
      ].join('\n') + '\n';
    const dirs = {} as Record<Place, string>;

    it('1e999 is quarantined with its text and a reason naming its column; the other records apply, as on DuckDB', async () => {
      for (const place of ['spark', 'duckdb'] as const) dirs[place] = project('exact', place, flow, { 'a.ndjson': RECORDS });
      const counts = await Promise.all((['spark', 'duckdb'] as const).map((p) => json(['apply', 'flow.json', '--input', 'a.ndjson'], dirs[p])));
      for (const c of counts) expect(c).toMatchObject({ rowsRead: 5, eventsApplied: 3, quarantined: 2 });
      const quarantine = async (p: Place) => parseNdjson((await ok(['quarantine', 'flow.json', '--format', 'ndjson'], dirs[p])).stdout);
      const spark = await quarantine('spark');
      expect(spark.map((q) => String(q.raw)).sort()).toEqual(RECORDS.trim().split('\n').slice(2, 4).sort());
      // The reason names the column and its type, as on DuckDB. (Spark's JSON reader holds the
      // number as a double's infinity: its reason shows that, not the text as written.)
      const reasons = (rows: Row[]) => rows.map((q) => [q.raw, String(q.reason).replace(/^value .* does not fit/, 'value does not fit')]).sort();
      expect(reasons(spark)).toEqual(reasons(await quarantine('duckdb')));
      for (const q of spark)
        expect(String(q.reason)).toMatch(String(q.raw).includes('"dec":1e999') ? /does not fit column "dec" \(.*DECIMAL\(20,1\)/i : /does not fit column "dbl" \(.*DOUBLE/i);
    });

    it('table and CSV exports write the decimal(20,1) 9007199254740993.0 exactly, as DuckDB does', async () => {
      for (const format of ['table', 'csv', 'ndjson']) {
        const spark = await exported(dirs.spark, format);
        expect(spark, format).toContain('9007199254740993.0');
        expect(spark, format).not.toContain('9007199254740992');
        const duckdb = await exported(dirs.duckdb, format);
        // NDJSON numbers are the engine's own JSON spelling (Spark writes 1e308 as 1.0E308): the same values.
        if (format === 'ndjson') expect(parseNdjson(spark)).toEqual(parseNdjson(duckdb));
        else expect(spark, format).toBe(duckdb);
      }
      const csv = path.join(work.dir, 'exact.csv');
      await ok(['export', 'flow.json', '--out', csv], dirs.spark);
      expect((await import('node:fs')).readFileSync(csv, 'utf8')).toContain('9007199254740993.0');
    });

    it('show --key of a key with no versions and quarantine --commit beyond the last: one line, exit 1', async () => {
      const refused = async (args: string[], says: RegExp) => {
        const r = await scdProcess(args, dirs.spark);
        expect(r.code, args.join(' ')).toBe(1);
        expect(r.stdout, args.join(' ')).toBe('');
        expect(r.stderr.trim().split('\n'), args.join(' ')).toHaveLength(1);
        expect(r.stderr, args.join(' ')).toMatch(says);
        expect(r.stderr, args.join(' ')).not.toMatch(/bug in scdkit/);
      };
      await refused(['show', 'flow.json', '--key', 'id=99'], /key id=99 has no versions in exact/);
      await refused(['quarantine', 'flow.json', '--commit', '99'], /commit 99 is beyond the last commit \(commits are 1\.\.1\)/);
    });
  });

  it('a landing folder moved elsewhere, or a file renamed in place, is not read again', async () => {
    const flow = { target: 'dim_moved', keys: 'id', sequenceBy: 'ts', columnTypes: { amount: 'decimal(18,2)' }, source: { path: 'landing/' } };
    const files = {
      'landing/2025-01-01.ndjson':
        `{"id":1,"ts":"2025-01-01T00:00:00Z","amount":10.25,"name":"Zoë","note":null}\n` + `{"id":2,"ts":"2025-01-01T05:30:00+05:30","amount":-0.01,"name":"日本語","note":""}\n`,
      'landing/2025-01-02.ndjson': `{"id":1,"ts":"2025-01-02T00:00:00-08:00","amount":99999.99,"name":"Zoe","note":"x"}\n`,
    };
    let dir = project('landing', 'spark', flow, files);
    expect((await ok(['apply', 'flow.json'], dir)).stdout).toMatch(/^commit 1: read 3 rows = 3 applied/);
    const before = await exported(dir);

    const to = path.join(work.dir, 'elsewhere', 'landing-spark');
    mkdirSync(path.dirname(to), { recursive: true });
    renameSync(dir, to);
    dir = to;
    expect(await json(['apply', 'flow.json'], dir)).toMatchObject({ version: null, nothingNew: true, alreadyApplied: 2 });

    renameSync(path.join(dir, 'landing', '2025-01-02.ndjson'), path.join(dir, 'landing', '2025-01-02-renamed.ndjson'));
    expect(await json(['apply', 'flow.json'], dir)).toMatchObject({ version: null, nothingNew: true });
    expect(await exported(dir)).toBe(before);
    const log = parseNdjson((await ok(['log', 'flow.json', '--json'], dir)).stdout);
    expect(log).toHaveLength(1);
  });
});
