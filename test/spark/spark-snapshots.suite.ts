/**
 * Snapshot sources on Spark + Delta (test/sources/snapshots.test.ts on the local engines): each
 * file a full image at a version; on Spark the staged snapshot is made anew (a scratch view cannot
 * change in place), compared with the live rows as they stood when the commit began. The same
 * folders give DuckDB's targets, counts and change feeds; an older snapshot is refused.
 */
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type ApplyResult, applySourceWith, changesQuery, type Driver, defineFlow, type Flow, readRows, readTargetWith, ScdError } from '../../src/index.js';
import { engines, sparkEngine } from '../engines.js';
import { expectAccounted, mkdir, plain, tempDir, writeNdjson } from '../sources/fixtures/util.js';

const csv = (rows: Array<[number, string, string, string]>) => 'id,name,city,tier\n' + rows.map((r) => r.join(',')).join('\n') + '\n';
const SNAPSHOTS = [
  csv([
    [1, 'Alice', 'NYC', 'gold'],
    [2, 'Bob', 'LA', 'silver'],
    [3, 'Carol', 'SF', 'bronze'],
  ]),
  // Alice unchanged, Bob moved, Carol gone (deleted by absence), Dan new.
  csv([
    [1, 'Alice', 'NYC', 'gold'],
    [2, 'Bob', 'Boston', 'silver'],
    [4, 'Dan', 'Austin', 'gold'],
  ]),
  // Alice upgraded, Bob unchanged, Carol back, Dan gone.
  csv([
    [2, 'Bob', 'Boston', 'silver'],
    [1, 'Alice', 'NYC', 'platinum'],
    [3, 'Carol', 'SF', 'bronze'],
  ]),
];

const counts = (r: ApplyResult) => {
  const { version, rowsRead, quarantined, eventsApplied, duplicates, keysChanged, versionsAdded, versionsClosed } = r;
  return { version, rowsRead, quarantined, eventsApplied, duplicates, keysChanged, versionsAdded, versionsClosed };
};
/** Rows as JSON text, numbers whatever the engine's integer type. */
const same = (rows: Array<Record<string, unknown>>) => plain(rows).map((r) => JSON.stringify(r));

describe.skipIf(!sparkEngine)('snapshot sources on Spark + Delta (SCD_TEST_SPARK_URL)', { timeout: 900_000 }, () => {
  let tmp: { dir: string; cleanup: () => void };
  let spark: Driver;
  let duck: Driver;
  beforeAll(async () => {
    tmp = tempDir();
    spark = await sparkEngine!.open();
    duck = await engines.find((e) => e.name === 'duckdb')!.open();
  }, 300_000);
  afterAll(async () => {
    await spark?.close();
    await duck?.close();
    tmp?.cleanup();
  });

  async function changeFeed(driver: Driver, flow: Flow, version: number) {
    const rows = await readRows(driver, await changesQuery(driver, flow, version, version));
    return same(rows.map(({ _commit_timestamp, _commit_version, ...r }) => r)).sort();
  }

  for (const storedAs of ['scd2', 'scd1'] as const)
    it(`${storedAs}: three snapshots one commit each give DuckDB's target, counts and change feed`, async () => {
      const dir = mkdir(tmp.dir, `three-${storedAs}`);
      SNAPSHOTS.forEach((text, i) => {
        writeFileSync(path.join(dir, `snapshot_${i + 1}.csv`), text);
      });
      const flow = defineFlow({ target: `customers_${storedAs}`, keys: ['id'], storedAs, source: { path: dir, mode: 'snapshot' } });
      const onSpark = (await applySourceWith(spark, flow)).results;
      const onDuck = (await applySourceWith(duck, flow)).results;
      onSpark.forEach(expectAccounted);
      expect(onSpark.map(counts)).toEqual(onDuck.map(counts));
      // Snapshot 2: Alice unchanged (a duplicate), Carol deleted by absence, Bob and Dan new events.
      expect(onSpark[1]).toMatchObject({ version: 2, duplicates: 1, eventsApplied: 3 });
      expect(same(await readTargetWith(spark, flow))).toEqual(same(await readTargetWith(duck, flow)));
      for (const v of [2, 3]) expect(await changeFeed(spark, flow, v)).toEqual(await changeFeed(duck, flow, v));
    });

  it('versionColumn: the version is a column of the snapshot; an older snapshot is refused and nothing changes', async () => {
    const dir = mkdir(tmp.dir, 'column');
    const flow = defineFlow({ target: 'items', keys: ['id'], exceptColumns: ['as_of'], source: { path: dir, mode: 'snapshot', versionColumn: 'as_of' } });
    writeNdjson(path.join(dir, 'export_a.ndjson'), [
      { as_of: '2024-01-01', id: 1, price: 10 },
      { as_of: '2024-01-01', id: 2, price: 20 },
    ]);
    writeNdjson(path.join(dir, 'export_b.ndjson'), [
      { as_of: '2024-02-01', id: 1, price: 10 },
      { as_of: '2024-02-01', id: 3, price: 30 },
    ]);
    expect((await applySourceWith(spark, flow)).results.map((c) => c.version)).toEqual([1, 2]);
    expect(plain(await readTargetWith(spark, flow))).toEqual([
      { id: 1, price: 10, __START_AT: '2024-01-01', __END_AT: null },
      { id: 2, price: 20, __START_AT: '2024-01-01', __END_AT: '2024-02-01' },
      { id: 3, price: 30, __START_AT: '2024-02-01', __END_AT: null },
    ]);
    writeNdjson(path.join(dir, 'export_c.ndjson'), [{ as_of: '2024-01-15', id: 1, price: 11 }]);
    const err = await applySourceWith(spark, flow).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(ScdError);
    expect((err as ScdError).message).toMatch(/export_c\.ndjson \(version 2024-01-15\) is not newer than the last applied snapshot \(version 2024-02-01\)/);
    expect(plain(await readTargetWith(spark, flow))).toHaveLength(3);
  });
});
