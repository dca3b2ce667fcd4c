/**
 * Crash test (SEMANTICS §5): `node bin/scd apply FLOW` on a DuckDB file is killed with
 * SIGKILL between files and inside a commit, then rerun until it finishes. Every file must be
 * applied exactly once: each file in exactly one commit, rows read summed over the commits equal
 * to the records of the folder, and the target equal to applying everything in a fresh database.
 * Kill timings vary from run to run; the assertions are about exactly-once only, never timing.
 */
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { applyFiles, type Driver, defineFlow, loadFlowFile, openDriver, readTargetWith, resolveInputs } from '../../src/index.js';
import { dropFiles, expectedTarget, GEN_FLOW, type GenEvent, generate } from './fixtures/generate.js';
import { appliedFiles, assertBuilt, commitLog, mkdir, ndjson, onDuckFile, plain, type Row, scd, sleep, spawnScd, tempDir } from './fixtures/util.js';

let tmp: { dir: string; cleanup: () => void };
beforeAll(() => {
  assertBuilt();
  tmp = tempDir('scdkit-crash-');
});
afterAll(() => tmp.cleanup());

/**
 * The exactly-once invariant, checked after every kill: the files recorded as applied are exactly
 * the inputs of the commits, each in one commit, with that commit's version.
 */
async function checkExactlyOnce(driver: Driver): Promise<{ files: string[]; rowsRead: number }> {
  // Killed before anything was created: nothing applied, nothing recorded.
  if (!(await driver.columns('_scd_commits')) || !(await driver.columns('_scd_files'))) {
    if (await driver.columns('_scd_commits')) expect(await commitLog(driver, 'customers')).toEqual([]);
    return { files: [], rowsRead: 0 };
  }
  const log = await commitLog(driver, 'customers');
  const recorded = await appliedFiles(driver, 'customers');
  // A commit's inputs are the files' paths; their records, their names inside the folder.
  const inputs = log.flatMap((c) => c.inputs.map((i) => ({ path: path.basename(i), version: c.version })));
  expect(new Set(inputs.map((i) => i.path)).size, 'a file is in two commits').toBe(inputs.length);
  expect([...inputs].sort((a, b) => a.path.localeCompare(b.path))).toEqual(recorded);
  expect(log.map((c) => c.version)).toEqual(log.map((_, i) => i + 1));
  return { files: recorded.map((r) => r.path), rowsRead: log.reduce((s, c) => s + c.rowsRead, 0) };
}

/** Run `scd apply` and SIGKILL it once `ready` holds (or let it finish); returns whether it finished by itself. */
async function runAndKill(dir: string, args: string[], ready: (out: { stdout: string; stderr: string }) => boolean, delayMs = 0): Promise<boolean> {
  const live = spawnScd(['apply', 'flow.yaml', ...args], dir);
  let finished = false;
  try {
    await live.until(ready, 60_000);
  } catch {
    finished = true; // it ended before the kill point
  }
  if (!finished) {
    if (delayMs) await sleep(delayMs);
    live.child.kill('SIGKILL');
  }
  const end = await live.exited;
  if (end.signal === null) {
    expect(end.code, live.stderr()).toBe(0);
    return true;
  }
  expect(end.signal).toBe('SIGKILL');
  return false;
}

