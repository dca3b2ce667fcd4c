/** Property 1: one batch with the whole stream gives exactly the reference model's target. */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { applyRows, defineFlow, readTargetWith } from '../../src/index.js';
import { engines } from '../engines.js';
import { describeScenario, fcParams, KINDS, PROPERTY_TIMEOUT_MS, scenarioArb } from './arbitraries.js';
import { Model } from './model.js';

for (const engine of engines) {
  describe(`${engine.name}: target = reference model (one batch)`, () => {
    for (const kind of KINDS) {
      it(
        kind.name,
        async () => {
          await fc.assert(
            fc.asyncProperty(scenarioArb(kind), async (sc) => {
              const model = new Model(sc.spec);
              const counts = model.apply(sc.records);
              const driver = await engine.open();
              try {
                const flow = defineFlow(sc.flow);
                const result = await applyRows(driver, flow, sc.records);
                const rows = await readTargetWith(driver, flow);
                expect(rows, describeScenario(sc)).toEqual(model.target());
                expect(result.rowsRead).toBe(result.eventsApplied + result.duplicates + result.quarantined);
                expect(result.rowsRead).toBe(counts.rowsRead);
              } finally {
                await driver.close();
              }
            }),
            fcParams(40),
          );
        },
        PROPERTY_TIMEOUT_MS,
      );
    }
  });
}
