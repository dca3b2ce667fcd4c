/**
 * `scd serve` as a command: it prints its URL, answers, and stops on SIGTERM with exit code 0;
 * a database that does not exist, or a wrong port, is one line and no file is created.
 */
import { spawn } from 'node:child_process';
import { chmodSync, cpSync, existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { type AddressInfo, createServer } from 'node:net';
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

  /** Polls until `done` holds, for up to 10 s. */
  const until = async (done: () => boolean) => {
    for (let i = 0; i < 200 && !done(); i++) await new Promise((r) => setTimeout(r, 50));
  };

  /** `scd serve flow.yaml --port 0 …` as a process: its URL once printed, what it wrote so far, and a stop (SIGTERM) giving its exit code. */
  const serveProcess = async (args: string[] = [], env: NodeJS.ProcessEnv = process.env) => {
    const child = spawn(process.execPath, [SCD, 'serve', 'flow.yaml', '--port', '0', ...args], { cwd: project, env });
    let out = '';
    child.stdout.on('data', (d) => (out += String(d)));
    child.stderr.on('data', (d) => (out += String(d)));
    const exited = new Promise<number | null>((resolve) => child.once('exit', (c) => resolve(c)));
    await until(() => /http:\/\//.test(out));
    return {
      url: /serving dim_customer at (http:\/\/127\.0\.0\.1:\d+\/)/.exec(out)?.[1],
      out: () => out,
      stop: async () => {
        child.kill('SIGTERM');
        return exited;
      },
    };
  };

  it('prints its URL on loopback, serves, and stops on SIGTERM', async () => {
    await scdOk(['apply', 'flow.yaml', '--each'], project);
    const served = await serveProcess();
    expect(served.url, served.out()).toBeDefined();
    const page = await fetch(new URL('/key?customer_id=501', served.url));
    expect(page.status).toBe(200);
    expect(await page.text()).toContain('Mysuru');
    expect(await served.stop()).toBe(0);
    expect(served.out()).toContain('scd: stopped');
  });

  it('a port in use or a host that is not this machine is one line with its fix, no stack trace', async () => {
    if (!existsSync(path.join(project, 'scd.duckdb'))) await scdOk(['apply', 'flow.yaml', '--each'], project);
    // A port another program listens on.
    const taken = createServer();
    await new Promise<void>((resolve) => taken.listen(0, '127.0.0.1', resolve));
    const port = (taken.address() as AddressInfo).port;
    try {
      const r = await scd(['serve', 'flow.yaml', '--port', String(port)], project);
      expect(r.code).toBe(1);
      expect(r.stderr.trim().split('\n'), r.stderr).toHaveLength(1);
      expect(r.stderr.trim()).toBe(`scd: port ${port} on 127.0.0.1 is in use by another program (fix: give another --port, or --port 0 for any free one)`);
    } finally {
      await new Promise((resolve) => taken.close(resolve));
    }
    for (const [host, said] of [
      ['256.1.1.1', 'is not an IP address, nor a name that resolves to one'],
      ['192.0.2.1', 'is not an address of this machine'],
    ]) {
      const r = await scd(['serve', 'flow.yaml', '--port', '0', '--host', host!], project);
      expect(r.code, host).toBe(1);
      expect(r.stderr.trim().split('\n'), r.stderr).toHaveLength(1);
      expect(r.stderr).toContain(`scd: --host ${host} ${said} (fix: give`);
      expect(r.stderr).not.toMatch(/unexpected error|a bug in scdkit|\n\s+at /);
    }
  });

  it.skipIf(process.platform !== 'linux')('--open hands the URL to the desktop opener (xdg-open), and says so in one line when there is none', async () => {
    if (!existsSync(path.join(project, 'scd.duckdb'))) await scdOk(['apply', 'flow.yaml', '--each'], project);
    // A stand-in opener on PATH that writes down the URL it was given.
    const bin = path.join(tmp.dir, 'bin');
    mkdirSync(bin, { recursive: true });
    const opened = path.join(tmp.dir, 'opened.txt');
    writeFileSync(path.join(bin, 'xdg-open'), `#!/bin/sh\nprintf '%s' "$1" > '${opened}'\n`);
    chmodSync(path.join(bin, 'xdg-open'), 0o755);
    const withOpener = await serveProcess(['--open'], { ...process.env, PATH: `${bin}${path.delimiter}${process.env.PATH ?? ''}` });
    expect(withOpener.url, withOpener.out()).toBeDefined();
    await until(() => existsSync(opened));
    expect(await withOpener.stop(), withOpener.out()).toBe(0);
    expect(readFileSync(opened, 'utf8')).toBe(withOpener.url);
    // No opener at all: the server still serves, and one line says to open the URL by hand.
    const without = await serveProcess(['--open'], { ...process.env, PATH: path.join(tmp.dir, 'empty') });
    expect(without.url, without.out()).toBeDefined();
    await until(() => /could not open/.test(without.out()));
    expect(await without.stop(), without.out()).toBe(0);
    expect(without.out()).toMatch(/could not open a browser .*; open http:\/\/127\.0\.0\.1:\d+\/ yourself/);
  });
});
