/**
 * The SEMANTICS §3 properties on Spark + Delta, with few cases (every statement is a remote job of
 * a second or so): random streams split into batches, one commit each, against the reference model.
 * Per commit the counts are the model's; at the end the target is the model's (so any split gives
 * one target: batch invariance); the target as of each commit, read from Delta's time travel, is
 * the target as it was read right after that commit. SPARK_FC_RUNS raises the number of cases.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { applyRows, defineFlow, readRows, readTargetWith, versionQuery, type ApplyResult } from '../../src/index.js';
import { sparkEngine } from '../engines.js';
import { describeScenario, KINDS, scenarioArb } from './arbitraries.js';
import { Model } from './model.js';

const RUNS = Number(process.env.SPARK_FC_RUNS ?? 2);
const TIME_LIMIT_MS = 15 * 60_000;
const balanced = (r: ApplyResult) => r.rowsRead === r.eventsApplied + r.duplicates + r.quarantined;
const seed = process.env.FC_SEED === undefined ? {} : { seed: Number(process.env.FC_SEED), ...(process.env.FC_PATH ? { path: process.env.FC_PATH } : {}) };

describe.skipIf(!sparkEngine)('spark properties (SCD_TEST_SPARK_URL)', () => {
  for (const kind of KINDS.filter((k) => k.name === 'scd2' || k.name === 'scd1')) {
    it(
      `${kind.name}: every commit counted as the model counts it, the end the model's target, each commit's target by time travel`,
      async () => {
        await fc.assert(
          fc.asyncProperty(scenarioArb(kind), async (sc) => {
            const model = new Model(sc.spec);
            const driver = await sparkEngine!.open();
            try {
              const flow = defineFlow(sc.flow);
              const after: Array<Array<Record<string, unknown>>> = [];
              for (const [i, b] of sc.batches.entries()) {
                const want = model.apply(b);
                const r = await applyRows(driver, flow, b);
                const why = `${describeScenario(sc)}\ncommit ${i + 1}`;
                expect(balanced(r), `rows read = applied + duplicates + quarantined\n${why}`).toBe(true);
                const { rowsRead, eventsApplied, duplicates, quarantined, ties } = r;
                expect({ rowsRead, eventsApplied, duplicates, quarantined, ties }, why).toEqual(want);
                after.push(await readTargetWith(driver, flow));
              }
              expect(after.at(-1), describeScenario(sc)).toEqual(model.target());
              for (const [i, rows] of after.entries())
                expect(await readRows(driver, await versionQuery(driver, defineFlow(sc.flow), i + 1)), `time travel to commit ${i + 1}\n${describeScenario(sc)}`).toEqual(rows);
            } finally {
              await driver.close();
            }
          }),
          { numRuns: RUNS, skipAllAfterTimeLimit: TIME_LIMIT_MS, ...seed },
        );
      },
      TIME_LIMIT_MS + 10 * 60_000,
    );
  }
});
