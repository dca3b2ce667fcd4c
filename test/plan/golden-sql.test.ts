import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { applyRows, defineFlow, type FlowInput } from '../../src/index.js';
import { engines } from '../engines.js';
import { recordStatements } from './recorded-statements.js';

/**
 * Golden SQL: the statements of a 10-event commit onto an existing target, as each dialect writes
 * them, for a handful of flows. A change to the SQL a commit sends shows here, in review, as a diff
 * of test/plan/golden/<dialect>-<flow>.sql. `UPDATE_GOLDEN=1 npx vitest run test/plan/golden-sql.test.ts`
 * writes them anew. (pglite and the PostgreSQL server share the postgres dialect's file.)
 */
const here = path.dirname(fileURLToPath(import.meta.url));

const flows: Record<string, FlowInput> = {
  scd2: { name: 'golden', target: 'dim', keys: ['id'], sequenceBy: 'ts', storedAs: 'scd2' },
  scd1: { name: 'golden', target: 'dim', keys: ['id'], sequenceBy: 'ts', storedAs: 'scd1' },
  tracked: { name: 'golden', target: 'dim', keys: ['id'], sequenceBy: 'ts', trackHistory: ['city'] },
  ignoreNulls: { name: 'golden', target: 'dim', keys: ['id'], sequenceBy: 'ts', ignoreNullUpdates: true },
  tuple: { name: 'golden', target: 'dim', keys: ['id'], sequenceBy: ['ts', 'n'] },
  tombstones: { name: 'golden', target: 'dim', keys: ['id'], sequenceBy: 'ts', applyAsDeletes: "op = 'D'", exceptColumns: ['op'], deletes: 'tombstone' },
};

const base = Array.from({ length: 100 }, (_, i) => ({ id: i, ts: 10, n: 0, city: `c${i}`, tier: 'a', op: 'U' }));
/** Ten events: in order, one late, one delete, one repeated, one with a null city. */
const batch = [
  ...Array.from({ length: 6 }, (_, i) => ({ id: i * 3, ts: 20, n: 1, city: `moved${i}`, tier: 'b', op: 'U' })),
  { id: 40, ts: 5, n: 1, city: 'late', tier: 'a', op: 'U' },
  { id: 41, ts: 20, n: 1, city: 'c41', tier: 'a', op: 'D' },
  { id: 42, ts: 20, n: 1, city: 'c42', tier: 'a', op: 'U' },
  { id: 43, ts: 20, n: 1, city: null, tier: 'c', op: 'U' },
];

for (const engine of engines.filter((e) => e.name !== 'postgres')) {
  const dialect = engine.name === 'duckdb' ? 'duckdb' : 'postgres';
  describe(`golden SQL of a commit (${dialect})`, () => {
    for (const [name, input] of Object.entries(flows)) {
      it(`${name}: the statements of a 10-event commit are the golden ones`, async () => {
        const flow = defineFlow(input);
        const driver = await engine.open();
        try {
          await applyRows(driver, flow, base);
          const statements = recordStatements(driver);
          await applyRows(driver, flow, batch);
          const text = statements.map((sql) => sql.replace(/\s+/g, ' ').trim()).join(';\n') + ';\n';
          const file = path.join(here, 'golden', `${dialect}-${name}.sql`);
          if (process.env.UPDATE_GOLDEN) writeFileSync(file, text);
          expect(text).toBe(readFileSync(file, 'utf8'));
        } finally {
          await driver.close();
        }
      });
    }
  });
}
