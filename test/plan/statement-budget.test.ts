import { describe, expect, it } from 'vitest';
import { applyRows, defineFlow, type FlowInput, readTargetWith } from '../../src/index.js';
import { DIFF_VIEWS, WALKED } from '../../src/plan/diff-sql.js';
import { LOG_VIEW } from '../../src/plan/walk-input-sql.js';
import { TMP } from '../../src/store/names.js';
import { engines } from '../engines.js';
import { recordStatements } from './recorded-statements.js';

/**
 * A commit's fixed cost is its statements (docs/decisions/0063-a-commit-sends-few-statements.md): counted
 * here, deterministically, for a 10-event commit onto an existing target of 1,000 versions. Every
 * statement the driver sends through run, query and streamText is counted, staging included (a
 * PostgreSQL bulk load's COPY aside). The ceilings are today's counts: a change that adds
 * statements to the common commit fails here and must say why.
 */
const CEILING: Record<string, number> = { duckdb: 24, pglite: 25, postgres: 25 };

const flows: Record<string, FlowInput> = {
  scd2: { name: 'budget', target: 'dim', keys: ['id'], sequenceBy: 'ts', storedAs: 'scd2' },
  scd1: { name: 'budget', target: 'dim', keys: ['id'], sequenceBy: 'ts', storedAs: 'scd1' },
};

const base = Array.from({ length: 1000 }, (_, i) => ({ id: i, ts: 1, city: `c${i}` }));
/** Ten changes in order: each key's one new event comes after its last (the common batch). */
const inOrder = Array.from({ length: 10 }, (_, i) => ({ id: i * 7, ts: 2, city: `moved${i}` }));

for (const engine of engines) {
  describe(`statements of a commit (${engine.name})`, () => {
    for (const [kind, input] of Object.entries(flows)) {
      it(`${kind}: 10 events in order onto 1,000 versions take at most ${CEILING[engine.name]} statements, and the target is right`, async () => {
        const flow = defineFlow(input);
        const driver = await engine.open();
        try {
          await applyRows(driver, flow, base);
          const statements = recordStatements(driver);
          const result = await applyRows(driver, flow, inOrder);
          expect(result.eventsApplied).toBe(10);
          expect(statements.length).toBeLessThanOrEqual(CEILING[engine.name]!);
          const rows = await readTargetWith(driver, flow);
          expect(rows.length).toBe(kind === 'scd2' ? 1010 : 1000);
          expect(rows.filter((r) => String(r.city).startsWith('moved')).length).toBe(10);
        } finally {
          await driver.close();
        }
      });
    }

    it('a commit of 10 events takes as many statements as one of 1,000 (the fixed cost does not follow the batch)', async () => {
      const flow = defineFlow(flows.scd2!);
      const driver = await engine.open();
      try {
        await applyRows(driver, flow, base);
        const statements = recordStatements(driver);
        await applyRows(
          driver,
          flow,
          inOrder.map((e) => ({ ...e, ts: 3 })),
        );
        const smallCount = statements.length;
        statements.length = 0;
        await applyRows(
          driver,
          flow,
          base.map((e) => ({ ...e, ts: 4, city: `again${e.id}` })),
        );
        expect(statements.length).toBe(smallCount);
      } finally {
        await driver.close();
      }
    });

    it('no scratch table of a commit is left behind (a failed commit included)', async () => {
      const flow = defineFlow(flows.scd2!);
      const driver = await engine.open();
      try {
        await applyRows(driver, flow, base);
        await applyRows(driver, flow, inOrder);
        const bad = defineFlow({ ...flows.scd2!, expect: { positive: { sql: 'id < 0', action: 'fail' } } });
        await expect(applyRows(driver, bad, inOrder)).rejects.toThrow(/expectation "positive"/);
        for (const t of ['_scd_stage', '_scd_rejects', '_scd_batch', '_scd_keys', '_scd_new', '_scd_stored', '_scd_simple']) expect(await driver.columns(t), t).toBeUndefined();
      } finally {
        await driver.close();
      }
    });

    it('no scratch table or view of a commit that walks keys is left behind, nor of its staging', async () => {
      const flow = defineFlow(flows.scd2!);
      const driver = await engine.open();
      try {
        await applyRows(driver, flow, base);
        // Late events (before the keys' last) and new ones: walked keys beside simple ones.
        const result = await applyRows(driver, flow, [...inOrder, { id: 3, ts: 0, city: 'late' }, { id: 5, ts: 0, city: 'late' }]);
        expect(result.eventsApplied).toBe(12);
        const scratch = [...Object.values(TMP), ...Object.values(WALKED), LOG_VIEW, ...DIFF_VIEWS, '_scd_lines_0', '_scd_records_0', '_scd_part_0'];
        for (const t of scratch) expect(await driver.columns(t), t).toBeUndefined();
      } finally {
        await driver.close();
      }
    });
  });
}
