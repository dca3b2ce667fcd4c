/**
 * A flow expression (applyAsDeletes, applyAsTruncates, expect.*.sql) is one boolean expression
 * over the source record's columns, on every engine: an expression that would run SQL of its own,
 * read a table or a file, or depend on more than the record, is refused with one FLOW_INVALID line
 * naming the file and field, before anything changes; the engine's own check refuses it even
 * without the spelling check in front of it; valid booleans apply as they read.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { applyRows, type ColumnInfo, type Driver, defineFlow, type FlowInput, loadFlowFile, readTargetWith, rebuild, ScdError } from '../../src/index.js';
import { engines } from '../engines.js';
import { tempDir } from '../helpers.js';
import { HOSTILE, INJECTIONS, OVERREACHING, snapshotTables } from '../hostile-sql.js';

const ROWS = [
  { id: 1, ts: 1, op: 'DELETE', deleted: false, a: 0 },
  { id: 2, ts: 1, op: 'd', deleted: true, a: 2 },
  { id: 3, ts: 1, op: 'U', deleted: null, a: 1 },
  { id: 4, ts: 1, op: 'D', deleted: null, a: null },
];
const BASE: FlowInput = { target: 'dim', keys: 'id', sequenceBy: 'ts', applyAsDeletes: "op = 'DELETE'" };

/** Valid booleans and the ids each leaves in the target (one record a key: a delete leaves none). */
const VALID: Array<[string, number[]]> = [
  ["op = 'DELETE'", [2, 3, 4]],
  ["op IN ('d','D')", [1, 3]],
  ['coalesce(deleted, false)', [1, 3, 4]],
  ["lower(op) = 'delete'", [2, 3, 4]],
  ['NOT (a > 1)', [2, 4]],
  [`"op" = 'it''s; -- not /* a comment */'`, [1, 2, 3, 4]],
];

let tmp: { dir: string; cleanup: () => void };
let files = 0;
beforeAll(() => {
  tmp = tempDir('scdkit-expr-');
});
afterAll(() => tmp.cleanup());

/** The flow as a JSON flow file, so that a refusal names the file. */
function flowFile(input: FlowInput) {
  const dir = path.join(tmp.dir, `f${++files}`);
  mkdirSync(dir);
  const file = path.join(dir, 'flow.json');
  writeFileSync(file, JSON.stringify({ ...input, database: ':memory:' }));
  return loadFlowFile(file);
}

async function refusal(p: Promise<unknown>): Promise<ScdError> {
  const e = await p.then(
    () => undefined,
    (x: unknown) => x,
  );
  expect(e, 'refused with an ScdError').toBeInstanceOf(ScdError);
  return e as ScdError;
}