describe('kill -9 at any point, rerun: every file applied exactly once (DuckDB file, bin/scd)', () => {
  it('kills between files (--each) and inside a large commit, then reruns until done', async () => {
    const dir = mkdir(tmp.dir, 'crash');
    const landing = mkdir(dir, 'landing');
    writeFileSync(
      path.join(dir, 'flow.yaml'),
      [
        'target: customers',
        'keys: [id]',
        'sequenceBy: ts',
        `applyAsDeletes: "${GEN_FLOW.applyAsDeletes}"`,
        'exceptColumns: [op]',
        'database: crash.duckdb',
        'source:',
        '  path: landing/',
        '  format: ndjson',
        '',
      ].join('\n'),
    );
    const db = path.join(dir, 'crash.duckdb');
    const small = generate({ seed: 7, keys: 500, files: 10, perFile: 400, resent: 100 });
    dropFiles(landing, small, 0, small.length);
    let records = small.flat().length;
    const events: GenEvent[] = small.flat();

    // 1. Between files: --each commits file after file; kill once one or more new commit lines appear.
    let finished = false;
    let kills = 0;
    const commits =
      (n: number) =>
      ({ stdout }: { stdout: string }) =>
        (stdout.match(/^commit \d+:/gm) ?? []).length >= n;
    const plan: Array<[(out: { stdout: string; stderr: string }) => boolean, number]> = [
      [({ stderr }) => /mapping/.test(stderr), 0], // inside the very first commit (it creates the target)
      [commits(1), 0], // right after a commit line
      [commits(2), 40], // shortly after the second: most likely inside the third commit
    ];
    for (const [ready, delay] of plan) {
      finished = await runAndKill(dir, ['--each'], ready, delay);
      if (finished) break;
      kills++;
      await onDuckFile(db, checkExactlyOnce);
    }
    if (!finished) finished = await runAndKill(dir, ['--each'], () => false);
    expect(finished).toBe(true);
    expect(kills).toBeGreaterThan(0);
    // 2. Inside a commit: one large file and two small ones as ONE commit, killed at several
    //    points of its work (reading, mapping, recomputing).
    const big = generate({ seed: 99, keys: 20000, files: 1, perFile: 40_000, resent: 0 })[0]!.map((e) => ({ ...e, ts: e.ts + 1_000_000 }));
    const tail = generate({ seed: 5, keys: 500, files: 2, perFile: 300, resent: 0 }).map((f) => f.map((e) => ({ ...e, ts: e.ts + 2_000_000 })));
    writeFileSync(path.join(landing, 'z_big.ndjson'), ndjson(big as unknown as Row[]));
    writeFileSync(path.join(landing, 'z_tail_1.ndjson'), ndjson(tail[0] as unknown as Row[]));
    writeFileSync(path.join(landing, 'z_tail_2.ndjson'), ndjson(tail[1] as unknown as Row[]));
    records += big.length + tail[0]!.length + tail[1]!.length;
    events.push(...big, ...tail.flat());
    const points: Array<[RegExp, number]> = [
      [/reading/, 0],
      [/mapping/, 0],
      [/recomputing/, 0],
    ];
    const before = (await onDuckFile(db, checkExactlyOnce)).files.length;
    finished = false;
    for (const [re, delay] of points) {
      finished = await runAndKill(dir, [], ({ stderr }) => re.test(stderr), delay);
      const state = await onDuckFile(db, checkExactlyOnce);
      // All or nothing: the three files of the commit are recorded together or not at all.
      expect([before, before + 3]).toContain(state.files.length);
      if (finished || state.files.length === before + 3) break;
    }
    // 3. Rerun until a run finishes by itself.
    for (let i = 0; i < 5 && !finished; i++) {
      const r = await scd(['apply', 'flow.yaml'], dir);
      expect(r.code, r.stderr).toBe(0);
      const state = await onDuckFile(db, checkExactlyOnce);
      finished = state.files.length === before + 3;
    }
    const last = await scd(['apply', 'flow.yaml'], dir);
    expect(last.code, last.stderr).toBe(0);
    expect(last.stdout).toBe(`nothing new to apply (${small.length + 3} files already applied)\n`);
    // Every file exactly once; rows read summed = records; target = one batch in a fresh database.
    const flow = loadFlowFile(path.join(dir, 'flow.yaml'));
    const { state, target } = await onDuckFile(db, async (driver) => ({
      state: await checkExactlyOnce(driver),
      target: plain(await readTargetWith(driver, flow)),
    }));
    expect(state.files.map((f) => path.basename(f))).toEqual([
      ...small.map((_, i) => `changes_${String(i).padStart(4, '0')}.ndjson`),
      'z_big.ndjson',
      'z_tail_1.ndjson',
      'z_tail_2.ndjson',
    ]);
    expect(state.rowsRead).toBe(records);
    const reference = await openDriver(':memory:');
    try {
      const refFlow = defineFlow({ ...GEN_FLOW });
      await applyFiles(reference, refFlow, resolveInputs([landing], 'ndjson'));
      expect(target).toEqual(plain(await readTargetWith(reference, refFlow)));
    } finally {
      await reference.close();
    }
    expect(target).toEqual(expectedTarget(events));
  }, 180_000);
});
