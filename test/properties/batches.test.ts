/** Property 2: any split into batches, applied in any order (one commit each), gives the model's target. */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { applyRows, defineFlow, readTargetWith } from '../../src/index.js';
import { engines } from '../engines.js';
import { describeScenario, fcParams, KINDS, PROPERTY_TIMEOUT_MS, scenarioArb } from './arbitraries.js';
import { Model } from './model.js';

for (const engine of engines) {
  describe(`${engine.name}: batch invariance`, () => {
    for (const kind of KINDS) {
      it(
        kind.name,
        async () => {
          await fc.assert(
            fc.asyncProperty(scenarioArb(kind), async (sc) => {
              const model = new Model(sc.spec);
              model.apply(sc.records);
              const driver = await engine.open();
              try {
                const flow = defineFlow(sc.flow);
                for (const b of sc.batches) {
                  const r = await applyRows(driver, flow, b);
                  expect(r.rowsRead).toBe(r.eventsApplied + r.duplicates + r.quarantined);
                }
                expect(await readTargetWith(driver, flow), describeScenario(sc)).toEqual(model.target());
              } finally {
                await driver.close();
              }
            }),
            fcParams(25),
          );
        },
        PROPERTY_TIMEOUT_MS,
      );
    }
  });
}
