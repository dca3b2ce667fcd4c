/**
 * Snapshot sources (docs/decisions/0015-snapshots-are-full-images.md), like Databricks
 * `apply_changes_from_snapshot` / `create_auto_cdc_from_snapshot_flow`: each file is a full image
 * of the source at a version; new keys are inserted, changed keys get a new version, keys missing
 * from a snapshot are deleted, unchanged keys cost nothing (no change-feed rows). Snapshots apply
 * in version order; an older one is refused. Scenarios and expected targets written by hand, in the
 * manner of the Databricks documentation's snapshot examples (snapshot 1, 2, 3 with inserts,
 * updates and deletes by absence).
 */
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { applySourceWith, changesQuery, type Driver, defineFlow, type Flow, type FlowInput, readRows, readTargetWith, ScdError } from '../../src/index.js';
import { engines } from '../engines.js';
import { commitLog, expectAccounted, mkdir, plain, type Row, tempDir, writeNdjson } from './fixtures/util.js';

let tmp: { dir: string; cleanup: () => void };
beforeAll(() => {
  tmp = tempDir();
});
afterAll(() => tmp.cleanup());

const csv = (rows: Array<[number, string, string, string]>) => 'id,name,city,tier\n' + rows.map((r) => r.join(',')).join('\n') + '\n';

// Snapshot 1: three customers.
const SNAP_1 = csv([
  [1, 'Alice', 'NYC', 'gold'],
  [2, 'Bob', 'LA', 'silver'],
  [3, 'Carol', 'SF', 'bronze'],
]);
// Snapshot 2: Alice unchanged, Bob moved, Carol gone (deleted by absence), Dan new.
const SNAP_2 = csv([
  [1, 'Alice', 'NYC', 'gold'],
  [2, 'Bob', 'Boston', 'silver'],
  [4, 'Dan', 'Austin', 'gold'],
]);
// Snapshot 3: Alice upgraded, Bob unchanged, Carol back, Dan gone.
const SNAP_3 = csv([
  [2, 'Bob', 'Boston', 'silver'],
  [1, 'Alice', 'NYC', 'platinum'],
  [3, 'Carol', 'SF', 'bronze'],
]);

const row = (id: number, name: string, city: string, tier: string, start?: number, end?: number | null): Row =>
  start === undefined ? { id, name, city, tier } : { id, name, city, tier, __START_AT: start, __END_AT: end };

async function changeFeed(driver: Driver, flow: Flow, version: number): Promise<Row[]> {
  return plain(await readRows(driver, await changesQuery(driver, flow, version, version))).map(({ _commit_timestamp, _commit_version, ...r }) => r);
}

function folder(name: string, files: Record<string, string>): string {
  const dir = mkdir(tmp.dir, name);
  for (const [f, text] of Object.entries(files)) writeFileSync(path.join(dir, f), text);
  return dir;
}

