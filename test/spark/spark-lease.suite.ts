/**
 * A Spark commit through `bin/scd`, as its user sees it (SCD_TEST_SPARK_URL): the progress line of
 * each step as the step begins; the target's lease renewed while the commit works; an apply killed
 * with -9 leaves a lease the next apply on this machine takes over at once; a lease of another host
 * is waited for until it runs out, the waiting line naming its holder and its expiry, and the wait
 * left out of the commit's reported duration. The history at the end is DuckDB's.
 */
import { spawn } from 'node:child_process';
import { cpSync, writeFileSync } from 'node:fs';
import { hostname } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { thisProcess } from '../../src/dialects/spark/lease-holder.js';
import { SparkDriver } from '../../src/dialects/spark/spark-driver.js';
import { LOCKS_TABLE } from '../../src/dialects/spark/spark-lock.js';
// bin/scd in a child process: these suites run only against a Spark server, and have not been checked in-process.
import { ROOT, SCD, scdProcess } from '../e2e/fixtures/cli.js';
import { freshSchema, sparkEngine } from '../engines.js';
import { tempDir } from '../helpers.js';

const url = process.env.SCD_TEST_SPARK_URL;
const CHANGES = path.join(ROOT, 'examples', 'customers', 'changes');
const FILES = ['001_initial.ndjson', '002_rahul_moves_priya_arrives.ndjson', '003_late_event_and_delete.ndjson'];

/** A line of a running command's stderr, with when it came (ms since the command started). */
interface Line {
  at: number;
  text: string;
}
interface Run {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  lines: Line[];
  ms: number;
  pid: number;
}

/** Run `bin/scd`, its stderr line by line as it comes; `onLine` may kill it (returns true: kill -9 now). */
function watchScd(args: string[], cwd: string, onLine: (line: Line) => boolean = () => false): Promise<Run> {
  return new Promise((resolve) => {
    const start = Date.now();
    const child = spawn(process.execPath, [SCD, ...args], { cwd, env: { ...process.env, SCD_DEBUG: '' } });
    const lines: Line[] = [];
    let stdout = '';
    let rest = '';
    child.stdout.on('data', (d) => (stdout += String(d)));
    child.stderr.on('data', (d) => {
      const parts = (rest + String(d)).split('\n');
      rest = parts.pop()!;
      for (const text of parts) {
        const line = { at: Date.now() - start, text };
        lines.push(line);
        if (onLine(line)) child.kill('SIGKILL');
      }
    });
    child.on('close', (code, signal) => resolve({ code, signal, stdout, lines, ms: Date.now() - start, pid: child.pid! }));
  });
}

/** The progress steps of a commit's lines, without their counts and names. */
const steps = (lines: Line[]) => lines.map((l) => /^ {2}(reading|mapping|recomputing|recording|waiting)/.exec(l.text)?.[1]).filter(Boolean);

