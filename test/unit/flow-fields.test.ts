/**
 * Flow fields as a flow file and defineFlow take them: "did you mean" for Databricks and dbt
 * names, defineFlow's headline, previousValues and sequenceBy { processingTime: true }
 * (through the CLI: test/e2e/flow-fields-cli.test.ts).
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { applyRows, defineFlow, type FlowInput, loadFlowFile, openDriver, ScdError } from '../../src/index.js';
import { tempDir } from '../helpers.js';

let tmp: { dir: string; cleanup: () => void };
let n = 0;
beforeAll(() => {
  tmp = tempDir('scdkit-flow-fields-');
});
afterAll(() => tmp.cleanup());

function errorOf(fn: () => unknown): ScdError {
  try {
    fn();
  } catch (e) {
    expect(e).toBeInstanceOf(ScdError);
    return e as ScdError;
  }
  throw new Error('expected an ScdError, got none');
}

function loadText(text: string): () => unknown {
  const dir = path.join(tmp.dir, `f${++n}`);
  mkdirSync(dir);
  const file = path.join(dir, 'flow.yaml');
  writeFileSync(file, text);
  return () => loadFlowFile(file);
}

const BASE = { target: 't', keys: ['id'], sequenceBy: 'ts' };
const define = (extra: Record<string, unknown>) => () => defineFlow({ ...BASE, ...extra } as FlowInput);

describe('Databricks and dbt names get "did you mean" the flow field', () => {
  const cases: Array<[string, unknown, string]> = [
    ['stored_as_scd_type', 2, 'storedAs'],
    ['track_history_column_list', ['city'], 'trackHistory'],
    ['track_history_except_column_list', ['city'], 'trackHistoryExcept'],
    ['except_column_list', ['op'], 'exceptColumns'],
    ['column_list', ['city'], 'columns'],
    ['apply_as_deletes', "op = 'D'", 'applyAsDeletes'],
    ['apply_as_truncates', "op = 'T'", 'applyAsTruncates'],
    ['ignore_null_updates', true, 'ignoreNullUpdates'],
    ['unique_key', 'id', 'keys'],
    ['check_cols', ['city'], 'trackHistory'],
    ['dbt_valid_to_current', '9999-12-31', 'endSentinel'],
    ['hard_deletes', 'new_record', 'deletes'],
    ['target_schema', 'analytics', 'schema'],
    ['flow_name', 'customers', 'name'],
    ['ignore_null_updates_column_list', ['city'], 'ignoreNullUpdates'],
    ['ignore_null_updates_except_column_list', ['city'], 'ignoreNullUpdates'],
    ['target_database', 'analytics', 'database'],
  ];
  for (const [name, value, field] of cases) {
    it(`${name} → ${field}, in a flow file and in defineFlow alike`, () => {
      const fromDefine = errorOf(define({ [name]: value }));
      expect(fromDefine.field).toBe(name);
      expect(fromDefine.fix).toContain(`did you mean "${field}"?`);
      expect(fromDefine.fix).toContain(name);
      const yaml = `target: t\nkeys: [id]\nsequenceBy: ts\n${name}: ${JSON.stringify(value)}\n`;
      const fromFile = errorOf(loadText(yaml));
      expect([fromFile.code, fromFile.field, fromFile.problem, fromFile.fix]).toEqual([fromDefine.code, fromDefine.field, fromDefine.problem, fromDefine.fix]);
    });
  }

  it("says how to write it (Databricks' SCD type number is storedAs: scd2)", () => {
    expect(errorOf(define({ stored_as_scd_type: 2 })).fix).toContain('storedAs: scd2');
    expect(errorOf(define({ updated_at: 'ts' })).fix).toContain('did you mean "sequenceBy"?');
  });

  it('a list of columns to ignore nulls in says ignoreNullUpdates holds for every column', () => {
    expect(errorOf(define({ ignore_null_updates_column_list: ['city'] })).fix).toContain('every column');
  });

  it('Databricks\' once: no such field, and why none is needed (no "did you mean" to an unrelated field)', () => {
    const e = errorOf(define({ once: true }));
    expect(e.field).toBe('once');
    expect(e.problem).toBe('"once" is not a flow field');
    expect(e.fix).not.toContain('did you mean');
    expect(e.fix).toContain('no such field');
    expect(e.fix).toContain('one batch');
    expect(e.fix).toContain('exactly once');
    const fromFile = errorOf(loadText('target: t\nkeys: [id]\nsequenceBy: ts\nonce: true\n'));
    expect(fromFile.fix).toBe(e.fix);
  });

  it('an unknown name without a foreign meaning still gets the closest field', () => {
    expect(errorOf(define({ trackHistry: ['a'] })).fix).toBe('did you mean "trackHistory"?');
  });
});

describe('defineFlow', () => {
  it('puts the whole line the CLI prints, "did you mean" included, in the headline of its error', () => {
    const e = errorOf(define({ keyz: ['id'] }));
    expect(e.problem).toBe('"keyz" is not a flow field');
    expect(e.stack!.split('\n')[0]).toBe('ScdError: defineFlow: field "keyz": "keyz" is not a flow field (fix: did you mean "keys"?)');
  });
});

describe('previousValues', () => {
  it('is taken as given', () => {
    expect(defineFlow({ ...BASE, previousValues: { city: 'previous_city' } }).previousValues).toEqual({ city: 'previous_city' });
  });

  it('is refused, in one line with a fix, on scd1, on a key, on a sequence column, with a clashing name', () => {
    const scd1 = errorOf(define({ storedAs: 'scd1', previousValues: { city: 'p' } }));
    expect(scd1.field).toBe('previousValues');
    expect(scd1.fix).toContain('storedAs: scd2');
    expect(errorOf(define({ previousValues: { id: 'p' } })).field).toBe('previousValues.id');
    expect(errorOf(define({ previousValues: { ts: 'p' } })).field).toBe('previousValues.ts');
    expect(errorOf(define({ previousValues: { city: '__START_AT' } })).message).toContain('named twice');
    expect(errorOf(define({ previousValues: { city: 'p', name: 'p' } })).message).toContain('named twice');
  });

  it('checks its columns against the source at apply time, before anything is written', async () => {
    const driver = await openDriver(':memory:');
    try {
      const rows = [{ id: 1, ts: 1, city: 'Pune', op: 'U' }];
      const absent = await applyRows(driver, defineFlow({ ...BASE, previousValues: { cty: 'p' } }), rows).catch((e) => e as ScdError);
      expect(absent).toBeInstanceOf(ScdError);
      expect((absent as ScdError).fix).toContain('did you mean "city"?');
      const excepted = await applyRows(driver, defineFlow({ ...BASE, exceptColumns: ['op'], previousValues: { op: 'p' } }), rows).catch((e) => e as ScdError);
      expect((excepted as ScdError).message).toContain('not an output column');
      const clash = await applyRows(driver, defineFlow({ ...BASE, previousValues: { city: 'op' } }), rows).catch((e) => e as ScdError);
      expect((clash as ScdError).message).toContain('"op", which is a source column');
      expect(await driver.columns('t')).toBeUndefined();
    } finally {
      await driver.close();
    }
  });
});

describe('sequenceBy: { processingTime: true }', () => {
  it('sequences by the column the commit stamps, excepted from the output unless listed', () => {
    const flow = defineFlow({ target: 't', keys: 'id', sequenceBy: { processingTime: true } });
    expect(flow.processingTime).toBe(true);
    expect(flow.sequenceBy).toEqual(['_processed_at']);
    expect(flow.exceptColumns).toEqual(['_processed_at']);
    const kept = defineFlow({ target: 't', keys: 'id', sequenceBy: { processingTime: true }, columns: ['city', '_processed_at'] });
    expect(kept.exceptColumns).toBeUndefined();
    expect(defineFlow(BASE).processingTime).toBe(false);
  });

  it('is refused for sources that sequence themselves, and when not exactly { processingTime: true }', () => {
    expect(errorOf(define({ sequenceBy: { processingTime: true }, source: { path: 'x/', format: 'debezium' } })).field).toBe('sequenceBy');
    expect(errorOf(define({ sequenceBy: { processingTime: true }, source: { path: 'x/', mode: 'snapshot' } })).field).toBe('sequenceBy');
    expect(errorOf(define({ sequenceBy: { processingTime: true }, source: { table: 'raw' } })).field).toBe('sequenceBy');
    expect(errorOf(define({ sequenceBy: { processingTime: false } })).field).toMatch(/^sequenceBy/);
    expect(errorOf(define({ sequenceBy: { processing_time: true } })).field).toMatch(/^sequenceBy/);
  });
});
