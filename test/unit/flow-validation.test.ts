/**
 * Flow validation: every mistake a person can make in a flow gives ONE ScdError naming the file,
 * the field and a fix (SEMANTICS §6). Column checks happen at apply time, before anything is written.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { applyRows, type Driver, defineFlow, type Flow, type FlowInput, loadFlowFile, openDriver, ScdError } from '../../src/index.js';
import { tempDir } from '../helpers.js';

let tmp: { dir: string; cleanup: () => void };
let n = 0;
beforeAll(() => {
  tmp = tempDir('scdkit-flow-');
});
afterAll(() => tmp.cleanup());

/** Write a flow file in its own folder and load it. */
function writeFlow(text: string, name = 'flow.yaml'): string {
  const dir = path.join(tmp.dir, `f${++n}`);
  mkdirSync(dir);
  const file = path.join(dir, name);
  writeFileSync(file, text);
  return file;
}

function errorOf(fn: () => unknown): ScdError {
  try {
    fn();
  } catch (e) {
    expect(e).toBeInstanceOf(ScdError);
    return e as ScdError;
  }
  throw new Error('expected an ScdError, got none');
}

async function asyncErrorOf(p: Promise<unknown>): Promise<ScdError> {
  try {
    await p;
  } catch (e) {
    expect(e).toBeInstanceOf(ScdError);
    return e as ScdError;
  }
  throw new Error('expected an ScdError, got none');
}

/** Load a flow file that must be refused; checks the one-line shape common to all. */
function refused(text: string, name = 'flow.yaml'): ScdError {
  const file = writeFlow(text, name);
  const e = errorOf(() => loadFlowFile(file));
  const line = e.oneLine();
  expect(line).not.toContain('\n');
  expect(line).toContain(file);
  expect(e.fix, line).toBeTruthy();
  expect(line).toContain('(fix: ');
  return e;
}

const BASE = 'target: t\nkeys: [id]\nsequenceBy: ts\n';

describe('flow files: shape and fields', () => {
  it('loads a good flow, with defaults and paths relative to its folder (SEMANTICS §7)', () => {
    const file = writeFlow(BASE + 'database: data/x.duckdb\nsource:\n  path: landing/\n');
    const flow = loadFlowFile(file);
    expect(flow).toMatchObject({
      target: 't',
      name: 't',
      keys: ['id'],
      sequenceBy: ['ts'],
      storedAs: 'scd2',
      ignoreNullUpdates: false,
      startAtColumn: '__START_AT',
      endAtColumn: '__END_AT',
      deletes: 'close',
    });
    expect(flow.database).toBe(path.join(path.dirname(file), 'data', 'x.duckdb'));
    expect(flow.source?.path).toBe(path.join(path.dirname(file), 'landing'));
    // Default database: scd.duckdb next to the flow.
    expect(loadFlowFile(writeFlow(BASE)).database).toMatch(/f\d+\/scd\.duckdb$/);
  });

  it('a JSON flow loads the same as YAML', () => {
    const file = writeFlow(JSON.stringify({ target: 't', keys: 'id', sequenceBy: ['ts', 'lsn'] }), 'flow.json');
    expect(loadFlowFile(file)).toMatchObject({ keys: ['id'], sequenceBy: ['ts', 'lsn'] });
  });

  it('an unknown field: names it and suggests the closest ("did you mean")', () => {
    const e = refused('target: t\nkeyz: [id]\nsequenceBy: ts\n');
    expect(e.code).toBe('FLOW_INVALID');
    expect(e.field).toBe('keyz');
    expect(e.message).toContain('"keyz"');
    expect(e.fix).toContain('did you mean "keys"');
  });

  it('an unknown field with the wrong case suggests the right spelling', () => {
    const e = refused('target: t\nkeys: [id]\nsequenceby: ts\n');
    expect(e.field).toBe('sequenceby');
    expect(e.fix).toContain('did you mean "sequenceBy"');
  });

  it('an unknown field that resembles nothing lists the flow fields', () => {
    const e = refused(BASE + 'zzzzzzzzzzzz: 1\n');
    expect(e.field).toBe('zzzzzzzzzzzz');
    expect(e.fix).toContain('sequenceBy');
  });

  it('an unknown field inside source suggests the closest SOURCE field', () => {
    const e = refused(BASE + 'source:\n  pth: landing/\n');
    expect(e.field).toBe('source.pth');
    expect(e.fix).toContain('did you mean "path"');
  });

  it('both columns and exceptColumns', () => {
    const e = refused(BASE + 'columns: [a]\nexceptColumns: [b]\n');
    expect(e.field).toMatch(/^(columns|exceptColumns)$/);
    expect(e.message).toContain('columns');
    expect(e.message).toContain('exceptColumns');
  });

  it('both trackHistory and trackHistoryExcept', () => {
    const e = refused(BASE + 'trackHistory: [a]\ntrackHistoryExcept: [b]\n');
    expect(e.field).toMatch(/^trackHistory(Except)?$/);
    expect(e.message).toContain('trackHistoryExcept');
  });

  it.each([
    ['keys', 'target: t\nsequenceBy: ts\n'],
    ['sequenceBy', 'target: t\nkeys: [id]\n'],
    ['target', 'keys: [id]\nsequenceBy: ts\n'],
  ])('missing %s: says it is required and shows an example', (field, text) => {
    const e = refused(text);
    expect(e.field).toBe(field);
    expect(e.problem).toBe(`"${field}" is required`);
    expect(e.fix).toContain(`${field}:`);
  });

  it('storedAs with an invalid value names the valid ones', () => {
    const e = refused(BASE + 'storedAs: scd3\n');
    expect(e.field).toBe('storedAs');
    expect(e.fix).toContain('scd2');
    expect(e.fix).toContain('scd1');
  });

  it('a target that is not a plain table name', () => {
    const e = refused('target: "dim customer; drop"\nkeys: [id]\nsequenceBy: ts\n');
    expect(e.field).toBe('target');
  });

  it('keys given as a number, an empty key list, an empty column name', () => {
    expect(refused('target: t\nkeys: 5\nsequenceBy: ts\n').field).toBe('keys');
    expect(refused('target: t\nkeys: []\nsequenceBy: ts\n').field).toMatch(/^keys/);
    expect(refused('target: t\nkeys: [""]\nsequenceBy: ts\n').field).toMatch(/^keys/);
  });

  it('a key used as the sequence, a key listed twice, a key excepted', () => {
    expect(refused('target: t\nkeys: [id]\nsequenceBy: id\n').field).toBe('sequenceBy');
    expect(refused('target: t\nkeys: [id, id]\nsequenceBy: ts\n').field).toBe('keys');
    expect(refused(BASE + 'exceptColumns: [id]\n').field).toBe('exceptColumns');
  });

  it('bad YAML syntax: says YAML and where', () => {
    const e = refused('target: t\nkeys: [id\nsequenceBy: ts\n');
    expect(e.message).toMatch(/not valid YAML/);
    expect(e.message).toMatch(/line \d+/);
  });

  it('bad JSON syntax: says JSON', () => {
    const e = refused('{"target": "t", "keys": ["id"], }', 'flow.json');
    expect(e.message).toMatch(/not valid JSON/);
  });

  it('an empty flow file, and a flow that is a list', () => {
    expect(refused('').code).toBe('FLOW_INVALID');
    expect(refused('- target: t\n').code).toBe('FLOW_INVALID');
  });

  it('a flow file that does not exist', () => {
    const e = errorOf(() => loadFlowFile(path.join(tmp.dir, 'nope', 'flow.yaml')));
    expect(e.code).toBe('FLOW_NOT_FOUND');
    expect(e.oneLine()).toContain('nope');
  });
});

