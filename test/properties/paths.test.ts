/**
 * The engine's paths agree: a key's rows come from the walk over its whole log (rebuild, every key
 * slow), from the walk starting at its live version (a fast key with several new events), or from
 * one join (a fast key with one new event, simple-diff-sql.ts `simpleDiffSql`). For random streams split
 * into random batches, with every output option (tombstones, surrogate key, is-current column, end
 * sentinel), the target built batch by batch equals the target `rebuild` derives from the log, and
 * the rebuild changes nothing: nor does it change the key state (each key's last event and whether
 * it is live), which the next apply decides its fast keys by. Half the rebuilds first forget the
 * ties the commits counted, so that the walk finds the log's ties itself.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { applyRows, type Driver, defineFlow, type FlowInput, readTargetWith, rebuild } from '../../src/index.js';
import { storeNames } from '../../src/store/names.js';
import { engines } from '../engines.js';
import { describeScenario, fcParams, KINDS, PROPERTY_TIMEOUT_MS, scenarioArb } from './arbitraries.js';

/** The key state's rows, as sorted JSON texts (engine values made comparable). */
async function keyState(driver: Driver, target: string): Promise<string[]> {
  const rows = await driver.query(`SELECT * FROM ${driver.dialect.quote(storeNames(target).state)}`);
  const plain = (v: unknown) => (typeof v === 'bigint' ? Number(v) : v instanceof Date ? v.toISOString() : v);
  return rows.map((r) => JSON.stringify(Object.entries(r).map(([k, v]) => [k, plain(v)]))).sort();
}

const optionsArb = fc.record({
  tombstone: fc.boolean(),
  surrogate: fc.boolean(),
  isCurrent: fc.boolean(),
  sentinel: fc.boolean(),
  // Forget the ties the commits counted: the rebuild's walk must find the log's ties itself.
  forgetTies: fc.boolean(),
});

for (const engine of engines) {
  describe(`${engine.name}: batch by batch = rebuilt from the log`, () => {
    for (const kind of KINDS) {
      it(
        `${kind.name}, with output options`,
        async () => {
          await fc.assert(
            fc.asyncProperty(scenarioArb(kind), optionsArb, async (sc, o) => {
              const scd2 = kind.storedAs === 'scd2';
              const tuple = Array.isArray(sc.flow.sequenceBy) && sc.flow.sequenceBy.length > 1;
              const input: FlowInput = {
                ...sc.flow,
                ...(scd2 && o.tombstone && sc.flow.applyAsDeletes ? { deletes: 'tombstone' as const } : {}),
                ...(o.surrogate ? { surrogateKey: 'sk' } : {}),
                ...(scd2 && o.isCurrent ? { isCurrentColumn: 'is_current' } : {}),
                ...(scd2 && o.sentinel && !tuple ? { endSentinel: 999999 } : {}),
              };
              const flow = defineFlow(input);
              const driver = await engine.open();
              try {
                for (const b of sc.batches) await applyRows(driver, flow, b);
                const built = await readTargetWith(driver, flow);
                const state = await keyState(driver, flow.target);
                if (o.forgetTies) await driver.run(`UPDATE ${driver.dialect.quote(storeNames(flow.target).commits)} SET ties = 0`);
                const r = await rebuild(driver, flow);
                const why = `${JSON.stringify(input)}\n${describeScenario(sc)}`;
                expect(await readTargetWith(driver, flow), why).toEqual(built);
                expect(await keyState(driver, flow.target), `key state\n${why}`).toEqual(state);
                expect(r.versionsAdded + r.versionsChanged + r.versionsRemoved, why).toBe(0);
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
