/**
 * Two processes on one database: while one process holds the DuckDB file, a second `scd apply`
 * exits non-zero with "in use by another scdkit process" and changes nothing; the first then
 * completes its own apply correctly. No timing guesses: the holder says "ready" once the
 * database is open and waits for "go" on stdin.
 */
import { type ChildProcessWithoutNullStreams, spawn } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DIST_INDEX, errorLines, FIXTURES, ndjson, parseNdjson, queryDb, scd, scdOk, tempDir } from './fixtures/cli.js';

let tmp: { dir: string; cleanup: () => void };
let holder: ChildProcessWithoutNullStreams | undefined;

beforeAll(() => {
  tmp = tempDir();
});
afterAll(() => {
  if (holder && holder.exitCode === null && holder.pid) process.kill(holder.pid);
  tmp.cleanup();
});

function waitForLine(child: ChildProcessWithoutNullStreams, pattern: RegExp): Promise<string> {
  return new Promise((resolve, reject) => {
    let out = '';
    let err = '';
    const onData = (d: Buffer) => {
      out += String(d);
      const line = out.split('\n').find((l) => pattern.test(l));
      if (line !== undefined) {
        child.stdout.off('data', onData);
        resolve(line);
      }
    };
    child.stdout.on('data', onData);
    child.stderr.on('data', (d) => (err += String(d)));
    child.once('exit', (code) => reject(new Error(`holder exited (${code}) before "${pattern}": ${err}`)));
  });
}

describe('one database, two processes', () => {
  it('the second apply is refused while the first holds the database; the first completes', async () => {
    const dir = path.join(tmp.dir, 'locked');
    mkdirSync(dir);
    writeFileSync(path.join(dir, 'flow.yaml'), 'target: t\nkeys: [id]\nsequenceBy: ts\ndatabase: shared.duckdb\n');
    const first = Array.from({ length: 1000 }, (_, i) => ({ id: i, ts: 1, v: `first ${i}` }));
    writeFileSync(path.join(dir, 'first.ndjson'), ndjson(first));
    writeFileSync(path.join(dir, 'second.ndjson'), ndjson([{ id: 1, ts: 2, v: 'second' }]));

    holder = spawn(process.execPath, [path.join(FIXTURES, 'hold-db.mjs'), DIST_INDEX, path.join(dir, 'flow.yaml'), path.join(dir, 'first.ndjson')], {
      cwd: dir,
    });
    await waitForLine(holder, /^ready$/);

    const second = await scd(['apply', 'flow.yaml', '--input', 'second.ndjson', '--json'], dir);
    expect(second.code).not.toBe(0);
    expect(second.stdout).toBe('');
    const lines = errorLines(second.stderr);
    expect(lines).toHaveLength(1);
    expect(lines[0]).toContain('in use by another scdkit process');
    expect(lines[0]).toContain('shared.duckdb');
    expect(lines[0]).toMatch(/fix: /);

    // export is refused the same way (and does not hang).
    const exp = await scd(['export', 'flow.yaml', '--format', 'ndjson'], dir);
    expect(exp.code).not.toBe(0);
    expect(exp.stderr).toContain('in use by another scdkit process');

    const result = waitForLine(holder, /^\{/);
    const exited = new Promise<number | null>((resolve) => holder!.once('exit', (c) => resolve(c)));
    holder.stdin.write('go\n');
    const res = JSON.parse(await result);
    expect(await exited).toBe(0);
    expect(res).toMatchObject({ version: 1, rowsRead: 1000, eventsApplied: 1000, quarantined: 0 });

    // Only the first process's commit is there; the target is exactly its rows.
    const commits = await queryDb(path.join(dir, 'shared.duckdb'), 'SELECT version FROM _scd_commits ORDER BY version');
    expect(commits).toEqual([{ version: 1 }]);
    const out = await scdOk(['export', 'flow.yaml', '--format', 'ndjson'], dir);
    const rows = parseNdjson(out.stdout);
    expect(rows).toHaveLength(1000);
    expect(rows[1]).toEqual({ id: 1, ts: 1, v: 'first 1', __START_AT: 1, __END_AT: null });

    // Once the database is free, the second apply goes through.
    const again = await scdOk(['apply', 'flow.yaml', '--input', 'second.ndjson', '--json'], dir);
    expect(JSON.parse(again.stdout.trim())).toMatchObject({ version: 2, eventsApplied: 1, versionsClosed: 1 });
  });
});
