/**
 * Property 4: for every commit, rows read = events applied + duplicates + quarantined (SPEC §5, §6),
 * and each count is the one the reference model expects (ties as DECISIONS.md counts them).
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { applyRows, defineFlow } from '../../src/index.js';
import { engines } from '../engines.js';
import { describeScenario, fcParams, KINDS, PROPERTY_TIMEOUT_MS, scenarioArb } from './arbitraries.js';
import { Model } from './model.js';

for (const engine of engines) {
  describe(`${engine.name}: accounting of every commit`, () => {
    for (const kind of KINDS) {
      it(
        kind.name,
        async () => {
          await fc.assert(
            fc.asyncProperty(scenarioArb(kind), async (sc) => {
              const model = new Model(sc.spec);
              const driver = await engine.open();
              try {
                const flow = defineFlow(sc.flow);
                for (const [i, b] of sc.batches.entries()) {
                  const want = model.apply(b);
                  const r = await applyRows(driver, flow, b);
                  const why = `${describeScenario(sc)}\ncommit ${i + 1}`;
                  expect(r.version, why).toBe(i + 1);
                  expect(r.rowsRead, why).toBe(r.eventsApplied + r.duplicates + r.quarantined);
                  expect(
                    { rowsRead: r.rowsRead, eventsApplied: r.eventsApplied, duplicates: r.duplicates, quarantined: r.quarantined, ties: r.ties },
                    why,
                  ).toEqual(want);
                }
              } finally {
                await driver.close();
              }
            }),
            fcParams(20),
          );
        },
        PROPERTY_TIMEOUT_MS,
      );
    }
  });
}
