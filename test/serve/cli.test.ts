/**
 * `scd serve` as a command: it prints its URL, answers, and stops on SIGTERM with exit code 0;
 * a database that does not exist, or a wrong port, is one line and no file is created.
 */
import { spawn } from 'node:child_process';
import { chmodSync, cpSync, existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
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

  it.skipIf(process.platform !== 'linux')('--open hands the URL to the desktop opener (xdg-open), and says so in one line when there is none', async () => {
    if (!existsSync(path.join(project, 'scd.duckdb'))) await scdOk(['apply', 'flow.yaml', '--each'], project);
    // A stand-in opener on PATH that writes down the URL it was given.
    const bin = path.join(tmp.dir, 'bin');
    mkdirSync(bin, { recursive: true });
    const opened = path.join(tmp.dir, 'opened.txt');
    writeFileSync(path.join(bin, 'xdg-open'), `#!/bin/sh\nprintf '%s' "$1" > '${opened}'\n`);
    chmodSync(path.join(bin, 'xdg-open'), 0o755);
    const serve = async (PATH: string) => {
      const child = spawn(process.execPath, [SCD, 'serve', 'flow.yaml', '--port', '0', '--open'], { cwd: project, env: { ...process.env, PATH } });
      let out = '';
      child.stdout.on('data', (d) => (out += String(d)));
      child.stderr.on('data', (d) => (out += String(d)));
      const exited = new Promise<number | null>((resolve) => child.once('exit', (c) => resolve(c)));
      for (let i = 0; i < 200 && !/http:\/\//.test(out); i++) await new Promise((r) => setTimeout(r, 50));
      const url = /serving dim_customer at (http:\/\/127\.0\.0\.1:\d+\/)/.exec(out)?.[1];
      for (let i = 0; i < 100 && !existsSync(opened) && !/could not open/.test(out); i++) await new Promise((r) => setTimeout(r, 50));
      child.kill('SIGTERM');
      expect(await exited, out).toBe(0);
      return { url, out };
    };
    const withOpener = await serve(`${bin}${path.delimiter}${process.env.PATH ?? ''}`);
    expect(withOpener.url, withOpener.out).toBeDefined();
    expect(readFileSync(opened, 'utf8')).toBe(withOpener.url);
    // No opener at all: the server still serves, and one line says to open the URL by hand.
    const without = await serve(path.join(tmp.dir, 'empty'));
    expect(without.url, without.out).toBeDefined();
    expect(without.out).toMatch(/could not open a browser .*; open http:\/\/127\.0\.0\.1:\d+\/ yourself/);
  });
});
