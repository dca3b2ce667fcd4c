/**
 * Names that meet where the engine would refuse them halfway through a commit
 * (docs/decisions/0037-names-that-would-meet-are-refused.md): each is one ScdError line that names
 * the clash and the fix, before anything changes. Where an engine tells the names apart (PostgreSQL
 * keeps case), the flow simply works there.
 */
import { describe, expect, it } from 'vitest';
import { applyRows, type Driver, defineFlow, type FlowInput, readTargetWith, rebuild, ScdError } from '../../src/index.js';
import { engines } from '../engines.js';
import type { Rec } from '../helpers.js';

const CATALOG = ['_scd_commits', '_scd_flows'];

/** What a failed apply must leave as it was: the tables, their columns and rows, the commit log. */
async function snapshot(driver: Driver): Promise<unknown> {
  const tables = await driver.query(
    `SELECT table_name AS t FROM information_schema.tables WHERE table_catalog = current_database() AND table_schema = current_schema() ORDER BY 1`,
  );
  const out: Record<string, unknown> = {};
  for (const { t } of tables) {
    const name = String(t);
    const rows = Number((await driver.query(`SELECT count(*) AS n FROM ${driver.dialect.quote(name)}`))[0]!.n);
    // Every apply first creates the catalog the targets share, if it is missing (empty).
    if (CATALOG.includes(name) && rows === 0) continue;
    out[name] = { columns: (await driver.columns(name))?.map((c) => c.name), rows };
  }
  return out;
}

/** The error `fn` fails with; fails the test when it does not fail. */
async function refusal(fn: () => Promise<unknown>): Promise<ScdError> {
  const e = await Promise.resolve()
    .then(fn)
    .then(
      () => undefined,
      (x: unknown) => x,
    );
  expect(e).toBeInstanceOf(ScdError);
  const err = e as ScdError;
  expect(err.oneLine()).not.toContain('\n');
  expect(err.fix).toBeTruthy();
  return err;
}

/** Apply `before` (flow, records) pairs, then expect `flow` with `rows` to be refused, changing nothing. */
async function refusedAfter(driver: Driver, before: Array<[FlowInput, Rec[]]>, flow: FlowInput, rows: Rec[]): Promise<ScdError> {
  for (const [f, r] of before) await applyRows(driver, defineFlow(f), r);
  const was = await snapshot(driver);
  const err = await refusal(() => applyRows(driver, defineFlow(flow), rows));
  expect(await snapshot(driver)).toEqual(was);
  return err;
}

const flow = (target = 'dim', more: Partial<FlowInput> = {}): FlowInput => ({ target, keys: 'id', sequenceBy: 'seq', ...more });

