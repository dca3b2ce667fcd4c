/**
 * The SEMANTICS §3 properties, on every engine, for scd2 and scd1 (each with single and tuple
 * sequences), against the reference model in ./model.ts:
 *
 * 1. equality: the whole stream applied as one batch gives exactly the model's target;
 * 2. batch invariance: any split into batches, applied in any order, gives the model's target;
 * 3. idempotent replay: re-applying any batch afterwards changes nothing and reports no change;
 * 4. accounting: every commit reads rows = events applied + duplicates + quarantined, and each
 *    count is the model's (ties as docs/decisions/0003 counts them); and the change feed replayed up to
 *    any commit (time travel, SEMANTICS §5) gives the target exactly as it stood after that commit.
 *
 * One file, so each engine starts once (PGlite takes seconds). Runs are few by default (the suite
 * must stay fast); FC_RUNS=10 FC_TIME_LIMIT_MS=900000 runs ten times as many.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { type ApplyResult, applyRows, defineFlow, readRows, readTargetWith, versionQuery } from '../../src/index.js';
import { engines, type TestEngine } from '../engines.js';
import { describeScenario, fcParams, KINDS, PROPERTY_TIMEOUT_MS, type Scenario, scenarioArb } from './arbitraries.js';
import { Model } from './model.js';

const RUNS = { equality: 20, batches: 12, replay: 10, accounting: 10 };

/** Open a fresh database, run fn on it with the scenario's flow, close it. */
async function withEngine<T>(engine: TestEngine, sc: Scenario, fn: (run: Runner) => Promise<T>): Promise<T> {
  const driver = await engine.open();
  try {
    const flow = defineFlow(sc.flow);
    return await fn({
      apply: (rows) => applyRows(driver, flow, rows),
      read: () => readTargetWith(driver, flow),
      readVersion: async (n) => readRows(driver, await versionQuery(driver, flow, n)),
    });
  } finally {
    await driver.close();
  }
}
interface Runner {
  apply(rows: Array<Record<string, unknown>>): Promise<ApplyResult>;
  read(): Promise<Array<Record<string, unknown>>>;
  /** The target as of commit n, from the change feed. */
  readVersion(n: number): Promise<Array<Record<string, unknown>>>;
}

const balanced = (r: ApplyResult) => r.rowsRead === r.eventsApplied + r.duplicates + r.quarantined;

for (const engine of engines) {
  describe(`${engine.name} properties`, () => {
    for (const kind of KINDS) {
      it(
        `${kind.name}: one batch = the reference model`,
        async () => {
          await fc.assert(
            fc.asyncProperty(scenarioArb(kind), async (sc) => {
              const model = new Model(sc.spec);
              const counts = model.apply(sc.records);
              await withEngine(engine, sc, async (db) => {
                const r = await db.apply(sc.records);
                expect(await db.read(), describeScenario(sc)).toEqual(model.target());
                expect(balanced(r), `rows read = applied + duplicates + quarantined\n${describeScenario(sc)}`).toBe(true);
                expect(r.rowsRead).toBe(counts.rowsRead);
              });
            }),
            fcParams(RUNS.equality, engine.name),
          );
        },
        PROPERTY_TIMEOUT_MS,
      );

      it(
        `${kind.name}: batch invariance (any split, any order)`,
        async () => {
          await fc.assert(
            fc.asyncProperty(scenarioArb(kind), async (sc) => {
              const model = new Model(sc.spec);
              model.apply(sc.records);
              await withEngine(engine, sc, async (db) => {
                for (const b of sc.batches) {
                  const r = await db.apply(b);
                  expect(balanced(r), `rows read = applied + duplicates + quarantined\n${describeScenario(sc)}`).toBe(true);
                }
                expect(await db.read(), describeScenario(sc)).toEqual(model.target());
              });
            }),
            fcParams(RUNS.batches, engine.name),
          );
        },
        PROPERTY_TIMEOUT_MS,
      );

      it(
        `${kind.name}: idempotent replay of any batch`,
        async () => {
          await fc.assert(
            fc.asyncProperty(scenarioArb(kind), fc.nat(), async (sc, which) => {
              const model = new Model(sc.spec);
              model.apply(sc.records);
              const expected = model.target();
              await withEngine(engine, sc, async (db) => {
                for (const b of sc.batches) await db.apply(b);
                const before = await db.read();
                const i = which % sc.batches.length;
                const r = await db.apply(sc.batches[i]!);
                const after = await db.read();
                const why = `${describeScenario(sc)}\nreplayed batch ${i + 1}`;
                expect(after, why).toEqual(before);
                expect(after, why).toEqual(expected);
                expect(r.version, why).toBe(sc.batches.length + 1);
                const { eventsApplied, versionsAdded, versionsChanged, versionsRemoved, versionsClosed } = r;
                expect({ eventsApplied, versionsAdded, versionsChanged, versionsRemoved, versionsClosed }, why).toEqual({
                  eventsApplied: 0,
                  versionsAdded: 0,
                  versionsChanged: 0,
                  versionsRemoved: 0,
                  versionsClosed: 0,
                });
                expect(r.rowsRead, why).toBe(r.duplicates + r.quarantined);
              });
            }),
            fcParams<[Scenario, number]>(RUNS.replay, engine.name),
          );
        },
        PROPERTY_TIMEOUT_MS,
      );

      it(
        `${kind.name}: accounting of every commit`,
        async () => {
          await fc.assert(
            fc.asyncProperty(scenarioArb(kind), async (sc) => {
              const model = new Model(sc.spec);
              await withEngine(engine, sc, async (db) => {
                const after: Array<Array<Record<string, unknown>>> = [];
                for (const [i, b] of sc.batches.entries()) {
                  const want = model.apply(b);
                  const r = await db.apply(b);
                  const why = `${describeScenario(sc)}\ncommit ${i + 1}`;
                  expect(r.version, why).toBe(i + 1);
                  expect(balanced(r), `rows read = applied + duplicates + quarantined\n${why}`).toBe(true);
                  const { rowsRead, eventsApplied, duplicates, quarantined, ties } = r;
                  expect({ rowsRead, eventsApplied, duplicates, quarantined, ties }, why).toEqual(want);
                  after.push(await db.read());
                }
                for (const [i, rows] of after.entries()) expect(await db.readVersion(i + 1), `time travel to commit ${i + 1}\n${describeScenario(sc)}`).toEqual(rows);
              });
            }),
            fcParams(RUNS.accounting, engine.name),
          );
        },
        PROPERTY_TIMEOUT_MS,
      );
    }
  });
}
