/**
 * Landing folders, exactly once (SEMANTICS §5): `source: { path: folder }` applies every file not
 * applied yet, in name order, as one commit, and records each file in the same transaction.
 */
import { appendFileSync, utimesSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { applyFiles, applySourceWith, defineFlow, type FlowInput, flowStatus, openDriver, readTargetWith, resolveInputs } from '../../src/index.js';
import { engines } from '../engines.js';
import { dropFiles, expectedTarget, GEN_FLOW, generate } from './fixtures/generate.js';
import { appliedFiles, assertBuilt, commitLog, expectAccounted, mkdir, onDuckFile, plain, type Row, sleep, spawnScd, tempDir, writeNdjson } from './fixtures/util.js';

let tmp: { dir: string; cleanup: () => void };
beforeAll(() => {
  tmp = tempDir();
});
afterAll(() => tmp.cleanup());

// The 100,000-event test runs on DuckDB only (in memory), whatever SCD_TEST_ENGINES says.
const duckdb = { open: () => openDriver(':memory:') };

describe('a generated landing folder of 100,000 events over 40 files, applied in three runs (DuckDB)', () => {
  it('each run applies exactly the new files, in name order, as one commit; the result equals one batch of everything', async () => {
    const files = generate({ seed: 20240611, keys: 3000, files: 40, perFile: 2500, resent: 1250 });
    const all = files.flat();
    expect(all.length).toBe(100_000);
    const landing = mkdir(tmp.dir, 'gen', 'landing');
    const flow = defineFlow({ ...GEN_FLOW, source: { path: landing, format: 'ndjson' } });
    const driver = await duckdb.open();
    try {
      const runs: Array<[number, number]> = [
        [0, 10],
        [10, 25],
        [25, 40],
      ];
      for (const [from, to] of runs) {
        const dropped = dropFiles(landing, files, from, to);
        const report = await applySourceWith(driver, flow);
        expect(report.warnings).toEqual([]);
        expect(report.alreadyApplied).toBe(from);
        expect(report.results).toHaveLength(1);
        const r = report.results[0]!;
        // Exactly the new files, in name order (they were written in reverse order).
        expect(r.inputs).toEqual(dropped);
        expect(r.rowsRead).toBe((to - from) * 2500);
        expectAccounted(r);
        expect(r.quarantined).toBe(0);
      }
      // The last file re-sends 1,250 events of earlier files: duplicates, never applied twice.
      const log = await commitLog(driver, 'customers');
      expect(log.map((c) => c.version)).toEqual([1, 2, 3]);
      expect(log.reduce((s, c) => s + c.rowsRead, 0)).toBe(100_000);
      expect(log.reduce((s, c) => s + c.eventsApplied, 0)).toBe(98_750);
      expect(log.reduce((s, c) => s + c.duplicates, 0)).toBe(1_250);

      // Every file recorded once, with the commit that applied it.
      const recorded = await appliedFiles(driver, 'customers');
      expect(recorded).toHaveLength(40);
      expect(recorded.map((f) => path.basename(f.path))).toEqual(files.map((_, i) => `changes_${String(i).padStart(4, '0')}.ndjson`));
      expect(recorded.map((f) => f.version)).toEqual(files.map((_, i) => (i < 10 ? 1 : i < 25 ? 2 : 3)));

      // A fourth run finds nothing new.
      const again = await applySourceWith(driver, flow);
      expect(again.results).toEqual([]);
      expect(again.alreadyApplied).toBe(40);

      const incremental = plain(await readTargetWith(driver, flow));
      expect(incremental).toEqual(expectedTarget(all));

      // Batch invariance: all 40 files at once in a fresh database give the identical target.
      const fresh = await duckdb.open();
      try {
        const once = await applyFiles(fresh, flow, resolveInputs([landing]));
        expect(once.rowsRead).toBe(100_000);
        expect(once.eventsApplied).toBe(98_750);
        expect(once.duplicates).toBe(1_250);
        expect(plain(await readTargetWith(fresh, flow))).toEqual(incremental);
      } finally {
        await fresh.close();
      }
    } finally {
      await driver.close();
    }
  }, 120_000);
});

const FLOW: FlowInput = { target: 'items', keys: ['id'], sequenceBy: 'ts' };

for (const engine of engines) {
  describe(`landing folder on ${engine.name}`, () => {
    it('new files only, in name order, one commit per run; hidden and _temporary files wait', async () => {
      const landing = mkdir(tmp.dir, `names-${engine.name}`);
      const flow = defineFlow({ ...FLOW, source: { path: landing } });
      const driver = await engine.open();
      try {
        // Written out of name order; b's event is later than a's for key 1.
        writeNdjson(path.join(landing, 'b.ndjson'), [{ id: 1, ts: 2, v: 'b' }]);
        writeNdjson(path.join(landing, 'a.ndjson'), [
          { id: 1, ts: 1, v: 'a' },
          { id: 2, ts: 1, v: 'x' },
        ]);
        writeNdjson(path.join(landing, '.c.ndjson'), [{ id: 3, ts: 1, v: 'hidden' }]);
        writeNdjson(path.join(landing, '_d.ndjson'), [{ id: 4, ts: 1, v: 'being written' }]);
        writeFileSync(path.join(landing, 'notes.txt'), 'not a data file\n');
        const r1 = await applySourceWith(driver, flow);
        expect(r1.results).toHaveLength(1);
        expect(r1.results[0]!.inputs).toEqual([path.join(landing, 'a.ndjson'), path.join(landing, 'b.ndjson')]);
        expect(r1.results[0]).toMatchObject({ version: 1, rowsRead: 3, eventsApplied: 3, duplicates: 0, quarantined: 0 });

        writeNdjson(path.join(landing, 'c.ndjson'), [{ id: 2, ts: 2, v: 'y' }]);
        const r2 = await applySourceWith(driver, flow);
        expect(r2.alreadyApplied).toBe(2);
        expect(r2.results.map((r) => [r.version, r.inputs])).toEqual([[2, [path.join(landing, 'c.ndjson')]]]);

        expect(plain(await readTargetWith(driver, flow))).toEqual([
          { id: 1, ts: 1, v: 'a', __START_AT: 1, __END_AT: 2 },
          { id: 1, ts: 2, v: 'b', __START_AT: 2, __END_AT: null },
          { id: 2, ts: 1, v: 'x', __START_AT: 1, __END_AT: 2 },
          { id: 2, ts: 2, v: 'y', __START_AT: 2, __END_AT: null },
        ]);
        expect(await appliedFiles(driver, 'items')).toEqual([
          { path: 'a.ndjson', version: 1 },
          { path: 'b.ndjson', version: 1 },
          { path: 'c.ndjson', version: 2 },
        ]);
      } finally {
        await driver.close();
      }
    });

    it('`each`: one commit per new file, in name order', async () => {
      const landing = mkdir(tmp.dir, `each-${engine.name}`);
      const flow = defineFlow({ ...FLOW, source: { path: landing } });
      const driver = await engine.open();
      try {
        for (const n of [3, 1, 2]) writeNdjson(path.join(landing, `f${n}.ndjson`), [{ id: n, ts: n, v: `v${n}` }]);
        const r = await applySourceWith(driver, flow, { each: true });
        expect(r.results.map((c) => [c.version, c.inputs.map((i) => path.basename(i)), c.rowsRead])).toEqual([
          [1, ['f1.ndjson'], 1],
          [2, ['f2.ndjson'], 1],
          [3, ['f3.ndjson'], 1],
        ]);
        expect((await appliedFiles(driver, 'items')).map((f) => [path.basename(f.path), f.version])).toEqual([
          ['f1.ndjson', 1],
          ['f2.ndjson', 2],
          ['f3.ndjson', 3],
        ]);
      } finally {
        await driver.close();
      }
    });

    it('a file changed after it was applied is reported with a warning and never applied again', async () => {
      const landing = mkdir(tmp.dir, `changed-${engine.name}`);
      const flow = defineFlow({ ...FLOW, source: { path: landing } });
      const driver = await engine.open();
      try {
        const a = writeNdjson(path.join(landing, 'a.ndjson'), [{ id: 1, ts: 1, v: 'a' }]);
        const b = writeNdjson(path.join(landing, 'b.ndjson'), [{ id: 2, ts: 1, v: 'b' }]);
        expect((await flowStatus(driver, flow)).pendingFiles).toBe(2);
        await applySourceWith(driver, flow);
        expect((await flowStatus(driver, flow)).pendingFiles).toBe(0);
        const before = await readTargetWith(driver, flow);

        // Touched, same content: already applied, no warning.
        const later = new Date(Date.now() + 60_000);
        utimesSync(b, later, later);
        const touched = await applySourceWith(driver, flow);
        expect(touched).toMatchObject({ results: [], warnings: [], alreadyApplied: 2 });

        // Changed content: a warning naming the file and the commit that applied it; not applied.
        appendFileSync(a, JSON.stringify({ id: 1, ts: 2, v: 'sneaked in' }) + '\n');
        const changed = await applySourceWith(driver, flow);
        expect(changed.results).toEqual([]);
        expect(changed.warnings).toHaveLength(1);
        expect(changed.warnings[0]).toMatch(/a\.ndjson changed after commit 1 applied it; it is not applied again/);
        expect(changed.warnings[0]).toMatch(/fix: /);
        expect(await readTargetWith(driver, flow)).toEqual(before);
        // `scd status` counts no changed file as pending: it will not be applied.
        expect((await flowStatus(driver, flow)).pendingFiles).toBe(0);

        // A new file next to it is still applied; the changed one is still not.
        writeNdjson(path.join(landing, 'c.ndjson'), [{ id: 3, ts: 1, v: 'c' }]);
        expect((await flowStatus(driver, flow)).pendingFiles).toBe(1);
        const next = await applySourceWith(driver, flow);
        expect(next.results.map((r) => r.inputs.map((i) => path.basename(i)))).toEqual([['c.ndjson']]);
        expect(next.warnings).toHaveLength(1);
        const log = await commitLog(driver, 'items');
        expect(log.map((c) => c.inputs.map((i) => path.basename(i)))).toEqual([['a.ndjson', 'b.ndjson'], ['c.ndjson']]);
        expect(plain(await readTargetWith(driver, flow)).map((r) => r.v)).toEqual(['a', 'b', 'c']);
      } finally {
        await driver.close();
      }
    });
  });
}

describe('scd apply --watch (CLI, DuckDB file)', () => {
  it('applies files dropped while it runs, then stops cleanly on SIGINT with exit 0', async () => {
    assertBuilt();
    const dir = mkdir(tmp.dir, 'watch');
    const landing = mkdir(dir, 'landing');
    writeFileSync(path.join(dir, 'flow.yaml'), 'target: items\nkeys: [id]\nsequenceBy: ts\ndatabase: items.duckdb\nsource:\n  path: landing/\n  format: ndjson\n');
    writeNdjson(path.join(landing, '001.ndjson'), [{ id: 1, ts: 1, v: 'a' }]);
    const live = spawnScd(['apply', 'flow.yaml', '--watch', '--interval', '0.2'], dir);
    try {
      await live.until(({ stdout }) => /^commit 1: /m.test(stdout));
      writeNdjson(path.join(landing, '002.ndjson'), [
        { id: 1, ts: 2, v: 'b' },
        { id: 2, ts: 2, v: 'c' },
      ]);
      await live.until(({ stdout }) => /^commit 2: /m.test(stdout));
      writeNdjson(path.join(landing, '003.ndjson'), [{ id: 2, ts: 3, v: 'd' }]);
      await live.until(({ stdout }) => /^commit 3: /m.test(stdout));
      // A file changed after it was applied: warned about once, not applied again.
      appendFileSync(path.join(landing, '001.ndjson'), JSON.stringify({ id: 1, ts: 9, v: 'sneaked in' }) + '\n');
      await live.until(({ stderr }) => /warning: .*001\.ndjson changed after commit 1/.test(stderr));
      await sleep(700); // a few more polls
      live.child.kill('SIGINT');
      const end = await live.exited;
      expect(end).toEqual({ code: 0, signal: null });
    } finally {
      if (live.child.exitCode === null && live.child.signalCode === null) live.child.kill('SIGKILL');
    }
    expect(live.stdout()).toMatch(/^commit 1: read 1 row = 1 applied/m);
    expect(live.stdout()).toMatch(/^commit 2: read 2 rows = 2 applied/m);
    expect(live.stdout()).not.toMatch(/^commit 4/m);
    expect(live.stderr()).toMatch(/scd: stopped/);
    expect(live.stderr().match(/changed after commit 1/g)).toHaveLength(1);
    expect(live.stderr()).not.toMatch(/error|bug in scdkit/i);
    await onDuckFile(path.join(dir, 'items.duckdb'), async (driver) => {
      const log = await commitLog(driver, 'items');
      expect(log.map((c) => c.inputs.map((i) => path.basename(i)))).toEqual([['001.ndjson'], ['002.ndjson'], ['003.ndjson']]);
      const sum = log.reduce((s, c) => s + c.rowsRead, 0);
      expect(sum).toBe(4);
      expect((await appliedFiles(driver, 'items')).map((f) => f.version)).toEqual([1, 2, 3]);
      const rows = (await driver.query(`SELECT CAST(id AS INTEGER) AS id, v FROM items WHERE __END_AT IS NULL ORDER BY id`)) as Row[];
      expect(plain(rows)).toEqual([
        { id: 1, v: 'b' },
        { id: 2, v: 'd' },
      ]);
    });
  });
});

describe('scd apply --watch stopped in the middle of a commit (CLI, DuckDB file)', () => {
  it('SIGINT while a large file is being applied: the commit finishes, then exit 0', async () => {
    assertBuilt();
    const dir = mkdir(tmp.dir, 'watch-mid');
    const landing = mkdir(dir, 'landing');
    writeFileSync(
      path.join(dir, 'flow.yaml'),
      'target: customers\nkeys: [id]\nsequenceBy: ts\napplyAsDeletes: "op = \'d\'"\nexceptColumns: [op]\ndatabase: c.duckdb\nsource:\n  path: landing/\n',
    );
    const files = generate({ seed: 3, keys: 5000, files: 1, perFile: 20_000, resent: 0 });
    dropFiles(landing, files, 0, 1);
    const live = spawnScd(['apply', 'flow.yaml', '--watch', '--interval', '0.2'], dir);
    try {
      await live.until(({ stderr }) => /reading/.test(stderr));
      live.child.kill('SIGINT');
      expect(await live.exited).toEqual({ code: 0, signal: null });
    } finally {
      if (live.child.exitCode === null && live.child.signalCode === null) live.child.kill('SIGKILL');
    }
    expect(live.stderr()).toMatch(/stopping \(a commit in progress finishes first\)/);
    expect(live.stdout()).toMatch(/^commit 1: read 20000 rows = 20000 applied/m);
    await onDuckFile(path.join(dir, 'c.duckdb'), async (driver) => {
      expect((await appliedFiles(driver, 'customers')).map((f) => [path.basename(f.path), f.version])).toEqual([['changes_0000.ndjson', 1]]);
      expect(plain(await readTargetWith(driver, defineFlow(GEN_FLOW)))).toEqual(expectedTarget(files[0]!));
    });
  });
});
