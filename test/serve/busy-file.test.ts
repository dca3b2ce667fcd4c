/**
 * `scd serve` on a DuckDB file another process holds (DuckDB lets one process open a file): the
 * server holds the file only while it answers a request, so the other process can open it between
 * requests; a request that meets the file held waits for it (up to 5 s) and then shows what the
 * other process committed, or answers 503 "reload in a moment" when it is held longer.
 */
import { type ChildProcessWithoutNullStreams, spawn } from 'node:child_process';
import { cpSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadFlowFile, type RunningServer, startServer } from '../../src/index.js';
import { duckdbFile } from '../../src/serve/database.js';
import { DIST_INDEX, FIXTURES, ROOT, scdOk, tempDir } from '../e2e/fixtures/cli.js';

/** A process that opens the flow's database and holds it until told "go" (then applies INPUT and exits). */
function holdDatabase(cwd: string, input: string): { child: ChildProcessWithoutNullStreams; ready: Promise<void>; done: Promise<number | null> } {
  const child = spawn(process.execPath, [path.join(FIXTURES, 'hold-db.mjs'), DIST_INDEX, path.join(cwd, 'flow.yaml'), input], { cwd });
  let out = '';
  let err = '';
  const ready = new Promise<void>((resolve, reject) => {
    child.stdout.on('data', (d) => {
      out += String(d);
      if (/^ready$/m.test(out)) resolve();
    });
    child.stderr.on('data', (d) => (err += String(d)));
    child.once('exit', (code) => reject(new Error(`holder exited (${code}) before ready: ${err}`)));
  });
  const done = new Promise<number | null>((resolve) => child.once('exit', (c) => resolve(c)));
  return { child, ready, done };
}

describe('scd serve on a DuckDB file another process holds', () => {
  const tmp = tempDir('scdkit-serve-busy-');
  const project = path.join(tmp.dir, 'customers');
  let server: RunningServer;

  beforeAll(async () => {
    // The example as committed: not a database `npm start` may have left beside it.
    cpSync(path.join(ROOT, 'examples', 'customers'), project, { recursive: true, filter: (src) => !/\.(duckdb|wal)$/.test(src) });
    await scdOk(['apply', 'flow.yaml', '--each'], project);
    const flow = loadFlowFile(path.join(project, 'flow.yaml'));
    server = await startServer({ flow, source: duckdbFile(flow.database, {}), log: () => {} });
  });
  afterAll(async () => {
    await server?.close();
    tmp.cleanup();
  });

  it('waits while another process commits, then shows its commit; answers 503 when the file stays held', async () => {
    expect((await fetch(server.url)).status).toBe(200);
    // Between requests the server holds nothing: another process opens the file.
    const input = path.join(project, 'late.ndjson');
    writeFileSync(input, '{"customer_id": 504, "customer_name": "Priya Nair", "city": "Kochi", "op": "UPSERT", "changed_at": "2025-09-01"}\n');
    const holder = holdDatabase(project, input);
    await holder.ready;
    const started = Date.now();
    const answer = fetch(new URL('/commits/4', server.url)).then(async (r) => ({ status: r.status, text: await r.text(), at: Date.now() }));
    await new Promise((r) => setTimeout(r, 1000));
    holder.child.stdin.write('go\n');
    expect(await holder.done).toBe(0);
    const page = await answer;
    expect(page.status).toBe(200);
    expect(page.at - started).toBeGreaterThanOrEqual(900);
    expect(page.text).toContain('late.ndjson');

    // Held for longer than a request waits: 503, reload in a moment.
    const again = holdDatabase(project, input);
    await again.ready;
    try {
      const busy = await fetch(server.url);
      expect(busy.status).toBe(503);
      expect(busy.headers.get('retry-after')).toBe('2');
      const text = await busy.text();
      expect(text).toContain('in use by another scdkit process');
      expect(text).toContain('Reload in a moment');
    } finally {
      again.child.kill('SIGTERM');
      await again.done;
    }
    expect((await fetch(server.url)).status).toBe(200);
  }, 30_000);
});
