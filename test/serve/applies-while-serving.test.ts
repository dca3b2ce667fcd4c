/**
 * `scd serve` on a DuckDB file under a bounded load of concurrent requests gives the file to
 * `scd apply` in another process: three clients request pages back to back (each sends its next
 * request as soon as the last is answered) while three applies run one after another; every apply
 * commits, every request is answered (200, or 503 "reload in a moment" while a commit holds the
 * file), and the pages show the last commit afterwards.
 */
import { spawn } from 'node:child_process';
import { cpSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { ROOT, SCD, scd, scdOk, tempDir } from '../e2e/fixtures/cli.js';

/** `scd serve flow.yaml --port 0` in `cwd`: its URL, and a stop. */
async function serve(cwd: string): Promise<{ url: string; stop: () => Promise<void>; output: () => string }> {
  const child = spawn(process.execPath, [SCD, 'serve', 'flow.yaml', '--port', '0'], { cwd });
  let out = '';
  child.stdout.on('data', (d) => (out += String(d)));
  child.stderr.on('data', (d) => (out += String(d)));
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  for (let i = 0; i < 200 && !/http:\/\//.test(out); i++) await new Promise((r) => setTimeout(r, 50));
  const url = /serving \S+ at (http:\/\/\S+)/.exec(out)?.[1];
  if (!url) throw new Error(`scd serve printed no URL:\n${out}`);
  const stop = async () => {
    child.kill('SIGTERM');
    return exited;
  };
  return { url, output: () => out, stop };
}

describe('scd serve under load on a DuckDB file, while scd apply commits', () => {
  const tmp = tempDir('scdkit-serve-load-');
  const project = path.join(tmp.dir, 'customers');
  afterAll(() => tmp.cleanup());

  it('three clients back to back do not starve three applies', async () => {
    cpSync(path.join(ROOT, 'examples', 'customers'), project, { recursive: true, filter: (src) => !/\.(duckdb|wal)$/.test(src) });
    await scdOk(['apply', 'flow.yaml', '--each'], project);
    const server = await serve(project);
    const statuses: number[] = [];
    let stop = false;
    const client = async (paths: string[]) => {
      for (let i = 0; !stop; i++) {
        const res = await fetch(new URL(paths[i % paths.length]!, server.url));
        await res.text();
        statuses.push(res.status);
      }
    };
    const clients = [client(['/', '/commits/1']), client(['/key?customer_id=501', '/as-of']), client(['/quarantine', '/key?customer_id=502'])];
    try {
      // Let the load settle in, then apply three files one after another.
      await new Promise((r) => setTimeout(r, 1000));
      const applies = [];
      for (let n = 4; n <= 6; n++) {
        writeFileSync(
          path.join(project, 'changes', `00${n}_update.ndjson`),
          `{"customer_id": 504, "customer_name": "Priya Nair", "city": "City ${n} — ✓", "op": "UPSERT", "changed_at": "2025-0${n}-01"}\n`,
        );
        applies.push(await scd(['apply', 'flow.yaml'], project));
      }
      stop = true;
      await Promise.all(clients);
      for (const a of applies) expect(a.code, a.stderr).toBe(0);
      expect(applies.map((a) => /commit (\d+)/.exec(a.stdout)?.[1])).toEqual(['4', '5', '6']);
      expect(
        statuses.every((s) => s === 200 || s === 503),
        JSON.stringify(statuses),
      ).toBe(true);
      expect(statuses.filter((s) => s === 200).length, JSON.stringify(statuses)).toBeGreaterThan(10);
      const after = await fetch(new URL('/key?customer_id=504', server.url));
      expect(after.status).toBe(200);
      expect(await after.text()).toContain('City 6 — ✓');
    } finally {
      stop = true;
      await Promise.allSettled(clients);
      await server.stop();
    }
    expect(server.output()).not.toMatch(/unexpected error/);
  }, 120_000);
});
