/**
 * The CLI as a new user meets it, through `bin/scd` on DuckDB files: `apply --watch`
 * holds the database only while it applies, a reader meeting a writer waits, `log` prints the
 * commit schema of `apply --json`, one CSV format, export filters, the range of `changes`,
 * `apply --json` when nothing is new, output names, `status` and `init`.
 */
import { type ChildProcessWithoutNullStreams, spawn } from 'node:child_process';
import { copyFileSync, existsSync, mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { copyFixture, DIST_INDEX, errorLines, FIXTURES, ndjson, parseNdjson, SCD, scd, scdOk, tempDir } from './fixtures/cli.js';

const CHANGES = ['001_initial.ndjson', '002_upgrade_delete_new.ndjson', '003_late_and_duplicate.ndjson'];
let tmp: { dir: string; cleanup: () => void };
const children: ChildProcessWithoutNullStreams[] = [];

beforeAll(() => {
  tmp = tempDir();
});
afterAll(() => {
  for (const c of children) if (c.exitCode === null && c.pid) process.kill(c.pid);
  tmp.cleanup();
});

/** A fresh copy of the accounts fixture (flow.yaml, changes/); the database is accounts.duckdb beside it. */
function project(name: string): string {
  return copyFixture('accounts', path.join(tmp.dir, name));
}

/** Resolves with the first line of the stream that matches (the lines seen so far are kept in `seen`). */
function lineOf(stream: NodeJS.ReadableStream, pattern: RegExp, seen: string[] = []): Promise<string> {
  return new Promise((resolve, reject) => {
    let buffer = '';
    const timer = setTimeout(() => reject(new Error(`no line matching ${pattern} in 30 s; seen: ${seen.join(' | ')}`)), 30_000);
    const onData = (d: Buffer) => {
      buffer += String(d);
      const lines = buffer.split('\n');
      buffer = lines.pop()!;
      for (const l of lines) {
        seen.push(l);
        if (pattern.test(l)) {
          clearTimeout(timer);
          stream.off('data', onData);
          resolve(l);
          return;
        }
      }
    };
    stream.on('data', onData);
  });
}

const exitOf = (child: ChildProcessWithoutNullStreams) =>
  new Promise<number | null>((resolve) => (child.exitCode !== null ? resolve(child.exitCode) : child.once('exit', (c) => resolve(c))));

describe('scd as a new user meets it', () => {
  it('`apply --watch` holds the database only while it applies: export, log and status run beside it', async () => {
    const dir = project('watch');
    const aside = path.join(dir, 'aside');
    mkdirSync(aside);
    for (const f of CHANGES.slice(1)) renameSync(path.join(dir, 'changes', f), path.join(aside, f));
    const watcher = spawn(process.execPath, [SCD, 'apply', 'flow.yaml', '--watch', '--interval', '0.2', '--json'], { cwd: dir });
    children.push(watcher);
    let stderr = '';
    watcher.stderr.on('data', (d) => (stderr += String(d)));
    const seen: string[] = [];
    expect(JSON.parse(await lineOf(watcher.stdout, /"version":1/, seen))).toMatchObject({ version: 1, rowsRead: 3 });

    // Idle between rounds: other processes open the file (a watcher that held it would have them
    // wait 5 s and then fail with DB_IN_USE). No timing is asserted: on a loaded machine a process
    // alone may take seconds to start.
    for (const args of [
      ['export', 'flow.yaml', '--format', 'ndjson'],
      ['log', 'flow.yaml', '--json'],
      ['status', 'flow.yaml', '--json'],
    ]) {
      const r = await scd(args, dir);
      expect(r.stderr, args.join(' ')).not.toMatch(/in use/);
      expect(r.code, args.join(' ')).toBe(0);
    }
    expect(parseNdjson((await scdOk(['export', 'flow.yaml', '--format', 'ndjson'], dir)).stdout)).toHaveLength(3);

    // A file that lands is still applied.
    copyFileSync(path.join(aside, CHANGES[1]!), path.join(dir, 'changes', CHANGES[1]!));
    expect(JSON.parse(await lineOf(watcher.stdout, /"version":2/, seen))).toMatchObject({ version: 2, rowsRead: 3 });
    expect(JSON.parse((await scdOk(['status', 'flow.yaml', '--json'], dir)).stdout)).toMatchObject({ commits: 2, pendingFiles: 0 });
    watcher.kill('SIGINT');
    expect(await exitOf(watcher)).toBe(0);
    expect(stderr).toMatch(/scd: stopped/);
  });

  it('a watcher that meets the file held by another process says so once, and applies when it is free', async () => {
    const dir = project('watch-busy');
    const aside = path.join(dir, 'aside');
    mkdirSync(aside);
    for (const f of CHANGES.slice(1)) renameSync(path.join(dir, 'changes', f), path.join(aside, f));
    writeFileSync(path.join(aside, 'held.ndjson'), ndjson([{ account_id: 7, owner: 'Ho', tier: 'tin', op: 'U', seq: 1 }]));
    const watcher = spawn(process.execPath, [SCD, 'apply', 'flow.yaml', '--watch', '--interval', '0.2', '--json'], { cwd: dir });
    children.push(watcher);
    let stderr = '';
    watcher.stderr.on('data', (d) => (stderr += String(d)));
    const seen: string[] = [];
    await lineOf(watcher.stdout, /"version":1/, seen);
    // Idle, the watcher holds nothing: another process opens the file at once (no wait of its own).
    const holder = spawn(process.execPath, [path.join(FIXTURES, 'hold-db.mjs'), DIST_INDEX, path.join(dir, 'flow.yaml'), path.join(aside, 'held.ndjson')], { cwd: dir });
    children.push(holder);
    await lineOf(holder.stdout, /^ready$/);
    copyFileSync(path.join(aside, CHANGES[1]!), path.join(dir, 'changes', CHANGES[1]!));
    await lineOf(watcher.stderr, /in use by another scdkit process/);
    await new Promise((r) => setTimeout(r, 1000)); // more rounds meet it: said once
    holder.stdin.write('go\n');
    expect(await exitOf(holder)).toBe(0);
    expect(JSON.parse(await lineOf(watcher.stdout, /"version":3/, seen))).toMatchObject({ version: 3, rowsRead: 3 });
    watcher.kill('SIGINT');
    expect(await exitOf(watcher)).toBe(0);
    expect(stderr.match(/in use by another scdkit process/g)).toHaveLength(1);
    expect(stderr).toMatch(/waited 5 s.*trying again every 0\.2s/);
    expect(stderr).not.toMatch(/bug in scdkit/);
  });

  it('a reader that meets a writer waits for it; after 5 s it says what holds the file', async () => {
    const dir = path.join(tmp.dir, 'held');
    mkdirSync(dir);
    writeFileSync(path.join(dir, 'flow.yaml'), 'target: t\nkeys: [id]\nsequenceBy: ts\ndatabase: held.duckdb\n');
    writeFileSync(path.join(dir, 'first.ndjson'), ndjson(Array.from({ length: 100 }, (_, i) => ({ id: i, ts: 1, v: `v${i}` }))));
    const holder = spawn(process.execPath, [path.join(FIXTURES, 'hold-db.mjs'), DIST_INDEX, path.join(dir, 'flow.yaml'), path.join(dir, 'first.ndjson')], { cwd: dir });
    children.push(holder);
    await lineOf(holder.stdout, /^ready$/);

    // Held for longer than the wait: one line naming the holder (pid and command) and the wait.
    const started = Date.now();
    const refused = await scd(['export', 'flow.yaml', '--format', 'ndjson'], dir);
    expect(Date.now() - started).toBeGreaterThanOrEqual(4500);
    expect(refused.code).toBe(1);
    const lines = errorLines(refused.stderr);
    expect(lines).toHaveLength(1);
    expect(lines[0]).toContain(`in use by another scdkit process (pid ${holder.pid}: `);
    expect(lines[0]).toContain('hold-db.mjs');
    expect(lines[0]).toMatch(/waited 5 s \(fix: /);

    // Released during the wait: the reader goes on and reads what the writer committed.
    const reader = scd(['export', 'flow.yaml', '--format', 'ndjson'], dir);
    await new Promise((r) => setTimeout(r, 700));
    holder.stdin.write('go\n');
    const r = await reader;
    expect(r.stderr).toBe('');
    expect(parseNdjson(r.stdout)).toHaveLength(100);
    expect(await exitOf(holder)).toBe(0);
  });

  it('`log --json` prints each commit exactly as `apply --json` did (its steps aside); on a terminal a view that fits 100 columns', async () => {
    const dir = project('log');
    // A long input name: the view cuts it rather than grow past 100 columns.
    const long = `004_${'a_very_long_file_name_'.repeat(4)}.ndjson`;
    writeFileSync(path.join(dir, 'changes', long), ndjson([{ account_id: 9, owner: 'Zed', tier: 'tin', op: 'U', seq: 40 }]));
    const applied = (await scdOk(['apply', 'flow.yaml', '--each', '--json'], dir)).stdout.trim().split('\n');
    expect(applied).toHaveLength(4);
    const logged = (await scdOk(['log', 'flow.yaml', '--json'], dir)).stdout.trim().split('\n');
    // An apply's steps (where its time went) are its own, not the log's: the rest is the same, field for field.
    const withoutSteps = applied.map((line) => {
      const { steps, ...rest } = JSON.parse(line);
      expect(steps.length).toBeGreaterThan(0);
      return rest;
    });
    expect(logged.map((line) => JSON.parse(line))).toEqual(withoutSteps.reverse());
    const first = JSON.parse(logged[3]!);
    expect(Array.isArray(first.inputs)).toBe(true);
    expect(first.expectations).toEqual({});
    expect(Object.keys(first)).toContain('rowsRead');
    expect(Object.keys(first).some((k) => k.includes('_'))).toBe(false);
    // rebuild --json is the same schema.
    const rebuilt = JSON.parse((await scdOk(['rebuild', 'flow.yaml', '--json'], dir)).stdout);
    expect(JSON.parse((await scdOk(['log', 'flow.yaml', '--json'], dir)).stdout.split('\n')[0]!)).toEqual(rebuilt);

    const view = (await scdOk(['log', 'flow.yaml', '--format', 'table'], dir)).stdout.trimEnd().split('\n');
    expect(view).toHaveLength(2 + 5);
    expect(view[0]).toMatch(/^commit +at \(UTC\) +op +read +applied +dup +quar +keys +add +chg +rem +cls +inputs$/);
    for (const line of view) expect(line.length).toBeLessThanOrEqual(100);
    expect(view[3]).toMatch(/^4 .* apply +1 +1 +0 +0 +1 +1 +0 +0 +0 +004_a_very_l.*…$/);
    expect(view[2]).toMatch(/^5 .* rebuild /);
    // The time to the minute, in UTC (as log-view.ts says).
    expect(view[2]).toMatch(/^5 +\d{4}-\d{2}-\d{2} \d{2}:\d{2} +rebuild /);
    // CSV: the same fields.
    const csv = (await scdOk(['log', 'flow.yaml', '--format', 'csv'], dir)).stdout.split('\n');
    expect(csv[0]).toBe(
      'version,operation,committedAt,inputs,rowsRead,eventsApplied,duplicates,ties,quarantined,dropped,skipped,expectations,keysChanged,versionsAdded,versionsChanged,versionsRemoved,versionsClosed,durationMs',
    );
  });

  it('export CSV is one format, to a file or to stdout (ISO-8601 times)', async () => {
    const dir = path.join(tmp.dir, 'csv');
    mkdirSync(dir);
    writeFileSync(path.join(dir, 'flow.yaml'), 'target: t\nkeys: [id]\nsequenceBy: at\ndatabase: csv.duckdb\n');
    writeFileSync(
      path.join(dir, 'in.ndjson'),
      ndjson([
        { id: 1, at: '2025-01-09T08:00:00Z', day: '2025-01-09', note: 'a, "quoted" note' },
        { id: 1, at: '2025-01-10T09:30:00.250Z', day: '2025-01-10', note: null },
      ]),
    );
    await scdOk(['apply', 'flow.yaml', '--input', 'in.ndjson'], dir);
    const stdout = (await scdOk(['export', 'flow.yaml', '--format', 'csv'], dir)).stdout;
    await scdOk(['export', 'flow.yaml', '--out', 'x.csv'], dir);
    expect(readFileSync(path.join(dir, 'x.csv'), 'utf8')).toBe(stdout);
    expect(stdout.split('\n')[1]).toBe('1,2025-01-09T08:00:00Z,2025-01-09,"a, ""quoted"" note",2025-01-09T08:00:00Z,2025-01-10T09:30:00.250000Z');
    expect(stdout).not.toMatch(/\+00/);
  });

  it('export --current and --where; a --where that is not one boolean over the target is refused in one line', async () => {
    const dir = project('filters');
    await scdOk(['apply', 'flow.yaml', '--each'], dir);
    const rows = async (...args: string[]) =>
      parseNdjson((await scdOk(['export', 'flow.yaml', '--format', 'ndjson', ...args], dir)).stdout).map((r) => `${r.account_id}:${r.tier}`);
    expect(await rows('--current')).toEqual(['1:platinum', '3:bronze', '4:gold']);
    expect(await rows('--where', "tier = 'gold'")).toEqual(['1:gold', '4:gold']);
    expect(await rows('--where', "tier = 'gold'", '--current')).toEqual(['4:gold']);
    expect(await rows('--version', '1', '--current')).toEqual(['1:gold', '2:silver', '3:bronze']);
    for (const [where, why] of [
      ['(SELECT 1) = 1', /reads more than the target's row|not a single boolean/],
      ['true; DROP TABLE dim_account', /it contains ";"/],
      ["owner IN (SELECT owner FROM read_csv('/etc/passwd'))", /reads more|not a single/],
      ['random() < 0.5', /reads more than the target's row/],
      ['tier', /is not a boolean expression/],
      ['plan = 1', /cannot be evaluated on the target/],
    ] as const) {
      const r = await scd(['export', 'flow.yaml', '--where', where], dir);
      expect(r.code, where).toBe(1);
      expect(r.stdout, where).toBe('');
      const lines = errorLines(r.stderr);
      expect(lines, where).toHaveLength(1);
      expect(lines[0], where).toMatch(/^scd: --where /);
      expect(lines[0], where).toMatch(why);
    }
    expect(await rows()).toHaveLength(6); // untouched
  });

  it('changes: from the first commit by default, by timestamp; an inverted range or one beyond the last commit is one line', async () => {
    const dir = project('changes');
    const applied = (await scdOk(['apply', 'flow.yaml', '--each', '--json'], dir)).stdout
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l));
    const all = (await scdOk(['changes', 'flow.yaml', '--format', 'ndjson'], dir)).stdout;
    expect(all).toBe((await scdOk(['changes', 'flow.yaml', '--from-version', '1', '--format', 'ndjson'], dir)).stdout);
    expect(new Set(parseNdjson(all).map((r) => r._commit_version))).toEqual(new Set([1, 2, 3]));
    const at = applied.map((r) => r.committedAt as string);
    const second = parseNdjson((await scdOk(['changes', 'flow.yaml', '--from-timestamp', at[1]!, '--to-timestamp', at[1]!, '--format', 'ndjson'], dir)).stdout);
    expect(second.length).toBeGreaterThan(0);
    expect(new Set(second.map((r) => r._commit_version))).toEqual(new Set([2]));
    for (const [args, why] of [
      [['--from-version', '3', '--to-version', '2'], /^scd: the range is inverted: from commit 3 to commit 2 \(commits are 1\.\.3, committed .*\(fix: /],
      [['--from-version', '4'], /^scd: --from-version 4 is beyond the last commit \(commits are 1\.\.3/],
      [['--to-version', '9'], /^scd: --to-version 9 is beyond the last commit/],
      [['--from-timestamp', '2999-01-01'], /^scd: no commit was made at or after --from-timestamp 2999-01-01/],
    ] as const) {
      const r = await scd(['changes', 'flow.yaml', ...args], dir);
      expect(r.code, args.join(' ')).toBe(1);
      expect(errorLines(r.stderr), args.join(' ')).toHaveLength(1);
      expect(errorLines(r.stderr)[0], args.join(' ')).toMatch(why);
    }
  });

  it('`apply --json` prints a line even when nothing was new', async () => {
    const dir = project('nothing-new');
    await scdOk(['apply', 'flow.yaml', '--json'], dir);
    const again = await scdOk(['apply', 'flow.yaml', '--json'], dir);
    const lines = again.stdout.trim().split('\n');
    expect(lines).toHaveLength(1);
    expect(JSON.parse(lines[0]!)).toEqual({ version: null, nothingNew: true, alreadyApplied: 3, warnings: [] });
  });

  it('output names: parquet to a pipe says to use --out; an --out name that says no format, or another one, is refused', async () => {
    const dir = project('out-names');
    await scdOk(['apply', 'flow.yaml'], dir);
    const pipe = await scd(['export', 'flow.yaml', '--format', 'parquet'], dir);
    expect(pipe.code).toBe(1);
    expect(errorLines(pipe.stderr)).toEqual([expect.stringMatching(/parquet is written to a file, not to a pipe.*fix: add --out FILE\.parquet/)]);
    for (const [args, why] of [
      [['--out', 'x.cvs'], /^scd: --out x\.cvs: "\.cvs" is not a file type scd writes \(fix: /],
      [['--out', 'rows'], /^scd: --out rows: the name has no extension/],
      [['--format', 'csv', '--out', 'x.parquet'], /^scd: --format csv but --out x\.parquet names parquet/],
    ] as const) {
      const r = await scd(['export', 'flow.yaml', ...args], dir);
      expect(r.code, args.join(' ')).toBe(1);
      expect(errorLines(r.stderr), args.join(' ')).toEqual([expect.stringMatching(why)]);
    }
    expect(existsSync(path.join(dir, 'x.cvs'))).toBe(false);
    expect(existsSync(path.join(dir, 'rows'))).toBe(false);
    await scdOk(['export', 'flow.yaml', '--out', 'rows.jsonl'], dir);
    expect(parseNdjson(readFileSync(path.join(dir, 'rows.jsonl'), 'utf8'))).toHaveLength(6);
  });

  it('`scd status`: one screen, before and after the first apply', async () => {
    const dir = project('status');
    const before = (await scdOk(['status', 'flow.yaml'], dir)).stdout;
    expect(before).toMatch(/^target +dim_account \(scd2\)$/m);
    expect(before).toMatch(/^engine +duckdb · .*accounts\.duckdb$/m);
    expect(before).toMatch(/^state +nothing applied yet/m);
    expect(before).toMatch(/^pending files +3 \(run `scd apply`\)$/m);
    expect(existsSync(path.join(dir, 'accounts.duckdb'))).toBe(false); // looking creates nothing
    writeFileSync(path.join(dir, 'changes', '004_bad.ndjson'), '{"account_id": null, "seq": 1, "op": "U"}\n');
    await scdOk(['apply', 'flow.yaml', '--each'], dir);
    const after = (await scdOk(['status', 'flow.yaml'], dir)).stdout;
    const lines = after.trimEnd().split('\n');
    expect(lines.length).toBeLessThanOrEqual(24);
    for (const l of lines) expect(l.length).toBeLessThanOrEqual(100);
    expect(after).toMatch(/^rows +6$/m);
    expect(after).toMatch(/^keys +4 \(account_id\)$/m);
    expect(after).toMatch(/^current rows +3$/m);
    expect(after).toMatch(/^last commit +4 of 4: apply at \S+Z, read 1 row, 0 keys changed$/m);
    expect(after).toMatch(/^pending files +0$/m);
    expect(after).toMatch(/^quarantined +1 \(see `scd quarantine`\)$/m);
    expect(after).toMatch(/^event log +\d+ events$/m);
    const json = JSON.parse((await scdOk(['status', 'flow.yaml', '--json'], dir)).stdout);
    expect(json).toMatchObject({ target: 'dim_account', engine: 'duckdb', rows: 6, currentRows: 3, commits: 4, pendingFiles: 0, quarantined: 1 });
    expect(json.lastCommit).toMatchObject({ version: 4, quarantined: 1 });
  });

  it('`scd init DIR --from FILE` writes a commented flow that runs, its guesses marked', async () => {
    const dir = path.join(tmp.dir, 'init');
    mkdirSync(path.join(dir, 'landing'), { recursive: true });
    writeFileSync(
      path.join(dir, 'landing', 'customers.csv'),
      'customer_id,name,city,op,updated_at\n1,Ada,Pune,I,2025-01-09 08:00:00\n2,Bo,Delhi,I,2025-01-09 08:00:00\n1,Ada,Mumbai,U,2025-02-01 10:00:00\n2,Bo,Delhi,D,2025-03-01 10:00:00\n',
    );
    const r = await scdOk(['init', 'crm', '--from', 'landing/customers.csv'], dir);
    expect(r.stdout).toMatch(/^wrote crm\/flow\.yaml: 5 columns, key customer_id and sequence updated_at guessed/);
    const text = readFileSync(path.join(dir, 'crm', 'flow.yaml'), 'utf8');
    expect(text).toMatch(/^keys: \[customer_id\] +# GUESS: /m);
    expect(text).toMatch(/^sequenceBy: updated_at +# GUESS: /m);
    expect(text).toMatch(/^applyAsDeletes: "op = 'D'" +# GUESS: /m);
    // The source is the sample itself, not its folder (where exports may land too).
    expect(text).toMatch(/^ {2}path: \.\.\/landing\/customers\.csv$/m);
    for (const c of ['customer_id', 'name', 'city', 'op', 'updated_at']) expect(text).toMatch(new RegExp(`^#   ${c} +\\S`, 'm'));
    // It runs as written.
    await scdOk(['apply', 'crm/flow.yaml'], dir);
    const rows = parseNdjson((await scdOk(['export', 'crm/flow.yaml', '--format', 'ndjson'], dir)).stdout);
    expect(rows.map((x) => `${x.customer_id}:${x.city}:${x.__END_AT}`)).toEqual(['1:Pune:2025-02-01T10:00:00', '1:Mumbai:null', '2:Delhi:2025-03-01T10:00:00']);
    // An export written beside the sample is never read back as changes.
    await scdOk(['export', 'crm/flow.yaml', '--out', 'landing/customers_export.csv'], dir);
    await scdOk(['export', 'crm/flow.yaml', '--out', 'landing/customers_export.ndjson'], dir);
    expect((await scdOk(['apply', 'crm/flow.yaml'], dir)).stdout).toBe('nothing new to apply (1 file already applied)\n');
    expect(parseNdjson((await scdOk(['export', 'crm/flow.yaml', '--format', 'ndjson'], dir)).stdout)).toEqual(rows);
    // Never over an existing flow file.
    const again = await scd(['init', 'crm', '--from', 'landing/customers.csv'], dir);
    expect(again.code).toBe(1);
    expect(errorLines(again.stderr)).toEqual([expect.stringMatching(/crm\/flow\.yaml exists already \(fix: .*--force/)]);
    const missing = await scd(['init', 'x', '--from', 'nope.csv'], dir);
    expect(errorLines(missing.stderr)).toEqual([expect.stringMatching(/--from nope\.csv is not a file/)]);
  });

  it('`scd init` on a sample with no time or sequence column guesses processing time, not a text column, and it runs', async () => {
    const dir = path.join(tmp.dir, 'init-untimed');
    mkdirSync(path.join(dir, 'landing'), { recursive: true });
    writeFileSync(path.join(dir, 'landing', 'cities.csv'), 'customer_id,name,city\n1,Ada,Pune\n2,Bo,Delhi\n');
    const r = await scdOk(['init', 'crm', '--from', 'landing/cities.csv'], dir);
    expect(r.stdout).toMatch(/^wrote crm\/flow\.yaml: 3 columns, key customer_id and sequence \{ processingTime: true \} guessed/);
    const text = readFileSync(path.join(dir, 'crm', 'flow.yaml'), 'utf8');
    expect(text).toMatch(/^sequenceBy: \{ processingTime: true \} +# GUESS: no column looks like a time or a sequence, so each commit's time orders the changes/m);
    expect(text).not.toMatch(/^sequenceBy: (name|city)/m);
    await scdOk(['apply', 'crm/flow.yaml'], dir);
    const rows = parseNdjson((await scdOk(['export', 'crm/flow.yaml', '--format', 'ndjson'], dir)).stdout);
    expect(rows.map((x) => `${x.customer_id}:${x.city}:${x.__END_AT}`)).toEqual(['1:Pune:null', '2:Delhi:null']);
  });
});
