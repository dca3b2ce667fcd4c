import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { vi } from 'vitest';
import { applyRows, type Driver, defineFlow, type FlowInput } from '../../src/index.js';
import { recordStatements } from './recorded-statements.js';
import type { GoldenDialect } from './replay/replaying-driver.js';
import { statementText } from './replay/statement-text.js';

/**
 * The commit the golden SQL pins (golden-sql.test.ts), and whose engine answers the fixtures hold
 * (golden-fixtures.test.ts): a 10-event commit onto an existing target of 100 keys, for a handful
 * of flows.
 */
const here = path.dirname(fileURLToPath(import.meta.url));

export const goldenFlows: Record<string, FlowInput> = {
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

/**
 * The clock stands still here while a commit runs, recorded or replayed: the time a commit records
 * and its duration (parameters on DuckDB and PostgreSQL, literals on Spark) are the same each run.
 */
const FROZEN = new Date('2026-01-02T03:04:05.678Z');

/** The golden text of a flow's commit on `driver`: the statements of the batch, applied after the base. */
export async function goldenCommit(driver: Driver, input: FlowInput): Promise<string> {
  const flow = defineFlow(input);
  vi.useFakeTimers({ toFake: ['Date'], now: FROZEN });
  try {
    await applyRows(driver, flow, base);
    const statements = recordStatements(driver);
    await applyRows(driver, flow, batch);
    return statements.map(statementText).join(';\n') + ';\n';
  } finally {
    vi.useRealTimers();
  }
}

export const goldenFile = (dialect: GoldenDialect, flow: string) => path.join(here, 'golden', `${dialect}-${flow}.sql`);
export const fixtureFile = (dialect: GoldenDialect, flow: string) => path.join(here, 'fixtures', `${dialect}-${flow}.json`);
