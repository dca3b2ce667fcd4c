import { describe, expect, it } from 'vitest';
import { hasCapability, requireCapability } from '../../src/dialects/capabilities.js';
import { rowIdOf } from '../../src/dialects/dialect.js';
import { firstOfEachSql } from '../../src/dialects/first-of-each.js';
import { sparkDialect } from '../../src/dialects/spark/spark-dialect.js';
import { executorFor } from '../../src/execute/executor.js';
import { defineFlow } from '../../src/flow/load.js';
import { duckdbDialect, postgresDialect } from '../../src/index.js';
import { relogSelectSql } from '../../src/plan/events-sql.js';
import { stateChange } from '../../src/plan/key-state-sql.js';
import type { ColumnModel } from '../../src/plan/model.js';
import { validSql } from '../../src/plan/new-events-sql.js';
import { storeNames } from '../../src/store/names.js';

/**
 * What an engine can do is declared, flag by flag, on its dialect; a plan step that needs a
 * capability the dialect lacks fails naming the dialect and the capability, never with another
 * engine's SQL.
 */
const FLAGS = ['ignoreNullsInWindows', 'transactions', 'temporaryTables', 'rowIds', 'merge', 'distinctOn', 'changeFeed'] as const;

const model: ColumnModel = {
  source: [
    { name: 'id', type: 'BIGINT' },
    { name: 'ts', type: 'BIGINT' },
    { name: 'n', type: 'BIGINT' },
    { name: 'v', type: 'STRING' },
  ],
  keys: [{ name: 'id', type: 'BIGINT' }],
  seq: [
    { name: 'ts', type: 'BIGINT' },
    { name: 'n', type: 'BIGINT' },
  ],
  payload: [{ name: 'v', type: 'STRING' }],
  tracked: ['v'],
};

describe('dialect capabilities', () => {
  for (const d of [duckdbDialect, postgresDialect, sparkDialect])
    it(`${d.name} declares every capability as a flag`, () => {
      for (const f of FLAGS) expect(typeof d.capabilities[f], f).toBe('boolean');
    });

  it('the transactional engines have what their executor uses; Delta has no transactions, temporary tables or row ids', () => {
    for (const d of [duckdbDialect, postgresDialect]) expect(d.capabilities).toMatchObject({ transactions: true, temporaryTables: true, rowIds: true, distinctOn: true });
    expect(sparkDialect.capabilities).toMatchObject({ transactions: false, temporaryTables: false, rowIds: false, merge: true, distinctOn: false });
  });

  it('one row of each group: DISTINCT ON where the dialect has it, a numbering where not, refused by name where the numbering has no names', () => {
    const flow = defineFlow({ target: 'dim', keys: ['id'], sequenceBy: ['ts', 'n'] });
    expect(relogSelectSql(flow, model, duckdbDialect, 'a')).toMatch(/SELECT DISTINCT ON \(/);
    const spark = relogSelectSql(flow, model, sparkDialect, 'a');
    expect(spark).not.toMatch(/DISTINCT ON/);
    expect(spark).toMatch(/row_number\(\) OVER \(PARTITION BY e\.`id`, .* ORDER BY e\.`__scd_commit`\) AS `__scd_rn`/);
    const query = { columns: ['v.*'], from: 't v', partition: ['v.k'], order: ['v.s DESC'] };
    expect(firstOfEachSql(postgresDialect, query)).toBe('SELECT DISTINCT ON (v.k) v.* FROM t v ORDER BY v.k, v.s DESC');
    expect(() => firstOfEachSql(sparkDialect, query)).toThrow(/the spark dialect lacks distinctOn, and this query names no columns/);
  });

  it('a step that needs a capability or a hook the dialect lacks is refused naming the step, what it needs and the dialect', () => {
    const noMerge = { ...duckdbDialect, name: 'lakehouse', capabilities: { ...duckdbDialect.capabilities, merge: false } };
    expect(hasCapability(duckdbDialect, 'merge')).toBe(true);
    expect(hasCapability(noMerge, 'merge')).toBe(false);
    expect(() => requireCapability(noMerge, 'merge', 'the fold of a compaction')).toThrow('the fold of a compaction needs merge, which the lakehouse dialect lacks');
    // A hook: DuckDB keeps no table versions, Spark (Delta) does.
    expect(() => requireCapability(duckdbDialect, 'tableAtVersion', 'time travel')).toThrow('time travel needs tableAtVersion, which the duckdb dialect lacks');
    expect(() => requireCapability(sparkDialect, 'tableAtVersion', 'time travel')).not.toThrow();
  });

  it('a row id is never made up', () => {
    expect(() => sparkDialect.rowId).toThrow(/spark dialect has no row id/);
    expect(rowIdOf(sparkDialect, ['id'])).toBeUndefined();
  });

  it('where a dialect lacks DISTINCT ON, deduplication and the key state take another form; without row ids, the state is written by one MERGE', () => {
    expect(validSql(model, duckdbDialect).distinct).toMatch(/DISTINCT ON/);
    expect(validSql(model, sparkDialect).distinct).not.toMatch(/DISTINCT ON/);
    expect(validSql(model, sparkDialect).distinct).toMatch(/row_number\(\) OVER \(PARTITION BY/);
    const stateSql = (d: typeof sparkDialect) => executorFor(d).stateWrites(d, stateChange(model, d, storeNames('dim')));
    const spark = stateSql(sparkDialect);
    expect(spark).toHaveLength(1);
    expect(spark[0]).toMatch(/^MERGE INTO `_scd_dim_keys`/);
    expect(spark[0]).not.toMatch(/DISTINCT ON|rowid|ctid/);
    const duck = stateSql(duckdbDialect);
    expect(duck.map((s) => s.split(' ')[0])).toEqual(['DELETE', 'INSERT']);
  });
});
