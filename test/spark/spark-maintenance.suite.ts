/**
 * Delta tables are kept by their owners: `OPTIMIZE` compacts a table's small files (Databricks'
 * predictive optimization runs it on its own, at any time). Such a commit carries no scdkit label
 * and changes no row. Between two scdkit commits it must change nothing scdkit reads (the target,
 * the change feed, time travel, the commit log); after an interrupted scdkit commit it must not
 * hide that commit's writes from the next apply, which undoes and redoes it
 * (docs/decisions/0074-delta-commits-scdkit-did-not-make.md).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SparkDriver } from '../../src/dialects/spark/spark-driver.js';
import { applyRows, changesQuery, type Driver, defineFlow, type Flow, readCommitLog, readRows, readTargetWith, versionQuery } from '../../src/index.js';
import { storeNames } from '../../src/store/names.js';
import { engines, sparkEngine } from '../engines.js';
import { base, batch, sorted } from './crash-batches.js';
import { failsAfterWrite } from './fail-after-write.js';

const flow = defineFlow({ target: 'dim_kept', keys: 'id', sequenceBy: 'seq', applyAsDeletes: "op = 'D'", exceptColumns: ['op'] });

/**
 * OPTIMIZE every table of the flow's target from `keeper`, a session of its own (as a person's job
 * or Databricks' predictive optimization would: no scdkit label); the number of tables that got an
 * OPTIMIZE commit.
 */
async function optimizeAll(keeper: Driver, f: Flow): Promise<number> {
  const names = storeNames(f.target);
  let compacted = 0;
  for (const table of [names.target, names.events, names.quarantine, names.state]) {
    if (!(await keeper.columns(table))) continue;
    await keeper.run(`OPTIMIZE ${keeper.dialect.quote(table)}`);
    const latest = await keeper.query(`DESCRIBE HISTORY ${keeper.dialect.quote(table)} LIMIT 1`);
    if (latest[0]?.operation === 'OPTIMIZE') compacted++;
    if (latest[0]?.operation === 'OPTIMIZE' && latest[0]?.userMetadata !== null) throw new Error(`the OPTIMIZE of ${table} carries a label: ${String(latest[0]?.userMetadata)}`);
  }
  return compacted;
}

describe.skipIf(!sparkEngine)('Delta commits scdkit did not make: OPTIMIZE between commits, and after an interrupted one (SCD_TEST_SPARK_URL)', { timeout: 1_800_000 }, () => {
  let spark: Driver;
  let keeper: Driver;
  let duck: Driver;
  const compactedBetween: number[] = [];
  const failedAfter: string[] = [];
  beforeAll(async () => {
    spark = await sparkEngine!.open();
    keeper = await SparkDriver.connect(process.env.SCD_TEST_SPARK_URL!, { schema: spark.location.split('/').at(-1)! });
    duck = await engines.find((e) => e.name === 'duckdb')!.open();
    for (const rows of [base, batch(1)]) {
      await applyRows(spark, flow, rows);
      await applyRows(duck, flow, rows);
    }
    // Between two commits: every table compacted, then the next commit.
    compactedBetween.push(await optimizeAll(keeper, flow));
    await applyRows(spark, flow, batch(2));
    await applyRows(duck, flow, batch(2));
    // After an interrupted commit: attempt k fails right after its k-th write, then every table
    // is compacted, then the next attempt; until an attempt has no k-th write.
    await applyRows(duck, flow, batch(3));
    for (let k = 1; ; k++) {
      const before = (await readCommitLog(spark, flow)).length;
      const failed = await failsAfterWrite(spark, k, () => applyRows(spark, flow, batch(3)));
      if (!failed) break;
      failedAfter.push(failed.split(/\s+/).slice(0, 3).join(' '));
      // A failure after the commit record leaves a whole commit: the next attempt is a replay.
      if ((await readCommitLog(spark, flow)).length > before) await applyRows(duck, flow, batch(3));
      compactedBetween.push(await optimizeAll(keeper, flow));
    }
  }, 1_800_000);
  afterAll(async () => {
    await keeper?.close();
    await spark?.close();
    await duck?.close();
  });

  it('the OPTIMIZEs made commits of their own, and every write of a commit was failed after', () => {
    console.log(`spark maintenance: failed after ${failedAfter.join(' | ')}; tables compacted each time: ${compactedBetween.join(', ')}`);
    expect(compactedBetween[0]).toBeGreaterThan(0);
    expect(failedAfter.length).toBeGreaterThanOrEqual(5);
    expect(compactedBetween.slice(1).some((n) => n > 0)).toBe(true);
  });

  it('the target, its change feed and the commit log are those DuckDB builds without them', async () => {
    expect(sorted(await readTargetWith(spark, flow))).toEqual(sorted(await readTargetWith(duck, flow)));
    const changes = async (d: Driver) => (await readRows(d, await changesQuery(d, flow, 1))).map(({ _commit_timestamp, ...r }) => r);
    expect(sorted(await changes(spark))).toEqual(sorted(await changes(duck)));
    const log = async (d: Driver) => (await readCommitLog(d, flow)).map((c) => [c.version, c.eventsApplied, c.quarantined]);
    expect(await log(spark)).toEqual(await log(duck));
  });

  it("each commit's target by time travel is DuckDB's", async () => {
    const versions = (await readCommitLog(duck, flow)).map((c) => c.version);
    expect(versions.length).toBeGreaterThanOrEqual(4);
    for (const v of versions) {
      expect(sorted(await readRows(spark, await versionQuery(spark, flow, v))), `version ${v}`).toEqual(sorted(await readRows(duck, await versionQuery(duck, flow, v))));
    }
  });

  it('every event logged once, every bad record quarantined once', async () => {
    const names = storeNames(flow.target);
    const count = async (d: Driver, table: string) => Number((await d.query(`SELECT count(*) AS n FROM ${d.dialect.quote(table)}`))[0]!.n);
    expect(await count(spark, names.events)).toBe(await count(duck, names.events));
    expect(await count(spark, names.quarantine)).toBe(await count(duck, names.quarantine));
  });
});