for (const engine of engines) {
  const duckdb = engine.name === 'duckdb';
  const open = async (fn: (driver: Driver) => Promise<void>) => {
    const driver = await engine.open();
    try {
      await fn(driver);
    } finally {
      await driver.close();
    }
  };

  describe(`${engine.name}: names that clash`, () => {
    for (const col of ['_change_type', '_commit_version', '_Commit_Timestamp'])
      it(`a source column "${col}" (a change-feed column): refused unless excepted`, () =>
        open(async (driver) => {
          const rows = [{ id: 1, seq: 1, [col]: 'x' }];
          if (!duckdb && col !== col.toLowerCase()) {
            // PostgreSQL keeps case: "_Commit_Timestamp" is another column than _commit_timestamp.
            expect((await applyRows(driver, defineFlow(flow()), rows)).eventsApplied).toBe(1);
            return;
          }
          const err = await refusedAfter(driver, [], flow(), rows);
          expect(err.code).toBe('FLOW_INVALID');
          expect(err.message).toContain(`"${col}"`);
          expect(err.message).toContain('change feed');
          expect(err.fix).toContain('exceptColumns');
          // The fix works: left out of the target, it is kept in the event log only.
          expect((await applyRows(driver, defineFlow(flow('dim', { exceptColumns: [col] })), rows)).eventsApplied).toBe(1);
        }));

    it('a change-feed column arriving later under add-columns: refused, the target as it was', () =>
      open(async (driver) => {
        const f = flow('dim', { schemaEvolution: 'add-columns' });
        const err = await refusedAfter(driver, [[f, [{ id: 1, seq: 1, v: 'a' }]]], f, [{ id: 1, seq: 2, v: 'b', _commit_version: 7 }]);
        expect(err.message).toContain('"_commit_version"');
      }));

    it('startAtColumn named like a change-feed column: refused, naming the field', () =>
      open(async (driver) => {
        const err = await refusedAfter(driver, [], flow('dim', { startAtColumn: '_change_type' }), [{ id: 1, seq: 1 }]);
        expect(err.field).toBe('startAtColumn');
        expect(err.fix).toContain('startAtColumn');
      }));

    it('a source column __start_at beside the added __START_AT', () =>
      open(async (driver) => {
        const rows = [{ id: 1, seq: 1, __start_at: 5 }];
        if (!duckdb) {
          expect((await applyRows(driver, defineFlow(flow()), rows)).eventsApplied).toBe(1);
          return;
        }
        const err = await refusedAfter(driver, [], flow(), rows);
        expect(err.message).toMatch(/"__start_at".*"__START_AT".*ignores case/);
        expect(err.field).toBe('startAtColumn');
      }));

    it('targets dim and DIM in one database', () =>
      open(async (driver) => {
        const rows = [{ id: 1, seq: 1 }];
        if (!duckdb) {
          // Two tables to PostgreSQL, two targets.
          await applyRows(driver, defineFlow(flow('dim')), rows);
          await applyRows(driver, defineFlow(flow('DIM')), [{ id: 2, seq: 1 }]);
          expect((await readTargetWith(driver, defineFlow(flow('DIM')))).map((r) => r.id)).toEqual([2]);
          expect((await readTargetWith(driver, defineFlow(flow('dim')))).map((r) => r.id)).toEqual([1]);
          return;
        }
        const err = await refusedAfter(driver, [[flow('dim'), rows]], flow('DIM'), rows);
        expect(err.field).toBe('target');
        expect(err.message).toMatch(/target "DIM" .*target "dim".*ignores case/);
        expect(err.fix).toContain('target: dim');
      }));

    it('targets x and x_current, in either order', () =>
      open(async (driver) => {
        const rows = [{ id: 1, seq: 1 }];
        let err = await refusedAfter(driver, [[flow('x'), rows]], flow('x_current'), rows);
        expect(err.message).toContain(`target "x"'s view of current rows`);
        await open(async (other) => {
          err = await refusedAfter(other, [[flow('x_current'), rows]], flow('x'), rows);
          expect(err.message).toMatch(/target "x" needs the name x_current for its view of current rows, and target "x_current" has it/);
        });
      }));

    it("a table of the database that is not scdkit's, named like the target", () =>
      open(async (driver) => {
        await driver.run('CREATE TABLE dim (i INTEGER)');
        await driver.run('INSERT INTO dim VALUES (42)');
        const err = await refusedAfter(driver, [], flow('dim'), [{ id: 1, seq: 1 }]);
        expect(err.message).toContain("not scdkit's");
        expect(await driver.query('SELECT i FROM dim')).toEqual([{ i: 42 }]);
      }));

    for (const target of ['_scd_commits', '_scd_x_events', '_SCD_flows'])
      it(`a target named like scdkit's own tables: ${target}`, () =>
        open(async (driver) => {
          const err = await refusedAfter(driver, [[flow('x'), [{ id: 1, seq: 1 }]]], flow(target), [{ id: 1, seq: 1 }]);
          expect(err.code).toBe('FLOW_INVALID');
          expect(err.field).toBe('target');
          expect(err.message).toContain('_scd_');
        }));

    it('Name, then name under add-columns', () =>
      open(async (driver) => {
        const f = flow('dim', { schemaEvolution: 'add-columns' });
        if (!duckdb) {
          await applyRows(driver, defineFlow(f), [{ id: 1, seq: 1, Name: 'a' }]);
          await applyRows(driver, defineFlow(f), [{ id: 1, seq: 2, Name: 'a', name: 'b' }]);
          expect(await readTargetWith(driver, defineFlow(f))).toContainEqual(expect.objectContaining({ Name: 'a', name: 'b' }));
          return;
        }
        const err = await refusedAfter(driver, [[f, [{ id: 1, seq: 1, Name: 'a' }]]], f, [{ id: 1, seq: 2, name: 'b' }]);
        expect(err.code).toBe('SOURCE_INVALID');
        expect(err.message).toMatch(/"Name" and "name" are one column to DuckDB/);
      }));

    for (const [sentinel, seq] of [
      ['9999-12-31', 1],
      [1.5, 1],
      [1e30, 1],
      ['never', '2024-01-01T00:00:00Z'],
    ] as const)
      it(`an endSentinel ${JSON.stringify(sentinel)} that is no value of the sequence's type`, () =>
        open(async (driver) => {
          const err = await refusedAfter(driver, [], flow('dim', { endSentinel: sentinel }), [{ id: 1, seq }]);
          expect(err.field).toBe('endSentinel');
          expect(err.message).toContain(JSON.stringify(sentinel));
        }));

    it('an endSentinel that fits is taken, and a rebuild that changes it to one that does not is refused', () =>
      open(async (driver) => {
        const ok = defineFlow(flow('dim', { endSentinel: 99999999999 }));
        await applyRows(driver, ok, [{ id: 1, seq: 1 }]);
        expect((await readTargetWith(driver, ok))[0]!.__END_AT).toBe(99999999999);
        const ts = defineFlow(flow('t', { endSentinel: '9999-12-31' }));
        await applyRows(driver, ts, [{ id: 1, seq: '2024-01-01T00:00:00Z' }]);
        const was = await snapshot(driver);
        const err = await refusal(() => rebuild(driver, defineFlow(flow('dim', { endSentinel: 'far' }))));
        expect(err.field).toBe('endSentinel');
        expect(await snapshot(driver)).toEqual(was);
      }));
  });
}