for (const engine of engines) {
  describe(`${engine.name}: flow expressions`, () => {
    let driver: Driver;
    let columns: ColumnInfo[];
    beforeAll(async () => {
      driver = await engine.open();
      await driver.run('CREATE TABLE victim (i INTEGER)');
      await driver.run('INSERT INTO victim VALUES (42)');
      await applyRows(driver, defineFlow(BASE), ROWS);
      // The record's columns as the engine types them.
      columns = ((await driver.columns('dim')) ?? []).filter((c) => Object.keys(ROWS[0]!).includes(c.name));
    });
    afterAll(() => driver.close());

    /** The attempt is refused with one FLOW_INVALID line naming file and field; no table changed. */
    async function refusedUnchanged(attempt: () => Promise<unknown>, field: string, file: string): Promise<ScdError> {
      const before = await snapshotTables(driver);
      const e = await refusal(attempt());
      const line = e.oneLine();
      expect(e.code, line).toBe('FLOW_INVALID');
      expect(e.field, line).toBe(field);
      expect(line).not.toContain('\n');
      expect(line).toContain(file);
      expect(line).toContain('(fix: ');
      expect(await snapshotTables(driver)).toEqual(before);
      expect(await driver.query('SELECT i FROM victim')).toEqual([{ i: 42 }]);
      return e;
    }

    for (const [i, injection] of INJECTIONS.entries()) {
      it(`injection ${i + 1} as applyAsDeletes of a new target: refused, victim and every table unchanged`, async () => {
        const flow = flowFile({ ...BASE, target: `fresh${i}`, applyAsDeletes: injection });
        await refusedUnchanged(() => applyRows(driver, flow, ROWS), 'applyAsDeletes', flow.origin);
      });

      it(`injection ${i + 1} as an expectation of an existing target: refused, nothing changed`, async () => {
        const flow = flowFile({ ...BASE, expect: { evil: { sql: injection, action: 'drop' } } });
        await refusedUnchanged(() => applyRows(driver, flow, ROWS), 'expect.evil.sql', flow.origin);
      });

      it(`injection ${i + 1} as applyAsDeletes of a rebuild: refused, nothing changed`, async () => {
        const flow = flowFile({ ...BASE, applyAsDeletes: injection });
        await refusedUnchanged(() => rebuild(driver, flow), 'applyAsDeletes', flow.origin);
      });
    }

    it('every hostile expression is refused at apply', async () => {
      for (const [i, expr] of HOSTILE.entries()) {
        const flow = flowFile({ ...BASE, target: `h${i}`, applyAsDeletes: expr });
        const e = await refusedUnchanged(() => applyRows(driver, flow, ROWS), 'applyAsDeletes', flow.origin);
        expect(e.message, expr).toMatch(/single boolean expression|cannot be evaluated|not a boolean/);
      }
    });

    it('applyAsTruncates and expectations are checked the same way', async () => {
      for (const expr of [...INJECTIONS, "op = 'T' /* x */", '(SELECT true)']) {
        const truncates = flowFile({ ...BASE, target: 'tr', applyAsTruncates: expr });
        await refusedUnchanged(() => applyRows(driver, truncates, ROWS), 'applyAsTruncates', truncates.origin);
        const expectation = flowFile({ ...BASE, target: 'ex', expect: { x: { sql: expr, action: 'quarantine' } } });
        await refusedUnchanged(() => applyRows(driver, expectation, ROWS), 'expect.x.sql', expectation.origin);
      }
    });

    it("the engine's own check refuses every injection, subquery, table, file and volatile function by itself", async () => {
      for (const expr of [...INJECTIONS, ...OVERREACHING]) {
        const before = await snapshotTables(driver);
        expect(await driver.checkExpression(expr, columns), expr).toBeDefined();
        expect(await snapshotTables(driver)).toEqual(before);
      }
      for (const [expr] of VALID) expect(await driver.checkExpression(expr, columns), expr).toBeUndefined();
    });

    it('subqueries and table or file functions name what they read, and the fix', async () => {
      for (const expr of ["(SELECT count(*) FROM read_text('/etc/passwd')) > 0", "op IN (SELECT 'D')"]) {
        const flow = flowFile({ ...BASE, target: 'sub', applyAsDeletes: expr });
        const e = await refusedUnchanged(() => applyRows(driver, flow, ROWS), 'applyAsDeletes', flow.origin);
        expect(e.message).toContain(expr);
        expect(e.message).toMatch(/subquery/);
        expect(e.fix).toMatch(/no subquery, table, file or volatile function/);
      }
      const e = await refusal(applyRows(driver, flowFile({ ...BASE, target: 'vol', applyAsDeletes: 'random() < 0.5' }), ROWS));
      expect(e.message).toMatch(/random|arguments do not decide/);
    });

    it('valid booleans apply as they read', async () => {
      for (const [i, [expr, ids]] of VALID.entries()) {
        const flow = defineFlow({ ...BASE, target: `ok${i}`, applyAsDeletes: expr });
        await applyRows(driver, flow, ROWS);
        const rows = await readTargetWith(driver, flow);
        expect(rows.map((r) => Number(r.id)).sort(), expr).toEqual(ids);
      }
    });

    it('a driver without checkExpression runs no flow expression: it fails loudly, naming the dialect', async () => {
      const bare = new Proxy(driver, {
        get: (t, k) => (k === 'checkExpression' ? undefined : typeof Reflect.get(t, k) === 'function' ? Reflect.get(t, k).bind(t) : Reflect.get(t, k)),
      });
      const before = await snapshotTables(driver);
      await expect(applyRows(bare, defineFlow({ ...BASE, target: 'bare' }), ROWS)).rejects.toThrow(`the ${driver.dialect.name} driver has no checkExpression()`);
      expect(await snapshotTables(driver)).toEqual(before);
    });

    it('an expression shown in a message is on one line, whatever it holds', async () => {
      const flow = flowFile({ ...BASE, target: 'nl', applyAsDeletes: "op\n=\r\n'D' AND\topp = 1" });
      const e = await refusal(applyRows(driver, flow, ROWS));
      expect(e.oneLine()).not.toMatch(/[\r\n]/);
      expect(e.message).toContain(`"op = 'D' AND opp = 1"`);
    });
  });
}
