/**
 * One DuckDB file, many callers in one process
 * (docs/decisions/0032-one-duckdb-instance-per-file-per-process.md): every driver of the file
 * shares one instance, so each sees the others' commits, and the commits of a target are
 * serialized: N concurrent `apply()` calls give N commits, numbered 1..N, each batch applied
 * exactly once, and the target they would give applied one after another. The last driver to close
 * closes the file (another process can then open it).
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type ApplyResult, apply, applyRows, applySource, compact, defineFlow, openDriver, readTarget, readTargetWith, ScdError } from '../../src/index.js';
import { errorLines, ndjson, queryDb, scd, scdProcess, tempDir } from './fixtures/cli.js';

let tmp: { dir: string; cleanup: () => void };
beforeAll(() => {
  tmp = tempDir();
});
afterAll(() => tmp.cleanup());

const FLOW = { target: 't', keys: ['id'], sequenceBy: 'ts' };
const N = 4;
const ROWS = 5000;
/** The line of each batch's file whose record has no key (quarantined with that line). */
const BAD_LINE = 3777;

/** Batch b: keys b*1000 .. b*1000+ROWS-1 (overlapping the others'), sequence b+1. */
function batch(b: number): Array<Record<string, unknown>> {
  return Array.from({ length: ROWS }, (_, i) => ({ id: i + 1 === BAD_LINE ? null : b * 1000 + i, ts: b + 1, v: `batch ${b} row ${i}` }));
}

/** A driver of `file` holding `target`'s turn in an open transaction, until release() ends it. */
async function holdTarget(file: string, target: string): Promise<{ release: () => Promise<void> }> {
  const holder = await openDriver(file);
  let release!: () => void;
  let held!: () => void;
  const isHeld = new Promise<void>((r) => (held = r));
  const holding = holder.transaction(async () => {
    await holder.lockTarget(target);
    held();
    await new Promise<void>((r) => (release = r));
  });
  await isHeld;
  return {
    release: async () => {
      release();
      await holding;
      await holder.close();
    },
  };
}

