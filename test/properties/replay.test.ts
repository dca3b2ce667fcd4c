/** Property 3: re-applying any batch afterwards changes nothing and records a commit with zero changes. */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { applyRows, defineFlow, readTargetWith } from '../../src/index.js';
import { engines } from '../engines.js';
import { describeScenario, fcParams, KINDS, PROPERTY_TIMEOUT_MS, scenarioArb } from './arbitraries.js';
import { Model } from './model.js';

for (const engine of engines) {
  describe(`${engine.name}: idempotent replay`, () => {
    for (const kind of KINDS) {
      it(
        kind.name,
        async () => {
          await fc.assert(
            fc.asyncProperty(scenarioArb(kind), fc.nat(), async (sc, which) => {
              const model = new Model(sc.spec);
              model.apply(sc.records);
              const expected = model.target();
              const driver = await engine.open();
              try {
                const flow = defineFlow(sc.flow);
                for (const b of sc.batches) await applyRows(driver, flow, b);
                const before = await readTargetWith(driver, flow);
                const again = sc.batches[which % sc.batches.length]!;
                const r = await applyRows(driver, flow, again);
                const after = await readTargetWith(driver, flow);
                const why = `${describeScenario(sc)}\nreplayed batch ${(which % sc.batches.length) + 1}`;
                expect(after, why).toEqual(before);
                expect(after, why).toEqual(expected);
                expect(r.version, why).toBe(sc.batches.length + 1);
                expect(
                  { eventsApplied: r.eventsApplied, rowsInserted: r.rowsInserted, rowsUpdated: r.rowsUpdated, rowsDeleted: r.rowsDeleted, versionsClosed: r.versionsClosed },
                  why,
                ).toEqual({ eventsApplied: 0, rowsInserted: 0, rowsUpdated: 0, rowsDeleted: 0, versionsClosed: 0 });
                expect(r.rowsRead, why).toBe(r.duplicates + r.quarantined);
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
