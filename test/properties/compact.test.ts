/**
 * Compaction (docs/decisions/0014-compaction-folds-events-before-a-watermark.md): folding the
 * events older than T changes nothing — the target, a rebuild after it, and the result of later
 * events at or after T are those of the full event set; later events older than T are quarantined,
 * never applied wrongly.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { applyRows, compact, defineFlow, readTargetWith, rebuild } from '../../src/index.js';
import { engines } from '../engines.js';
import { describeScenario, fcParams, KINDS, PROPERTY_TIMEOUT_MS, scenarioArb } from './arbitraries.js';
import { Model } from './model.js';

for (const engine of engines) {
  describe(`${engine.name}: compaction`, () => {
    for (const kind of KINDS) {
      it(
        kind.name,
        async () => {
          await fc.assert(
            fc.asyncProperty(scenarioArb(kind), fc.integer({ min: 1, max: 8 }), async (sc, T) => {
              const half = Math.max(1, Math.floor(sc.batches.length / 2));
              const early = sc.batches.slice(0, half);
              const late = sc.batches.slice(half).flat();
              const driver = await engine.open();
              try {
                const flow = defineFlow(sc.flow);
                for (const b of early) await applyRows(driver, flow, b);
                const before = await readTargetWith(driver, flow);
                await compact(driver, flow, String(T));
                expect(await readTargetWith(driver, flow)).toEqual(before);
                await rebuild(driver, flow);
                expect(await readTargetWith(driver, flow), `rebuild after compact\n${describeScenario(sc)}`).toEqual(before);
                if (late.length) {
                  const r = await applyRows(driver, flow, late);
                  const tooOld = late.filter((x) => typeof x.seq === 'number' && x.seq < T).length;
                  expect(r.quarantined).toBeGreaterThanOrEqual(tooOld);
                }
                // The model receives everything except what the watermark refuses.
                const model = new Model(sc.spec);
                for (const b of early) model.apply(b);
                model.apply(late.filter((x) => !(typeof x.seq === 'number' && x.seq < T)));
                expect(await readTargetWith(driver, flow), `T=${T}\n${describeScenario(sc)}`).toEqual(model.target());
              } finally {
                await driver.close();
              }
            }),
            fcParams(20, engine.name),
          );
        },
        PROPERTY_TIMEOUT_MS,
      );
    }
  });
}