describe.skipIf(!sparkEngine)("a Spark commit's progress and its target's lease, through bin/scd (SCD_TEST_SPARK_URL)", { timeout: 1_200_000 }, () => {
  const schema = freshSchema();
  const work = tempDir('scdkit-spark-lease-');
  let flow = '';
  let db: SparkDriver;
  const lease = () => db.query(`SELECT holder, host, pid, pid_space, command, CAST(expires_at AS STRING) AS expires FROM ${LOCKS_TABLE} WHERE target = 'dim_customer'`);

  beforeAll(async () => {
    cpSync(CHANGES, path.join(work.dir, 'changes'), { recursive: true });
    flow = path.join(work.dir, 'flow.yaml');
    writeFileSync(
      flow,
      `name: customers\ntarget: dim_customer\nkeys: [customer_id]\nsequenceBy: changed_at\napplyAsDeletes: "op = 'DELETE'"\nexceptColumns: [op]\nstoredAs: scd2\nschema: ${schema}\n`,
    );
    db = await SparkDriver.connect(url!, { schema, dropSchemaOnClose: true });
  });
  afterAll(async () => {
    await db?.close();
    work.cleanup();
  });

  const input = (i: number) => ['apply', flow, '--db', url!, '--input', path.join('changes', FILES[i]!)];

  // The lease's renewal while a holder works is timed by a clock: spark-lease.test.ts drives it
  // with a fake one (a live commit's length depends on the machine, so it is not asserted here).
  it('prints each step of the commit, in order, with what each works on', async () => {
    const run = await watchScd(input(0), work.dir);
    expect(run.code, run.lines.map((l) => l.text).join('\n')).toBe(0);
    expect(steps(run.lines)).toEqual(['reading', 'mapping', 'recomputing', 'recording']);
    expect(run.lines.map((l) => l.text)).toEqual([
      `  reading ${path.join(work.dir, 'changes', FILES[0]!)}`,
      '  mapping 2 records to events',
      '  recomputing the history of 2 keys',
      '  recording commit 1',
    ]);
    expect(run.stdout).toMatch(/^commit 1: read 2 rows = 2 applied/);
  });

  it('an apply killed with -9 holding the lease: the next apply on this machine takes the lease over at once, and the history is exact', async () => {
    const killed = await watchScd(input(1), work.dir, (l) => l.text.startsWith('  mapping'));
    expect(killed.signal).toBe('SIGKILL');
    const [row] = await lease();
    // The dead holder's lease, naming it (its --db URL left out of the command).
    expect(row).toMatchObject({ host: hostname(), pid: killed.pid, pid_space: thisProcess().pidSpace });
    expect(String(row!.command)).toMatch(/^scd apply .*flow\.yaml --db … --input changes\/002/);
    // --no-wait: any wait for the dead holder would fail it.
    const next = await watchScd([...input(1), '--no-wait'], work.dir);
    expect(next.code, next.lines.map((l) => l.text).join('\n')).toBe(0);
    expect(steps(next.lines)).not.toContain('waiting');
    expect(next.stdout).toMatch(/^commit 2: read 2 rows = 2 applied/);
    // The holder that took over ended its lease with its record: the row now names it.
    expect((await lease())[0]!.pid).not.toBe(killed.pid);
  });

  it("waits for another host's lease until it runs out, naming its holder and its expiry, and leaves the wait out of the commit's duration", async () => {
    await db.run(
      `UPDATE ${LOCKS_TABLE} SET holder = 'far-holder', host = 'far-host', pid = 4242, pid_space = 'pid:[1]', command = 'scd apply other.yaml', ends_at_commit = NULL, expires_at = current_timestamp() + INTERVAL 75 SECONDS WHERE target = 'dim_customer'`,
    );
    const expires = Date.parse(`${String((await lease())[0]!.expires).replace(' ', 'T')}Z`);
    const run = await watchScd(input(2), work.dir);
    const printed = run.lines.map((l) => l.text).join('\n');
    expect(run.code, printed).toBe(0);
    const waiting = run.lines.find((l) => l.text.startsWith('  waiting'))!;
    expect(waiting.text).toMatch(
      new RegExp(
        `^ {2}waiting for target "dim_customer" in sc://127\\.0\\.0\\.1:\\d+/${schema}: another scdkit commit is changing it \\(held by pid 4242 on host far-host, command: scd apply other\\.yaml; its lease holds until \\d{4}-\\d\\d-\\d\\d \\d\\d:\\d\\d:\\d\\d UTC unless renewed; a holder renews it every 15 s while it works\\)$`,
      ),
    );
    expect(waiting.text).toContain(new Date(expires).toISOString().slice(0, 19).replace('T', ' '));
    expect(steps(run.lines)).toEqual(['reading', 'waiting', 'mapping', 'recomputing', 'recording']);
    // It proceeded once the lease ran out, not before.
    const started = Date.now() - run.ms;
    const mapping = run.lines.find((l) => l.text.startsWith('  mapping'))!;
    expect(started + mapping.at).toBeGreaterThanOrEqual(expires - 1000);
    // The commit's duration leaves out the wait: at most the command's time after the wait ended.
    const reported = Number(/\((\d+) ms\)\n$/.exec(run.stdout)![1]);
    const waited = expires - (started + waiting.at);
    expect(waited).toBeGreaterThan(10_000);
    expect(reported).toBeLessThanOrEqual(run.ms - waited + 2000);
    expect(run.stdout).toMatch(/^commit 3: read 3 rows = 2 applied \+ 1 duplicate/);
  });

  it('the history after the killed commit and the wait is the one DuckDB builds from the same files', async () => {
    const duck = path.join(work.dir, 'duck.yaml');
    writeFileSync(
      duck,
      `name: customers\ntarget: dim_customer\nkeys: [customer_id]\nsequenceBy: changed_at\napplyAsDeletes: "op = 'DELETE'"\nexceptColumns: [op]\nstoredAs: scd2\ndatabase: duck.duckdb\n`,
    );
    for (const f of FILES) expect((await scdProcess(['apply', duck, '--input', path.join('changes', f)], work.dir)).code).toBe(0);
    const exported = async (args: string[]) => (await scdProcess(['export', ...args, '--format', 'ndjson'], work.dir)).stdout;
    expect(await exported([flow, '--db', url!])).toBe(await exported([duck]));
  });
});

describe.skipIf(!sparkEngine)('a lease table made by an older scdkit (SCD_TEST_SPARK_URL)', { timeout: 300_000 }, () => {
  it('gets the columns it lacks at the first lease, which then names its holder', async () => {
    const driver = await SparkDriver.connect(url!, { schema: freshSchema(), dropSchemaOnClose: true });
    try {
      await driver.run(`CREATE TABLE ${LOCKS_TABLE} (target STRING NOT NULL, holder STRING NOT NULL, expires_at TIMESTAMP NOT NULL) USING delta`);
      await driver.transaction(async () => {
        await driver.lockTarget('dim_old', undefined, undefined);
        const [row] = await driver.query(`SELECT host, pid, command, ends_at_commit FROM ${LOCKS_TABLE} WHERE target = 'dim_old'`);
        expect(row).toMatchObject({ host: hostname(), pid: process.pid, ends_at_commit: null });
      });
      await driver.discardScratch([], []);
      expect(await driver.query(`SELECT CAST(count(*) AS INT) AS n FROM ${LOCKS_TABLE}`)).toEqual([{ n: 0 }]);
    } finally {
      await driver.close();
    }
  });
});