for (const engine of engines) {
  describe(`snapshot sources on ${engine.name}`, () => {
    it('SCD2: inserts, updates, deletes by absence, a key that comes back; unchanged keys cost nothing', async () => {
      const dir = folder(`scd2-${engine.name}`, { 'snapshot_1.csv': SNAP_1 });
      const flow = defineFlow({ target: 'customers', keys: ['id'], source: { path: dir, mode: 'snapshot' } });
      const driver = await engine.open();
      try {
        const r1 = await applySourceWith(driver, flow);
        expect(r1.results.map((r) => r.version)).toEqual([1]);
        expect(plain(await readTargetWith(driver, flow))).toEqual([
          row(1, 'Alice', 'NYC', 'gold', 1, null),
          row(2, 'Bob', 'LA', 'silver', 1, null),
          row(3, 'Carol', 'SF', 'bronze', 1, null),
        ]);

        // Two snapshots land together: one commit each, in version order.
        writeFileSync(path.join(dir, 'snapshot_3.csv'), SNAP_3);
        writeFileSync(path.join(dir, 'snapshot_2.csv'), SNAP_2);
        const r = await applySourceWith(driver, flow);
        expect(r.results.map((c) => [c.version, path.basename(c.inputs[0]!)])).toEqual([
          [2, 'snapshot_2.csv'],
          [3, 'snapshot_3.csv'],
        ]);
        r.results.forEach(expectAccounted);
        // Commit 2 touched Bob (changed), Carol (deleted) and Dan (new); commit 3 Alice, Carol, Dan.
        expect(r.results.map((c) => c.keysChanged)).toEqual([3, 3]);

        expect(plain(await readTargetWith(driver, flow))).toEqual([
          row(1, 'Alice', 'NYC', 'gold', 1, 3),
          row(1, 'Alice', 'NYC', 'platinum', 3, null),
          row(2, 'Bob', 'LA', 'silver', 1, 2),
          row(2, 'Bob', 'Boston', 'silver', 2, null),
          row(3, 'Carol', 'SF', 'bronze', 1, 2),
          row(3, 'Carol', 'SF', 'bronze', 3, null),
          row(4, 'Dan', 'Austin', 'gold', 2, 3),
        ]);

        // Unchanged keys are not rewritten: no change-feed rows for Alice in commit 2, for Bob in 3.
        const feed2 = await changeFeed(driver, flow, 2);
        expect(feed2.filter((x) => x.id === 1)).toEqual([]);
        expect(feed2.map((x) => [x.id, x._change_type]).sort()).toEqual(
          [
            [2, 'update_preimage'],
            [2, 'update_postimage'],
            [2, 'insert'],
            [3, 'update_preimage'],
            [3, 'update_postimage'],
            [4, 'insert'],
          ].sort(),
        );
        const feed3 = await changeFeed(driver, flow, 3);
        expect(feed3.filter((x) => x.id === 2)).toEqual([]);
        expect(new Set(feed3.map((x) => x.id))).toEqual(new Set([1, 3, 4]));

        // An older snapshot than one applied is refused with a clear message; nothing applied.
        const target = await readTargetWith(driver, flow);
        writeFileSync(path.join(dir, 'snapshot_2_resent.csv'), SNAP_2);
        const err = await applySourceWith(driver, flow).then(
          () => undefined,
          (e: unknown) => e,
        );
        expect(err).toBeInstanceOf(ScdError);
        expect((err as ScdError).message).toMatch(/snapshot snapshot_2_resent\.csv \(version 2\) is not newer than the last applied snapshot \(version 3\); nothing was applied/);
        expect((await commitLog(driver, 'customers')).map((c) => c.version)).toEqual([1, 2, 3]);
        expect(await readTargetWith(driver, flow)).toEqual(target);
      } finally {
        await driver.close();
      }
    });

    it('SCD1: the same snapshots leave the final image; deleted keys are gone', async () => {
      const dir = folder(`scd1-${engine.name}`, { 'snapshot_1.csv': SNAP_1, 'snapshot_2.csv': SNAP_2 });
      const flow = defineFlow({ target: 'customers', keys: ['id'], storedAs: 'scd1', source: { path: dir, mode: 'snapshot' } });
      const driver = await engine.open();
      try {
        await applySourceWith(driver, flow);
        expect(plain(await readTargetWith(driver, flow))).toEqual([row(1, 'Alice', 'NYC', 'gold'), row(2, 'Bob', 'Boston', 'silver'), row(4, 'Dan', 'Austin', 'gold')]);
        writeFileSync(path.join(dir, 'snapshot_3.csv'), SNAP_3);
        const r3 = (await applySourceWith(driver, flow)).results;
        expect(r3).toHaveLength(1);
        expect(plain(await readTargetWith(driver, flow))).toEqual([row(1, 'Alice', 'NYC', 'platinum'), row(2, 'Bob', 'Boston', 'silver'), row(3, 'Carol', 'SF', 'bronze')]);
        // Bob was unchanged: the change feed of commit 3 has no row for him.
        const feed3 = await changeFeed(driver, flow, 3);
        expect(feed3.filter((x) => x.id === 2)).toEqual([]);
        expect(feed3.map((x) => [x.id, x._change_type]).sort()).toEqual(
          [
            [1, 'update_preimage'],
            [1, 'update_postimage'],
            [3, 'insert'],
            [4, 'delete'],
          ].sort(),
        );
      } finally {
        await driver.close();
      }
    });

    it('trackHistory: an untracked change updates the live version in place; a tracked one opens a version', async () => {
      const dir = folder(`track-${engine.name}`, {
        'snapshot_1.csv': csv([
          [1, 'Alice', 'NYC', 'gold'],
          [2, 'Bob', 'LA', 'silver'],
        ]),
        'snapshot_2.csv': csv([
          [1, 'Alice', 'NYC', 'platinum'], // tier is not tracked
          [2, 'Bob', 'Boston', 'silver'], // city is
        ]),
      });
      const flow = defineFlow({ target: 'customers', keys: ['id'], trackHistory: ['city'], source: { path: dir, mode: 'snapshot' } });
      const driver = await engine.open();
      try {
        await applySourceWith(driver, flow);
        expect(plain(await readTargetWith(driver, flow))).toEqual([
          row(1, 'Alice', 'NYC', 'platinum', 1, null),
          row(2, 'Bob', 'LA', 'silver', 1, 2),
          row(2, 'Bob', 'Boston', 'silver', 2, null),
        ]);
        // Alice's row was updated in place by commit 2: pre- and post-image of the same version.
        expect((await changeFeed(driver, flow, 2)).filter((x) => x.id === 1)).toEqual([
          { ...row(1, 'Alice', 'NYC', 'gold', 1, null), _change_type: 'update_preimage' },
          { ...row(1, 'Alice', 'NYC', 'platinum', 1, null), _change_type: 'update_postimage' },
        ]);
        writeFileSync(
          path.join(dir, 'snapshot_3.csv'),
          csv([[1, 'Alice', 'Denver', 'platinum']]), // Alice moves; Bob is gone
        );
        await applySourceWith(driver, flow);
        expect(plain(await readTargetWith(driver, flow))).toEqual([
          row(1, 'Alice', 'NYC', 'platinum', 1, 3),
          row(1, 'Alice', 'Denver', 'platinum', 3, null),
          row(2, 'Bob', 'LA', 'silver', 1, 2),
          row(2, 'Bob', 'Boston', 'silver', 2, 3),
        ]);
      } finally {
        await driver.close();
      }
    });

    it('versions from the file name are numbers: snapshot_9 applies before snapshot_10', async () => {
      const dir = folder(`numeric-${engine.name}`, {});
      writeNdjson(path.join(dir, 'snapshot_10.ndjson'), [{ id: 1, v: 'ten' }]);
      writeNdjson(path.join(dir, 'snapshot_9.ndjson'), [
        { id: 1, v: 'nine' },
        { id: 2, v: 'nine' },
      ]);
      const flow = defineFlow({ target: 'items', keys: ['id'], source: { path: dir, mode: 'snapshot' } });
      const driver = await engine.open();
      try {
        const r = await applySourceWith(driver, flow);
        expect(r.results.map((c) => path.basename(c.inputs[0]!))).toEqual(['snapshot_9.ndjson', 'snapshot_10.ndjson']);
        expect(plain(await readTargetWith(driver, flow))).toEqual([
          { id: 1, v: 'nine', __START_AT: 9, __END_AT: 10 },
          { id: 1, v: 'ten', __START_AT: 10, __END_AT: null },
          { id: 2, v: 'nine', __START_AT: 9, __END_AT: 10 },
        ]);
      } finally {
        await driver.close();
      }
    });

    it('a snapshot line that cannot be read never deletes its key by absence (SEMANTICS §6: no record is lost)', async () => {
      // The source never deleted key 2: its line in snapshot 2 is merely garbled. Quarantining the
      // line is fine, refusing the snapshot is fine; closing key 2 as deleted is not, and could not
      // be undone by re-feeding the fixed line (a re-fed snapshot file is a full image).
      const dir = folder(`garbled-${engine.name}`, {});
      writeNdjson(path.join(dir, 'snapshot_1.ndjson'), [
        { id: 1, v: 'a' },
        { id: 2, v: 'b' },
      ]);
      const flow = defineFlow({ target: 'items', keys: ['id'], source: { path: dir, mode: 'snapshot' } });
      const driver = await engine.open();
      try {
        await applySourceWith(driver, flow);
        writeFileSync(path.join(dir, 'snapshot_2.ndjson'), '{"id":1,"v":"a"}\n{"id":2,"v":"b"\n');
        const out = await applySourceWith(driver, flow).then(
          (r) => r,
          (e: unknown) => (e instanceof ScdError ? undefined : Promise.reject(e)),
        );
        out?.results.forEach(expectAccounted);
        expect(plain(await readTargetWith(driver, flow)).filter((x) => x.id === 2)).toEqual([{ id: 2, v: 'b', __START_AT: 1, __END_AT: null }]);
      } finally {
        await driver.close();
      }
    });

    it('versionColumn: the version is a column of the snapshot (a date); an older one is refused', async () => {
      const dir = folder(`column-${engine.name}`, {});
      const flowInput: FlowInput = { target: 'items', keys: ['id'], exceptColumns: ['as_of'], source: { path: dir, mode: 'snapshot', versionColumn: 'as_of' } };
      const flow = defineFlow(flowInput);
      writeNdjson(path.join(dir, 'export_a.ndjson'), [
        { as_of: '2024-01-01', id: 1, price: 10 },
        { as_of: '2024-01-01', id: 2, price: 20 },
      ]);
      writeNdjson(path.join(dir, 'export_b.ndjson'), [
        { as_of: '2024-02-01', id: 1, price: 10 },
        { as_of: '2024-02-01', id: 3, price: 30 },
      ]);
      const driver = await engine.open();
      try {
        const r = await applySourceWith(driver, flow);
        expect(r.results.map((c) => c.version)).toEqual([1, 2]);
        expect(plain(await readTargetWith(driver, flow))).toEqual([
          { id: 1, price: 10, __START_AT: '2024-01-01', __END_AT: null },
          { id: 2, price: 20, __START_AT: '2024-01-01', __END_AT: '2024-02-01' },
          { id: 3, price: 30, __START_AT: '2024-02-01', __END_AT: null },
        ]);
        expect((await changeFeed(driver, flow, 2)).filter((x) => x.id === 1)).toEqual([]);

        writeNdjson(path.join(dir, 'export_c.ndjson'), [{ as_of: '2024-01-15', id: 1, price: 11 }]);
        const err = await applySourceWith(driver, flow).then(
          () => undefined,
          (e: unknown) => e,
        );
        expect(err).toBeInstanceOf(ScdError);
        expect((err as ScdError).message).toMatch(/export_c\.ndjson \(version 2024-01-15\) is not newer than the last applied snapshot \(version 2024-02-01\)/);
        expect((await commitLog(driver, 'items')).length).toBe(2);
      } finally {
        await driver.close();
      }
    });
  });
}