describe('defineFlow', () => {
  it('validates the same way, naming defineFlow as the origin', () => {
    const e = errorOf(() => defineFlow({ target: 't', keys: ['id'], sequenceBy: 'ts', keyz: 1 } as unknown as FlowInput));
    expect(e.field).toBe('keyz');
    expect(e.oneLine()).toContain('defineFlow');
    expect(errorOf(() => defineFlow({ target: 't', keys: ['id'], sequenceBy: 'ts', columns: ['a'], exceptColumns: ['b'] })).code).toBe('FLOW_INVALID');
    expect(errorOf(() => defineFlow({ target: 't', keys: ['id'], sequenceBy: 'ts', storedAs: 'scd3' as 'scd2' })).field).toBe('storedAs');
  });

  it('resolves relative paths against baseDir', () => {
    const flow = defineFlow({ target: 't', keys: 'id', sequenceBy: 'ts', database: 'x.duckdb' }, { baseDir: '/srv/flows' });
    expect(flow.database).toBe(path.resolve('/srv/flows/x.duckdb'));
    expect(defineFlow({ target: 't', keys: 'id', sequenceBy: 'ts', database: ':memory:' }).database).toBe(':memory:');
  });
});

describe('checked at apply time, before anything is written', () => {
  const rows = [
    { id: 1, ts: 1, op: 'U', a: 1 },
    { id: 2, ts: 1, op: 'D', a: 2 },
  ];
  let driver: Driver;
  beforeAll(async () => {
    driver = await openDriver(':memory:');
    await driver.run('CREATE TABLE x (i INTEGER)');
  });
  afterAll(() => driver.close());

  /** The apply must fail with an ScdError and leave no target, no event log and table x intact. */
  async function refusedAtApply(input: Partial<FlowInput>): Promise<ScdError> {
    const flow: Flow = defineFlow({ target: 'tgt', keys: ['id'], sequenceBy: 'ts', ...input } as FlowInput);
    const e = await asyncErrorOf(applyRows(driver, flow, rows));
    expect(e.oneLine()).not.toContain('\n');
    expect(e.fix).toBeTruthy();
    expect(await driver.columns('tgt')).toBeUndefined();
    expect(await driver.columns('_scd_tgt_events')).toBeUndefined();
    expect(await driver.columns('x')).toBeDefined();
    const flows = (await driver.columns('_scd_flows')) ? await driver.query(`SELECT * FROM _scd_flows WHERE target = 'tgt'`) : [];
    expect(flows).toEqual([]);
    return e;
  }

  it('a key column absent from the source', async () => {
    const e = await refusedAtApply({ keys: ['idd'] });
    expect(e.field).toBe('keys');
    expect(e.message).toContain('"idd"');
    expect(e.fix).toContain('did you mean "id"');
  });

  it('a sequence column absent from the source', async () => {
    const e = await refusedAtApply({ sequenceBy: ['tss'] });
    expect(e.field).toBe('sequenceBy');
    expect(e.message).toContain('"tss"');
  });

  it('columns / exceptColumns / trackHistory naming absent columns', async () => {
    expect((await refusedAtApply({ columns: ['nope'] })).field).toBe('columns');
    expect((await refusedAtApply({ exceptColumns: ['nope'] })).field).toBe('exceptColumns');
    expect((await refusedAtApply({ trackHistory: ['nope'] })).field).toBe('trackHistory');
  });

  it('applyAsDeletes that is a column, not a condition: "not a boolean"', async () => {
    const e = await refusedAtApply({ applyAsDeletes: 'op' });
    expect(e.field).toBe('applyAsDeletes');
    expect(e.message).toMatch(/not a boolean/);
  });

  it('applyAsDeletes naming an unknown column', async () => {
    const e = await refusedAtApply({ applyAsDeletes: "opp = 'D'" });
    expect(e.field).toBe('applyAsDeletes');
    expect(e.message).toContain('opp');
  });

  it.each([
    ["op = 'D'; drop table x", /;/],
    ['a = 1 -- x', /comment/],
    ["op = 'D' /* x */", /comment/],
    ["op = 'D', 1", /list|one expression/],
    ["op = 'D') OR (1 = 1", /unbalanced|parenthes/],
    ["(op = 'D'", /unbalanced|parenthes/],
    ["op = 'D", /unclosed|string/],
    ['select true', /query|condition/],
  ])('applyAsDeletes %j is refused', async (expr, why) => {
    const e = await refusedAtApply({ applyAsDeletes: expr });
    expect(e.field).toBe('applyAsDeletes');
    expect(e.message).toMatch(/single boolean expression/);
    expect(e.message).toMatch(why);
  });

  it.each([
    ['op = $$D$$', /\$/],
    ["op = E'D'", /prefixed string/],
    ["op = U&'\\0044'", /prefixed string/],
    [`U&"op" = 'D'`, /U&/],
    ["op = X'44'", /prefixed string/],
    ["$1 = 'D'", /\$/],
  ])('applyAsDeletes %j, a spelling one engine alone reads, is refused', async (expr, why) => {
    const e = await refusedAtApply({ applyAsDeletes: expr });
    expect(e.field).toBe('applyAsDeletes');
    expect(e.message).toMatch(/single boolean expression/);
    expect(e.message).toMatch(why);
  });

  it.each([
    ['(SELECT true)', /subquery/],
    ["op IN (SELECT 'D')", /subquery/],
    ["(SELECT count(*) FROM read_text('/etc/passwd')) > 0", /subquery/],
    ["(SELECT count(*) FROM read_csv('/etc/passwd')) > 0", /subquery/],
    ["read_text('/etc/passwd') IS NULL", /table function/],
    ['random() < 2', /random\(\).*arguments do not decide/],
    ['now() IS NOT NULL', /now\(\)/],
    ['count(*) > 0', /aggregate/],
    ["pg_read_file('/etc/passwd') <> ''", /pg_read_file/],
  ])('applyAsDeletes %j, which reads more than the record, is refused', async (expr, why) => {
    const e = await refusedAtApply({ applyAsDeletes: expr });
    expect(e.field).toBe('applyAsDeletes');
    expect(e.message).toContain(expr);
    expect(e.message).toMatch(why);
  });

  it('applyAsTruncates is checked the same way', async () => {
    expect((await refusedAtApply({ applyAsTruncates: "op = 'T'; drop table x" })).field).toBe('applyAsTruncates');
    expect((await refusedAtApply({ applyAsTruncates: 'a' })).message).toMatch(/not a boolean/);
  });

  it('quotes, semicolons and commas inside strings or parentheses are fine', async () => {
    for (const [i, expr] of [`op = 'a;b -- c'`, `op IN ('D', 'X')`, `coalesce(op, 'U') = 'D'`, `"op" = 'D'`].entries()) {
      const flow = defineFlow({ target: `ok${i}`, keys: 'id', sequenceBy: 'ts', applyAsDeletes: expr });
      const r = await applyRows(driver, flow, rows);
      expect(r.eventsApplied, expr).toBe(2);
    }
  });
});
