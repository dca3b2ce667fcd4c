/**
 * `scd serve` as a command: it prints its URL, answers, and stops on SIGTERM with exit code 0;
 * a database that does not exist, or a wrong port, is one line and no file is created.
 */
import { spawn } from 'node:child_process';
import { cpSync, existsSync } from 'node:fs';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { ROOT, SCD, scd, scdOk, tempDir } from '../e2e/fixtures/cli.js';

describe('scd serve (command)', () => {
  const tmp = tempDir('scdkit-serve-cli-');
  const project = path.join(tmp.dir, 'customers');
  // The example as committed: not a database `npm start` may have left beside it.
    cpSync(path.join(ROOT, 'examples', 'customers'), project, { recursive: true, filter: (src) => !/\.(duckdb|wal)$/.test(src) });
  afterAll(() => tmp.cleanup());

  it('refuses a database that does not exist, in one line, without creating it', async () => {
    const r = await scd(['serve', 'flow.yaml', '--port', '0'], project);
    expect(r.code).toBe(1);
    expect(r.stderr.trim().split('\n')).toHaveLength(1);
    expect(r.stderr).toContain('scd.duckdb does not exist');
    expect(r.stderr).toContain('fix: run `scd apply` first');
    expect(existsSync(path.join(project, 'scd.duckdb'))).toBe(false);
    const port = await scd(['serve', 'flow.yaml', '--port', 'http'], project);
    expect(port.code).toBe(1);
    expect(port.stderr).toContain('--port http is not a port');
  });

  it('prints its URL on loopback, serves, and stops on SIGTERM', async () => {
    await scdOk(['apply', 'flow.yaml', '--each'], project);
    const child = spawn(process.execPath, [SCD, 'serve', 'flow.yaml', '--port', '0'], { cwd: project });
    let out = '';
    child.stdout.on('data', (d) => (out += String(d)));
    child.stderr.on('data', (d) => (out += String(d)));
    const exited = new Promise<number | null>((resolve) => child.once('exit', (c) => resolve(c)));
    for (let i = 0; i < 200 && !/http:\/\//.test(out); i++) await new Promise((r) => setTimeout(r, 50));
    const url = /serving dim_customer at (http:\/\/127\.0\.0\.1:\d+\/)/.exec(out)?.[1];
    expect(url, out).toBeDefined();
    const page = await fetch(new URL('/key?customer_id=501', url));
    expect(page.status).toBe(200);
    expect(await page.text()).toContain('Mysuru');
    child.kill('SIGTERM');
    expect(await exited).toBe(0);
    expect(out).toContain('scd: stopped');
  });
});