describe('one DuckDB file, one process', () => {
  it(`${N} concurrent apply() calls: commits 1..${N}, each batch once, the target of applying them in sequence`, async () => {
    const dir = path.join(tmp.dir, 'concurrent');
    const flow = defineFlow({ ...FLOW, database: 'shared.duckdb' }, { baseDir: dir });
    const files = Array.from({ length: N }, (_, b) => path.join(tmp.dir, `batch-${b}.ndjson`));
    mkdirSync(dir);
    files.forEach((f, b) => {
      writeFileSync(f, ndjson(batch(b)));
    });

    const results = await Promise.all(files.map((f) => apply(flow, { inputs: [f] })));

    expect(results.map((r) => r.version).sort()).toEqual(Array.from({ length: N }, (_, i) => i + 1));
    for (const [b, r] of results.entries()) {
      expect(r.inputs).toEqual([files[b]]);
      expect(r).toMatchObject({ rowsRead: ROWS, eventsApplied: ROWS - 1, quarantined: 1, duplicates: 0 });
    }
    const file = path.join(dir, 'shared.duckdb');
    const log = await queryDb(file, `SELECT version, inputs, CAST(events_applied AS INTEGER) AS n FROM _scd_commits ORDER BY version`);
    expect(log.map((c) => c.version)).toEqual(Array.from({ length: N }, (_, i) => i + 1));
    // Each file in exactly one commit, the one its apply() reported.
    for (const [b, r] of results.entries()) expect(log.filter((c) => String(c.inputs).includes(`batch-${b}.ndjson`)).map((c) => c.version)).toEqual([r.version]);
    // Each batch's unkeyed record quarantined once, at its line (the file was read in its order).
    const quarantined = await queryDb(file, `SELECT file, CAST(line AS INTEGER) AS line FROM _scd_t_quarantine ORDER BY file`);
    expect(quarantined).toEqual(files.map((f) => ({ file: f, line: BAD_LINE })));

    const sequential = defineFlow({ ...FLOW, database: ':memory:' });
    const driver = await openDriver(':memory:');
    try {
      for (let b = 0; b < N; b++) await applyRows(driver, sequential, batch(b));
      expect(await readTarget(flow)).toEqual(await readTargetWith(driver, sequential));
    } finally {
      await driver.close();
    }
  });

  it('a compaction takes its turn with the applies (it is a commit too)', async () => {
    const dir = tmp.dir;
    const flow = defineFlow({ ...FLOW, database: 'compact.duckdb' }, { baseDir: dir });
    const rows = (from: number) => Array.from({ length: 20000 }, (_, i) => ({ id: i % 5000, ts: from + i, v: `v${from + i}` }));
    await apply(flow, { rows: rows(0) });
    const driver = await openDriver(path.join(dir, 'compact.duckdb'));
    try {
      const [folded, applied] = await Promise.all([compact(driver, flow, '10000'), apply(flow, { rows: rows(20000) })]);
      expect([folded.version, applied.version].sort()).toEqual([2, 3]);
      expect(applied).toMatchObject({ eventsApplied: 20000, quarantined: 0 });
    } finally {
      await driver.close();
    }
  });

  it('a compaction waits while another driver of the file holds the target; with noWait it is refused', async () => {
    const file = path.join(tmp.dir, 'compact-held.duckdb');
    const flow = defineFlow({ ...FLOW, database: file });
    await apply(flow, { rows: [1, 2, 3].map((ts) => ({ id: 1, ts, v: `v${ts}` })) });
    const commits = () => queryDb(file, `SELECT version, operation FROM _scd_commits ORDER BY version`);
    const held = await holdTarget(file, 't');
    const impatient = await openDriver(file, { noWait: true });
    const driver = await openDriver(file);
    try {
      const e = await compact(impatient, flow, '3').catch((x: unknown) => x);
      expect(e).toBeInstanceOf(ScdError);
      expect((e as ScdError).code).toBe('DB_IN_USE');
      expect((e as ScdError).problem).toMatch(/^target "t" in .* is being changed by another scdkit commit \(of this process or another\)$/);
      let finished = false;
      const said: string[] = [];
      const folding = compact(driver, flow, '3', (m) => said.push(m)).then((r) => {
        finished = true;
        return r;
      });
      await new Promise((r) => setTimeout(r, 500));
      expect(finished, 'the compaction must wait while another driver holds the target').toBe(false);
      // Its progress says why it waits, once.
      expect(said.filter((m) => m.startsWith('waiting'))).toEqual([`waiting for target "t" in ${driver.location}: another scdkit commit is changing it`]);
      await held.release();
      expect(await folding).toMatchObject({ version: 2, operation: 'compact', eventsFolded: 2 });
    } finally {
      await held.release(); // (again: a no-op once released)
      await impatient.close();
      await driver.close();
    }
    expect(await commits()).toEqual([
      { version: 1, operation: 'apply' },
      { version: 2, operation: 'compact' },
    ]);
  });

  it('a commit that fails releases the target: the others go on', async () => {
    const dir = tmp.dir;
    const flow = defineFlow({ ...FLOW, database: 'fails.duckdb' }, { baseDir: dir });
    await apply(flow, { rows: [{ id: 1, ts: 1, v: 'a' }] });
    // A flow whose keys changed fails inside the commit, after it took the target.
    const changed = defineFlow({ ...FLOW, keys: ['id', 'v'], database: 'fails.duckdb' }, { baseDir: dir });
    const [bad, good] = await Promise.allSettled([apply(changed, { rows: [{ id: 1, ts: 2, v: 'b' }] }), apply(flow, { rows: [{ id: 1, ts: 3, v: 'c' }] })]);
    expect(bad.status).toBe('rejected');
    expect((bad as PromiseRejectedResult).reason).toBeInstanceOf(ScdError);
    expect(good).toMatchObject({ status: 'fulfilled', value: { version: 2 } });
    const next: ApplyResult = await apply(flow, { rows: [{ id: 2, ts: 4, v: 'd' }] });
    expect(next.version).toBe(3);
  });

  it("a second open shares the first one's instance; the last close releases the file", async () => {
    const dir = tmp.dir;
    const file = path.join(dir, 'two-opens.duckdb');
    writeFileSync(path.join(dir, 'two-opens.yaml'), 'target: t\nkeys: [id]\nsequenceBy: ts\ndatabase: two-opens.duckdb\n');
    const flow = defineFlow({ ...FLOW, database: 'two-opens.duckdb' }, { baseDir: dir });
    const first = await openDriver(file);
    // Another spelling of the same file.
    const second = await openDriver(path.relative(process.cwd(), path.join(dir, '.', 'two-opens.duckdb')));
    try {
      await applyRows(first, flow, [{ id: 1, ts: 1, v: 'a' }]);
      // The second driver sees the commit without reopening the file.
      expect(await readTargetWith(second, flow)).toEqual([{ id: 1, ts: 1, v: 'a', __START_AT: 1, __END_AT: null }]);
      await applyRows(second, flow, [{ id: 1, ts: 2, v: 'b' }]);
      expect((await readTargetWith(first, flow)).map((r) => r.v)).toEqual(['a', 'b']);
      await first.close();
      // The second driver still holds the file: another process is refused.
      // A real process: in this one the command would share the drivers' instance, not be refused.
      const held = await scdProcess(['export', 'two-opens.yaml', '--format', 'ndjson'], dir);
      expect(held.code).not.toBe(0);
      expect(errorLines(held.stderr)[0]).toContain('in use by another scdkit process');
      expect((await readTargetWith(second, flow)).map((r) => r.v)).toEqual(['a', 'b']);
    } finally {
      await first.close();
      await second.close();
    }
    const free = await scd(['export', 'two-opens.yaml', '--format', 'ndjson'], dir);
    expect(free.code).toBe(0);
    expect(free.stdout.trim().split('\n')).toHaveLength(2);
  });

  it('a commit does not change how another driver of the file stages (insertion order kept)', async () => {
    const file = path.join(tmp.dir, 'order.duckdb');
    const a = await openDriver(file);
    const b = await openDriver(file);
    const order = async (d: typeof a) => (await d.query(`SELECT current_setting('preserve_insertion_order') AS p`))[0]!.p;
    try {
      await a.transaction(async () => {
        expect(await order(a)).toBe(false);
        expect(await order(b)).toBe(true);
      });
      expect(await order(b)).toBe(true);
      // a's next staging reads in order again (a commit's connection is usually replaced first).
      const input = path.join(tmp.dir, 'order.ndjson');
      writeFileSync(input, '{"id":1}\n{"id":2}\n');
      await a.stageFiles([{ path: input, format: 'ndjson' }], '_scd_stage', '_scd_rejects');
      expect(await order(a)).toBe(true);
    } finally {
      await a.close();
      await b.close();
    }
  });

  it("':memory:' stays private to each open", async () => {
    const a = await openDriver(':memory:');
    const b = await openDriver(':memory:');
    try {
      await a.run('CREATE TABLE only_in_a (x INTEGER)');
      expect(await b.columns('only_in_a')).toBeUndefined();
    } finally {
      await a.close();
      await b.close();
    }
  });

  it(`${N} concurrent applySource() calls over one landing folder: every file applied exactly once, commits without gaps`, async () => {
    const dir = path.join(tmp.dir, 'landing');
    mkdirSync(path.join(dir, 'in'), { recursive: true });
    const FILES = 6;
    for (let f = 0; f < FILES; f++)
      writeFileSync(path.join(dir, 'in', `part-${f}.ndjson`), ndjson(Array.from({ length: 2000 }, (_, i) => ({ id: f * 2000 + i, ts: 1, v: `f${f}` }))));
    const flow = defineFlow({ ...FLOW, database: 'landing.duckdb', source: { path: 'in' } }, { baseDir: dir });

    const reports = await Promise.all(Array.from({ length: N }, (_, i) => applySource(flow, { each: i % 2 === 1 })));

    const results = reports.flatMap((r) => r.results);
    expect(results.map((r) => r.version).sort((a, b) => a - b)).toEqual(results.map((_, i) => i + 1));
    expect(results.flatMap((r) => r.inputs).sort()).toEqual(Array.from({ length: FILES }, (_, f) => path.join(dir, 'in', `part-${f}.ndjson`)));
    expect(results.reduce((n, r) => n + r.eventsApplied, 0)).toBe(FILES * 2000);
    expect(results.reduce((n, r) => n + r.duplicates, 0)).toBe(0);
    const file = path.join(dir, 'landing.duckdb');
    const recorded = await queryDb(file, `SELECT path, version FROM _scd_files ORDER BY path`);
    expect(recorded).toHaveLength(FILES);
    // A commit's inputs are the files' paths; their records, their names inside the folder.
    for (const r of recorded) expect(results.filter((c) => c.inputs.includes(path.join(dir, 'in', String(r.path)))).map((c) => c.version)).toEqual([r.version]);
    expect(await queryDb(file, `SELECT CAST(count(*) AS INTEGER) AS n FROM _scd_t_events`)).toEqual([{ n: FILES * 2000 }]);
  });

  it('two applySource() calls waiting for the target: the second lists the folder again and commits nothing', async () => {
    const dir = path.join(tmp.dir, 'landing-wait');
    mkdirSync(path.join(dir, 'in'), { recursive: true });
    for (let f = 0; f < 3; f++) writeFileSync(path.join(dir, 'in', `part-${f}.ndjson`), ndjson([{ id: f, ts: 1, v: `f${f}` }]));
    const flow = defineFlow({ ...FLOW, database: 'wait.duckdb', source: { path: 'in' } }, { baseDir: dir });
    await apply(flow, { rows: [{ id: 99, ts: 1, v: 'first' }] });
    const hold = await holdTarget(path.join(dir, 'wait.duckdb'), 't');
    const progress: string[] = [];
    const first = applySource(flow, { onProgress: (m) => progress.push(m) });
    const second = applySource(flow, { onProgress: (m) => progress.push(m) });
    // Both have listed and staged the three files once the target is free.
    await new Promise((r) => setTimeout(r, 3000));
    await hold.release();
    const reports = await Promise.all([first, second]);
    // Whichever took the target first applied the three files; the other found them applied.
    const [winner, loser] = reports[0]!.results.length ? reports : [reports[1]!, reports[0]!];
    expect(winner.results.map((r) => r.version)).toEqual([2]);
    expect(winner.results[0]).toMatchObject({ eventsApplied: 3 });
    expect(loser).toMatchObject({ results: [], alreadyApplied: 3 });
    expect(progress.some((m) => m.includes('listing the folder again'))).toBe(true);
  });

  it('noWait: a second commit of a target the process is changing fails at once, with the same line as across processes', async () => {
    const dir = tmp.dir;
    const flow = defineFlow({ ...FLOW, database: 'nowait.duckdb' }, { baseDir: dir });
    await apply(flow, { rows: [{ id: 1, ts: 1, v: 'a' }] });
    const hold = await holdTarget(path.join(dir, 'nowait.duckdb'), 't');
    try {
      // The target is released only after the refusal: a wait would never end (the test's timeout).
      const said: string[] = [];
      const e = await apply(flow, { rows: [{ id: 1, ts: 2, v: 'b' }], noWait: true, onProgress: (m) => said.push(m) }).catch((x: unknown) => x);
      expect(said.filter((m) => m.startsWith('waiting'))).toEqual([]);
      expect(e).toBeInstanceOf(ScdError);
      expect((e as ScdError).code).toBe('DB_IN_USE');
      expect((e as ScdError).problem).toBe(`target "t" in ${path.join(dir, 'nowait.duckdb')} is being changed by another scdkit commit (of this process or another)`);
      // Another target of the file is free.
      await apply(defineFlow({ ...FLOW, target: 'u', database: 'nowait.duckdb' }, { baseDir: dir }), { rows: [{ id: 1, ts: 1, v: 'x' }], noWait: true });
    } finally {
      await hold.release();
    }
    expect((await readTarget(flow)).map((r) => r.v)).toEqual(['a']);
    expect((await apply(flow, { rows: [{ id: 1, ts: 2, v: 'b' }], noWait: true })).version).toBe(2);
  });

  it('pglite://PATH: a second open of the folder in this process is refused until the first closes', async () => {
    const where = `pglite://${path.join(tmp.dir, 'pgdata')}`;
    const flow = defineFlow({ ...FLOW, database: where });
    const first = await openDriver(where);
    try {
      await applyRows(first, flow, [{ id: 1, ts: 1, v: 'a' }]);
      const e = await apply(flow, { rows: [{ id: 1, ts: 2, v: 'b' }] }).catch((x: unknown) => x);
      expect(e).toBeInstanceOf(ScdError);
      expect((e as ScdError).code).toBe('DB_IN_USE');
      expect((e as ScdError).oneLine()).toMatch(/already open in this process.*fix: /);
    } finally {
      await first.close();
    }
    // Once closed, the folder opens again and holds the first commit only.
    expect((await apply(flow, { rows: [{ id: 1, ts: 2, v: 'b' }] })).version).toBe(2);
    expect((await readTarget(flow)).map((r) => r.v)).toEqual(['a', 'b']);
  });
});
