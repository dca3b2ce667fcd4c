/**
 * PostgreSQL only (a real server: SCD_TEST_POSTGRES_URL): two applies of one target never
 * interleave. The second waits on the target's advisory lock, or fails at once with --no-wait.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { PostgresDriver } from '../../src/dialects/postgres/index.js';
import { applyRows, applySourceWith, compact, defineFlow, readTargetWith, ScdError } from '../../src/index.js';
import { ndjson, scd, scdProcess, tempDir } from '../e2e/fixtures/cli.js';
import { freshSchema } from '../engines.js';

const url = process.env.SCD_TEST_POSTGRES_URL;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe.skipIf(!url)('postgres: one apply at a time per target', () => {
  const flow = defineFlow({ target: 'dim_lock', keys: 'id', sequenceBy: 'seq' });

  /** Hold the target's lock in an open transaction of another connection until `release` resolves. */
  function holdLock(schema: string, release: Promise<void>): Promise<{ held: Promise<void>; done: Promise<void> }> {
    return holdLockOf(schema, 'dim_lock', release);
  }

  async function holdLockOf(schema: string, target: string, release: Promise<void>): Promise<{ held: Promise<void>; done: Promise<void> }> {
    const holder = await PostgresDriver.connect(url!, { schema });
    let held!: () => void;
    const heldP = new Promise<void>((r) => (held = r));
    const done = holder
      .transaction(async () => {
        await holder.lockTarget(target);
        held();
        await release;
      })
      .finally(() => holder.close());
    await heldP;
    return { held: heldP, done };
  }

  it('the second apply waits for the first to commit, then applies', async () => {
    const schema = freshSchema();
    const a = await PostgresDriver.connect(url!, { schema, dropSchemaOnClose: true });
    try {
      await applyRows(a, flow, [{ id: 1, v: 'a', seq: 1 }]);
      let release!: () => void;
      const { done } = await holdLock(schema, new Promise<void>((r) => (release = r)));
      let finished = false;
      const said: string[] = [];
      const second = applyRows(a, flow, [{ id: 1, v: 'b', seq: 2 }], (m) => said.push(m)).then((r) => {
        finished = true;
        return r;
      });
      await sleep(700);
      expect(finished, 'the apply must wait while another transaction holds the target').toBe(false);
      expect(said.filter((m) => m.startsWith('waiting'))).toEqual([`waiting for target "dim_lock" in ${a.location}: another scdkit commit is changing it`]);
      release();
      await done;
      const r = await second;
      expect(r.version).toBe(2);
      expect((await readTargetWith(a, flow)).map((x) => x.v)).toEqual(['a', 'b']);
    } finally {
      await a.close();
    }
  });

  it('with noWait the second apply fails at once with a clear message, and changes nothing', async () => {
    const schema = freshSchema();
    const a = await PostgresDriver.connect(url!, { schema, dropSchemaOnClose: true, noWait: true });
    try {
      await applyRows(a, flow, [{ id: 1, v: 'a', seq: 1 }]);
      let release!: () => void;
      const { done } = await holdLock(schema, new Promise<void>((r) => (release = r)));
      // The lock is released only after the refusal: a wait would never end (the test's timeout).
      const said: string[] = [];
      const e = await applyRows(a, flow, [{ id: 1, v: 'b', seq: 2 }], (m) => said.push(m)).catch((x: unknown) => x);
      release();
      await done;
      expect(e).toBeInstanceOf(ScdError);
      expect((e as ScdError).code).toBe('DB_IN_USE');
      expect((e as ScdError).problem).toBe(`target "dim_lock" in ${a.location} is being changed by another scdkit commit (of this process or another)`);
      expect(said.filter((m) => m.startsWith('waiting'))).toEqual([]);
      expect((await readTargetWith(a, flow)).map((x) => x.v)).toEqual(['a']);
    } finally {
      await a.close();
    }
  });

  /** The commit log of dim_lock: each commit's version and operation. */
  const commitLog = async (driver: PostgresDriver) =>
    (await driver.query(`SELECT version, operation FROM _scd_commits WHERE target = 'dim_lock' ORDER BY version`)).map((c) => `${c.version} ${c.operation}`);

  it('a compaction waits for the commit holding the target, then compacts what it committed', async () => {
    const schema = freshSchema();
    const a = await PostgresDriver.connect(url!, { schema, dropSchemaOnClose: true });
    try {
      await applyRows(
        a,
        flow,
        [1, 2, 3].map((seq) => ({ id: 1, v: `v${seq}`, seq })),
      );
      let release!: () => void;
      const { done } = await holdLock(schema, new Promise<void>((r) => (release = r)));
      let finished = false;
      const folding = compact(a, flow, '3').then((r) => {
        finished = true;
        return r;
      });
      await sleep(700);
      expect(finished, 'the compaction must wait while another transaction holds the target').toBe(false);
      release();
      await done;
      const r = await folding;
      expect(r).toMatchObject({ version: 2, operation: 'compact', eventsFolded: 2 });
      expect(await commitLog(a)).toEqual(['1 apply', '2 compact']);
    } finally {
      await a.close();
    }
  });

  it('with noWait a compaction fails at once with the same line as an apply, and changes nothing', async () => {
    const schema = freshSchema();
    const a = await PostgresDriver.connect(url!, { schema, dropSchemaOnClose: true, noWait: true });
    try {
      await applyRows(
        a,
        flow,
        [1, 2, 3].map((seq) => ({ id: 1, v: `v${seq}`, seq })),
      );
      let release!: () => void;
      const { done } = await holdLock(schema, new Promise<void>((r) => (release = r)));
      // The lock is released only after the refusal: a wait would never end (the test's timeout).
      const said: string[] = [];
      const e = await compact(a, flow, '3', (m) => said.push(m)).catch((x: unknown) => x);
      release();
      await done;
      expect(e).toBeInstanceOf(ScdError);
      expect((e as ScdError).code).toBe('DB_IN_USE');
      expect((e as ScdError).problem).toBe(`target "dim_lock" in ${a.location} is being changed by another scdkit commit (of this process or another)`);
      expect(said.filter((m) => m.startsWith('waiting'))).toEqual([]);
      expect(await commitLog(a)).toEqual(['1 apply']);
      expect(Number((await a.query(`SELECT count(*) AS n FROM _scd_dim_lock_events`))[0]!.n)).toBe(3);
    } finally {
      await a.close();
    }
  });

  it('scd apply --no-wait exits 1 with one line while another apply holds the target', async () => {
    const schema = freshSchema();
    const { dir, cleanup } = tempDir();
    const owner = await PostgresDriver.connect(url!, { schema, dropSchemaOnClose: true });
    try {
      writeFileSync(path.join(dir, 'flow.yaml'), `target: dim_lock\nkeys: id\nsequenceBy: seq\nschema: ${schema}\n`);
      writeFileSync(path.join(dir, 'a.ndjson'), ndjson([{ id: 1, v: 'a', seq: 1 }]));
      const first = await scd(['apply', 'flow.yaml', '--db', url!, '--input', 'a.ndjson'], dir);
      expect(first.code, first.stderr).toBe(0);
      let release!: () => void;
      const { done } = await holdLock(schema, new Promise<void>((r) => (release = r)));
      const r = await scd(['apply', 'flow.yaml', '--db', url!, '--input', 'a.ndjson', '--no-wait'], dir);
      release();
      await done;
      expect(r.code).toBe(1);
      expect(r.stderr).toMatch(/^scd: .*being changed by another scdkit commit/m);
      const again = await scd(['apply', 'flow.yaml', '--db', url!, '--input', 'a.ndjson'], dir);
      expect(again.code, again.stderr).toBe(0);
      expect(again.stdout).toContain('commit 2');
    } finally {
      await owner.close();
      cleanup();
    }
  });

  /** A landing folder of `files` files of `rows` records each; file f holds keys f*rows .. f*rows+rows-1. */
  function landing(dir: string, files: number, rows: number): { flowYaml: string; total: number } {
    mkdirSync(path.join(dir, 'in'));
    for (let f = 0; f < files; f++)
      writeFileSync(path.join(dir, 'in', `part-${String(f).padStart(2, '0')}.ndjson`), ndjson(Array.from({ length: rows }, (_, i) => ({ id: f * rows + i, v: `f${f}`, seq: 1 }))));
    return { flowYaml: 'target: dim_land\nkeys: id\nsequenceBy: seq\nsource:\n  path: in\n', total: files * rows };
  }

  /** Every file recorded once, by the one commit that read it; commits 1..n without gaps; each record applied once. */
  async function expectEachFileOnce(driver: PostgresDriver, files: number, total: number): Promise<void> {
    const commits = await driver.query(`SELECT version, inputs, rows_read, events_applied, duplicates FROM _scd_commits WHERE target = 'dim_land' ORDER BY version`);
    expect(commits.map((c) => c.version)).toEqual(commits.map((_, i) => i + 1));
    const recorded = await driver.query(`SELECT path, version FROM _scd_files WHERE target = 'dim_land' ORDER BY path`);
    expect(recorded).toHaveLength(files);
    for (const r of recorded) {
      const readers = commits.filter((c) => (JSON.parse(String(c.inputs)) as string[]).map((i) => path.basename(i)).includes(String(r.path)));
      expect(
        readers.map((c) => c.version),
        `${r.path} read by exactly the commit that recorded it`,
      ).toEqual([r.version]);
    }
    expect(commits.reduce((n, c) => n + Number(c.rows_read), 0)).toBe(total);
    expect(commits.reduce((n, c) => n + Number(c.events_applied), 0)).toBe(total);
    expect(commits.reduce((n, c) => n + Number(c.duplicates), 0)).toBe(0);
    expect((await driver.query(`SELECT count(*) AS n FROM _scd_dim_land_events`))[0]!.n).toBe(String(total));
  }

  it('two applies of one landing folder waiting on the target: the second lists it again and applies nothing twice', async () => {
    const schema = freshSchema();
    const { dir, cleanup } = tempDir();
    const a = await PostgresDriver.connect(url!, { schema, dropSchemaOnClose: true });
    const b = await PostgresDriver.connect(url!, { schema });
    try {
      const { flowYaml, total } = landing(dir, 3, 200);
      writeFileSync(path.join(dir, 'flow.yaml'), flowYaml);
      const { loadFlowFile } = await import('../../src/index.js');
      const flow = loadFlowFile(path.join(dir, 'flow.yaml'));
      const pids = [a, b].map((d) => d.query('SELECT pg_backend_pid() AS pid').then((r) => Number(r[0]!.pid)));
      const waiting = `SELECT count(*) AS n FROM pg_locks WHERE locktype = 'advisory' AND NOT granted AND pid IN (${(await Promise.all(pids)).join(', ')})`;
      await applyRows(a, defineFlow({ target: 'dim_other', keys: 'id', sequenceBy: 'seq' }), [{ id: 1, seq: 1 }]);
      let release!: () => void;
      const { done } = await holdLockOf(schema, 'dim_land', new Promise<void>((r) => (release = r)));
      // Both list the folder (all three files pending), stage them, and wait for the target.
      const first = applySourceWith(a, flow);
      const second = applySourceWith(b, flow);
      const watcher = await PostgresDriver.connect(url!, { schema });
      try {
        for (let i = 0; i < 600 && Number((await watcher.query(waiting))[0]!.n) < 2; i++) await sleep(50);
        expect(Number((await watcher.query(waiting))[0]!.n), 'both applies wait on the target').toBe(2);
      } finally {
        await watcher.close();
      }
      release();
      await done;
      const reports = await Promise.all([first, second]);
      // One of them applied the three files; the other found them applied and committed nothing.
      expect(reports.map((r) => r.results.length).sort()).toEqual([0, 1]);
      expect(reports.map((r) => r.alreadyApplied).sort()).toEqual([0, 3]);
      await expectEachFileOnce(a, 3, total);
    } finally {
      await b.close();
      await a.close();
      cleanup();
    }
  });

  it('N scd processes on one landing folder: every file applied exactly once, commits numbered without gaps', async () => {
    const schema = freshSchema();
    const { dir, cleanup } = tempDir();
    const owner = await PostgresDriver.connect(url!, { schema, dropSchemaOnClose: true });
    try {
      const FILES = 8;
      const { flowYaml, total } = landing(dir, FILES, 3000);
      writeFileSync(path.join(dir, 'flow.yaml'), `${flowYaml}schema: ${schema}\n`);
      // Half of them one commit for every pending file, half one commit per file.
      // Real processes: four commands at once (in-process, one command runs at a time).
      const runs = await Promise.all(Array.from({ length: 4 }, (_, i) => scdProcess(['apply', 'flow.yaml', '--db', url!, '--json', ...(i % 2 ? ['--each'] : [])], dir)));
      for (const r of runs) expect(r.code, r.stderr).toBe(0);
      const lines = runs.flatMap((r) =>
        r.stdout
          .split('\n')
          .filter((l) => l.trim())
          .map((l) => JSON.parse(l) as { version: number | null; inputs: string[] }),
      );
      // A run that found every file taken prints one line with version null (nothing new).
      const results = lines.filter((l): l is { version: number; inputs: string[] } => l.version !== null);
      for (const r of runs) expect(r.stdout.trim(), r.stderr).not.toBe('');
      expect(results.map((r) => r.version).sort((x, y) => x - y)).toEqual(results.map((_, i) => i + 1));
      expect(results.flatMap((r) => r.inputs).sort()).toHaveLength(FILES);
      await expectEachFileOnce(owner, FILES, total);
    } finally {
      await owner.close();
      cleanup();
    }
  });
});
