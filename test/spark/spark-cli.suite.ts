/**
 * `bin/scd` against a Spark Connect server, end to end: the README's customer example applied with
 * `--db sc://…` (one commit per file), then read back with the database from SCD_DATABASE_URL, gives
 * what the same commands give on DuckDB: the apply's counts, the history, the change feed, the
 * `as of` read of an earlier commit; `scd log` maps each commit to its Delta version; a second
 * apply of the landing folder applies nothing (its files are recorded in the Delta tables).
 */

import { cpSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
// bin/scd in a child process: these suites run only against a Spark server, and have not been checked in-process.
import { parseNdjson, ROOT, type RunResult, scdProcess } from '../e2e/fixtures/cli.js';
import { freshSchema, sparkEngine } from '../engines.js';
import { tempDir } from '../helpers.js';

const url = process.env.SCD_TEST_SPARK_URL;
const EXAMPLE = path.join(ROOT, 'examples', 'customers');

/** The example's flow with the given `database`/`schema` lines in place of its own database. */
function project(dir: string, extra: string): string {
  cpSync(path.join(EXAMPLE, 'changes'), path.join(dir, 'changes'), { recursive: true });
  const flow = path.join(dir, 'flow.yaml');
  writeFileSync(
    flow,
    `name: customers
target: dim_customer
keys: [customer_id]
sequenceBy: changed_at
applyAsDeletes: "op = 'DELETE'"
exceptColumns: [op]
storedAs: scd2
${extra}
source:
  path: changes/
`,
  );
  return flow;
}

/** A command that must succeed; its output with each run's own durations taken out. */
async function ok(args: string[], cwd: string, env: NodeJS.ProcessEnv = {}): Promise<RunResult> {
  const r = await scdProcess(args, cwd, env);
  if (r.code !== 0) throw new Error(`scd ${args.join(' ')} exited ${r.code}:\n${r.stderr}`);
  return { ...r, stdout: r.stdout.replace(/ \(\d+(?:\.\d+)? m?s\)/g, '') };
}

/** A change feed's rows without their commit timestamps, in one order whatever the engine's. */
const comparable = (rows: Array<Record<string, unknown>>) => rows.map(({ _commit_timestamp: _, ...r }) => JSON.stringify(r)).sort();

describe.skipIf(!sparkEngine)('bin/scd on Spark + Delta (SCD_TEST_SPARK_URL)', { timeout: 900_000 }, () => {
  const schema = freshSchema();
  const work = tempDir('scdkit-spark-cli-');
  let sparkFlow = '';
  let duckFlow = '';
  const onSpark = { SCD_DATABASE_URL: url };
  const apply: { spark?: RunResult; duckdb?: RunResult } = {};

  beforeAll(async () => {
    sparkFlow = project(path.join(work.dir, 'spark'), `schema: ${schema}`);
    duckFlow = project(path.join(work.dir, 'duckdb'), 'database: scd.duckdb');
    apply.spark = await ok(['apply', sparkFlow, '--each', '--db', url!], work.dir);
    apply.duckdb = await ok(['apply', duckFlow, '--each'], work.dir);
  }, 600_000);

  afterAll(async () => {
    work.cleanup();
    const { SparkDriver } = await import('../../src/dialects/spark/spark-driver.js');
    await (await SparkDriver.connect(url!, { schema, dropSchemaOnClose: true })).close();
  });

  it('apply --db sc://… commits each file, with the counts DuckDB gives', () => {
    expect(apply.spark!.stdout).toContain('commit 3: read 3 rows = 2 applied + 1 duplicate + 0 quarantined');
    expect(apply.spark!.stdout).toBe(apply.duckdb!.stdout);
  });

  it('export (SCD_DATABASE_URL) prints the README history; --version 2 reads the Delta version of commit 2', async () => {
    const table = await ok(['export', sparkFlow, '--format', 'table'], work.dir, onSpark);
    expect(table.stdout).toContain('501          Rahul Mehta    Mysuru     2024-08-01  2024-08-01  2025-03-10');
    expect(table.stdout).toBe((await ok(['export', duckFlow, '--format', 'table'], work.dir)).stdout);
    const asOf = await ok(['export', sparkFlow, '--version', '2', '--format', 'ndjson'], work.dir, onSpark);
    expect(parseNdjson(asOf.stdout).some((r) => r.city === 'Mysuru')).toBe(false);
    expect(asOf.stdout).toBe((await ok(['export', duckFlow, '--version', '2', '--format', 'ndjson'], work.dir)).stdout);
  });

  it('show --key, as-of and quarantine print what DuckDB prints', async () => {
    for (const args of [
      ['show', '--key', 'customer_id=501', '--format', 'ndjson'],
      ['as-of', '2024-09-01', '--format', 'ndjson'],
      ['as-of', '2025-07-01', '--format', 'table'],
      ['quarantine', '--format', 'ndjson'],
    ]) {
      const [command, ...rest] = args;
      const spark = await ok([command!, sparkFlow, ...rest], work.dir, onSpark);
      expect(spark.stdout, args.join(' ')).toBe((await ok([command!, duckFlow, ...rest], work.dir)).stdout);
      if (command !== 'quarantine') expect(spark.stdout.length).toBeGreaterThan(0);
    }
  });

  it('export --out writes NDJSON, CSV and table files as DuckDB does; Parquet, which Spark would write on its own disks, is refused in one line', async () => {
    for (const file of ['out.ndjson', 'out.csv', 'out.txt']) {
      await ok(['export', sparkFlow, '--out', path.join(work.dir, `spark-${file}`)], work.dir, onSpark);
      await ok(['export', duckFlow, '--out', path.join(work.dir, `duck-${file}`)], work.dir);
      const written = readFileSync(path.join(work.dir, `spark-${file}`), 'utf8');
      expect(written).toContain('Mysuru');
      expect(written).toBe(readFileSync(path.join(work.dir, `duck-${file}`), 'utf8'));
    }
    const parquet = await scdProcess(['export', sparkFlow, '--out', path.join(work.dir, 'out.parquet')], work.dir, onSpark);
    expect(parquet.code).not.toBe(0);
    expect(parquet.stderr.trim().split('\n')).toHaveLength(1);
    expect(parquet.stderr).toMatch(/Parquet/i);
  });

  it('changes reads the Delta change feed: the rows DuckDB gives, timestamps aside', async () => {
    const feed = (flow: string, env: NodeJS.ProcessEnv = {}) =>
      ok(['changes', flow, '--from-version', '2', '--format', 'ndjson'], work.dir, env).then((r) => comparable(parseNdjson(r.stdout)));
    const spark = await feed(sparkFlow, onSpark);
    expect(spark.length).toBeGreaterThan(0);
    expect(spark).toEqual(await feed(duckFlow));
  });

  it('log maps each commit to the Delta version of its target; status names the last commit', async () => {
    const log = parseNdjson((await ok(['log', sparkFlow, '--json'], work.dir, onSpark)).stdout);
    expect(log.map((c) => c.version)).toEqual([3, 2, 1]);
    const deltas = log.map((c) => Number(c.deltaVersion));
    expect(deltas.every((v) => Number.isInteger(v))).toBe(true);
    expect(deltas[0]).toBeGreaterThan(deltas[1]!);
    expect(deltas[1]).toBeGreaterThan(deltas[2]!);
    const status = await ok(['status', sparkFlow], work.dir, onSpark);
    expect(status.stdout).toMatch(/last commit\s+3 of 3: apply/);
  });

  it('a second apply of the landing folder applies nothing: its files are recorded in the Delta tables', async () => {
    const again = JSON.parse((await ok(['apply', sparkFlow, '--json'], work.dir, onSpark)).stdout);
    expect(again).toMatchObject({ version: null, nothingNew: true, alreadyApplied: 3 });
    expect(again).toEqual(JSON.parse((await ok(['apply', duckFlow, '--json'], work.dir)).stdout));
    const log = parseNdjson((await ok(['log', sparkFlow, '--json'], work.dir, onSpark)).stdout);
    expect(log).toHaveLength(3);
  });

  it('a source column with a space, which a Delta table cannot have: one line before anything is written; DuckDB keeps it', async () => {
    const dir = path.join(work.dir, 'space');
    const flow = project(dir, `schema: ${schema}`).replace('flow.yaml', 'space.yaml');
    writeFileSync(flow, `target: dim_spaced\nkeys: [id]\nsequenceBy: seq\nschema: ${schema}\n`);
    writeFileSync(path.join(dir, 'spaced.ndjson'), '{"id": 1, "seq": "2025-03-01T10:00:00+01:00", "first name": "Zoë"}\n');
    const r = await scdProcess(['apply', flow, '--input', path.join(dir, 'spaced.ndjson'), '--db', url!], work.dir);
    expect(r.code, r.stderr).toBe(1);
    const lines = r.stderr.split('\n').filter((l) => l.trim() !== '' && !l.startsWith('  '));
    expect(lines).toEqual([
      `scd: source column "first name" holds a space, which a Delta table's column names cannot hold (none of space , ; { } ( ) = tab or line break); nothing was applied (fix: rename it in the source)`,
    ]);
    const tables = parseNdjson((await ok(['log', flow, '--json'], work.dir, onSpark).catch(() => ({ stdout: '' }))).stdout);
    expect(tables).toEqual([]);
  });
});

describe.skipIf(!sparkEngine)('bin/scd on Spark: a flow expression that fails on one record quarantines it (SCD_TEST_SPARK_URL)', { timeout: 900_000 }, () => {
  const work = tempDir('scdkit-spark-expr-');
  afterAll(() => work.cleanup());
  const LINES = ['{"id":1,"seq":1,"d":5,"code":"7"}', '{"id":2,"seq":1,"d":0,"code":"8"}', '{"id":3,"seq":1,"d":4,"code":"abc"}', '{"id":4,"seq":1,"d":20,"code":"12"}'];

  it('"abc" and d = 0 quarantined with the reasons DuckDB gives; the other records land; action fail stops in one line', async () => {
    const flowFor = (dir: string, extra: string, action: string) => {
      const flow = path.join(dir, 'flow.yaml');
      writeFileSync(
        flow,
        `target: ratio\nkeys: id\nsequenceBy: seq\napplyAsDeletes: "100 / d > 10"\nexpect:\n  code_ok: { sql: "CAST(code AS INTEGER) > 0", action: ${action} }\n${extra}\n`,
      );
      writeFileSync(path.join(dir, 'changes.ndjson'), LINES.join('\n') + '\n');
      return flow;
    };
    const { mkdirSync } = await import('node:fs');
    for (const d of ['spark', 'duckdb', 'fail']) mkdirSync(path.join(work.dir, d));
    const sparkFlow = flowFor(path.join(work.dir, 'spark'), `schema: ${freshSchema()}`, 'quarantine');
    const duckFlow = flowFor(path.join(work.dir, 'duckdb'), 'database: scd.duckdb', 'quarantine');
    const onSpark = { SCD_DATABASE_URL: url };
    const spark = JSON.parse((await ok(['apply', sparkFlow, '--input', path.join(work.dir, 'spark', 'changes.ndjson'), '--json'], work.dir, onSpark)).stdout);
    expect(spark).toMatchObject({ rowsRead: 4, eventsApplied: 2, quarantined: 2 });
    const reasons = async (flow: string, env: NodeJS.ProcessEnv = {}) =>
      parseNdjson((await ok(['quarantine', flow, '--format', 'ndjson'], work.dir, env)).stdout)
        .map((q) => [q.line, String(q.reason).replace(/: .*$/, '')])
        .sort((a, b) => Number(a[0]) - Number(b[0]));
    await ok(['apply', duckFlow, '--input', path.join(work.dir, 'duckdb', 'changes.ndjson')], work.dir);
    expect(await reasons(sparkFlow, onSpark)).toEqual([
      [2, 'division by zero in applyAsDeletes'],
      [3, 'expect.code_ok.sql "CAST(code AS INTEGER) > 0" failed on this record'],
    ]);
    expect(await reasons(sparkFlow, onSpark)).toEqual(await reasons(duckFlow));
    const failFlow = flowFor(path.join(work.dir, 'fail'), `schema: ${freshSchema()}`, 'fail');
    const failed = await scdProcess(['apply', failFlow, '--input', path.join(work.dir, 'fail', 'changes.ndjson')], work.dir, onSpark);
    expect(failed.code).not.toBe(0);
    expect(failed.stderr.split('\n').filter((l) => l.startsWith('scd:'))).toEqual([
      expect.stringMatching(/expectation "code_ok" .* could not be evaluated on the record at .*changes\.ndjson:3/),
    ]);
  });
});
