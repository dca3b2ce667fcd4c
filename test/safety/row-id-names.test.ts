/**
 * A user's column may be named like an engine's row-id pseudo-column
 * (docs/decisions/0036-a-users-column-never-shadows-a-row-handle.md). DuckDB reads a table's own
 * column named rowid (in any case) instead of its row id, which scdkit uses to delete, close and
 * number rows: a source with such a column lost events and closed the wrong versions. Now every
 * such commit gives exactly what the same source gives under another name. PostgreSQL refuses a
 * column named like one of its system columns (ctid, xmin, …): one line.
 */
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { type ApplyResult, applyFiles, applyRows, type Driver, defineFlow, type FlowInput, readTargetWith, rebuild, ScdError } from '../../src/index.js';
import { storeNames } from '../../src/store/names.js';
import { engines } from '../engines.js';
import { type Rec, tempDir } from '../helpers.js';

/** The counts of a commit that must not depend on a column's name. */
const counts = (r: ApplyResult) => ({
  rowsRead: r.rowsRead,
  eventsApplied: r.eventsApplied,
  duplicates: r.duplicates,
  quarantined: r.quarantined,
  keysChanged: r.keysChanged,
  versionsAdded: r.versionsAdded,
  versionsChanged: r.versionsChanged,
  versionsRemoved: r.versionsRemoved,
  versionsClosed: r.versionsClosed,
});

/** Rename one key of every record. */
const renamed = (rows: Rec[], from: string, to: string) => rows.map((r) => Object.fromEntries(Object.entries(r).map(([k, v]) => [k === from ? to : k, v])));

/**
 * Batches that take every path of a commit: new keys (batch 1), a key with one new event
 * (simple: batch 2 closes key 2's version in place), a late event and an event the log holds
 * (slow keys, the log's known events removed from the batch), a key with several events (the
 * walk), a delete. The column's values are row numbers of other rows, so that reading them as
 * row ids picks the wrong rows.
 */
const batches = (col: string): Rec[][] => [
  [
    { id: 1, seq: 1, op: 'U', [col]: 1, v: 'a' },
    { id: 2, seq: 1, op: 'U', [col]: 0, v: 'b' },
  ],
  [{ id: 2, seq: 3, op: 'U', [col]: 0, v: 'c' }],
  [
    { id: 2, seq: 2, op: 'U', [col]: 1, v: 'late' },
    { id: 1, seq: 1, op: 'U', [col]: 1, v: 'a' },
    { id: 3, seq: 1, op: 'U', [col]: 0, v: 'd' },
    { id: 3, seq: 2, op: 'U', [col]: 2, v: 'e' },
  ],
  [{ id: 1, seq: 5, op: 'D', [col]: 0, v: null }],
];

async function run(engine: (typeof engines)[number], input: FlowInput, data: Rec[][]) {
  const flow = defineFlow(input);
  const driver = await engine.open();
  try {
    const results: ApplyResult[] = [];
    for (const b of data) results.push(await applyRows(driver, flow, b));
    const rows = await readTargetWith(driver, flow);
    const rebuilt = await rebuild(driver, flow);
    return { results, rows, rebuilt, afterRebuild: await readTargetWith(driver, flow) };
  } finally {
    await driver.close();
  }
}

for (const engine of engines) {
  describe(`${engine.name}: a column named like the row id`, () => {
    for (const storedAs of ['scd2', 'scd1'] as const)
      for (const col of ['rowid', 'RowID'])
        it(`${storedAs}: a source column "${col}" gives what the same column under another name gives`, async () => {
          const flow = { target: 'dim', keys: 'id', sequenceBy: 'seq', applyAsDeletes: "op = 'D'", storedAs };
          const got = await run(engine, flow, batches(col));
          const want = await run(engine, flow, batches('other'));
          // The case that lost an event: a commit of 2 events is 2 applied, and key 2 is there.
          expect(got.results[0]!.eventsApplied).toBe(2);
          expect(got.results[0]!.duplicates).toBe(0);
          expect(got.results.map(counts)).toEqual(want.results.map(counts));
          expect(got.rows).toEqual(renamed(want.rows, 'other', col));
          // The later commit closed key 2's version, not key 1's.
          if (storedAs === 'scd2') {
            expect(got.rows.filter((r) => r.id === 1 && r.__END_AT === 2)).toEqual([]);
            expect(got.rows.find((r) => r.id === 2 && r.__START_AT === 1)?.__END_AT).toBe(2);
          }
          // A rebuild finds every row as it was.
          expect(counts(got.rebuilt)).toEqual(counts(want.rebuilt));
          expect(got.rebuilt.versionsAdded + got.rebuilt.versionsChanged + got.rebuilt.versionsRemoved).toBe(0);
          expect(got.afterRebuild).toEqual(got.rows);
        });

    it('a key column named rowid', async () => {
      const flow = { target: 'dim', keys: 'rowid', sequenceBy: 'seq' };
      const data = batches('x').map((b) => b.map(({ id, x, ...r }) => ({ ...r, rowid: id, x })));
      const got = await run(engine, flow, data);
      const want = await run(
        engine,
        { ...flow, keys: 'k' },
        data.map((b) => renamed(b, 'rowid', 'k')),
      );
      expect(got.results.map(counts)).toEqual(want.results.map(counts));
      expect(got.rows).toEqual(renamed(want.rows, 'k', 'rowid'));
      expect(got.afterRebuild).toEqual(got.rows);
    });

    it('a CSV with a rowid column and a bad line: records numbered by their lines, the bad one quarantined at its line', async () => {
      const tmp = tempDir();
      const flow = defineFlow({ target: 'dim', keys: 'id', sequenceBy: 'seq' });
      const driver = await engine.open();
      try {
        const file = path.join(tmp.dir, 'in.csv');
        // Line 3 has a field too many; the rowid values are row numbers of other rows.
        writeFileSync(file, 'id,seq,rowid,v\n1,1,1,a\n9,9,9,x,extra\n2,1,0,b\n');
        const r = await applyFiles(driver, flow, [{ path: file, format: 'csv' }]);
        expect([r.eventsApplied, r.duplicates, r.quarantined]).toEqual([2, 0, 1]);
        const q = driver.dialect.quote;
        const bad = await driver.query(`SELECT CAST(line AS INTEGER) AS line FROM ${q(storeNames('dim').quarantine)}`);
        expect(bad).toEqual([{ line: 3 }]);
        const rows = await readTargetWith(driver, flow);
        expect(rows.map((x) => [x.id, x.rowid, x.v])).toEqual([
          [1, 1, 'a'],
          [2, 0, 'b'],
        ]);
      } finally {
        await driver.close();
        tmp.cleanup();
      }
    });

    it('a column named oid (a plain name on every engine) is a plain column', async () => {
      const got = await run(engine, { target: 'dim', keys: 'id', sequenceBy: 'seq', applyAsDeletes: "op = 'D'" }, batches('oid'));
      const want = await run(engine, { target: 'dim', keys: 'id', sequenceBy: 'seq', applyAsDeletes: "op = 'D'" }, batches('other'));
      expect(got.results.map(counts)).toEqual(want.results.map(counts));
      expect(got.rows).toEqual(renamed(want.rows, 'other', 'oid'));
    });

    // PostgreSQL's system columns cannot be a table's: a source with one is refused in one line
    // that names it and the fix, and nothing is created. DuckDB has no such names.
    for (const col of ['ctid', 'xmin', 'tableoid', 'cmax'])
      it(`a source column "${col}"`, async () => {
        const flow = defineFlow({ target: 'dim', keys: 'id', sequenceBy: 'seq' });
        const driver = await engine.open();
        try {
          const apply = applyRows(driver, flow, [{ id: 1, seq: 1, [col]: 7, v: 'a' }]);
          if (driver.dialect.name === 'postgres') {
            const e = await apply.then(
              () => undefined,
              (x: unknown) => x,
            );
            expect(e).toBeInstanceOf(ScdError);
            const err = e as ScdError;
            expect(err.code).toBe('SOURCE_INVALID');
            expect(err.oneLine()).not.toContain('\n');
            expect(err.message).toContain(`"${col}"`);
            expect(err.message).toContain('system column');
            expect(err.fix).toMatch(/rename/);
            expect(await tablesNamedDim(driver)).toEqual([]);
          } else {
            expect((await apply).eventsApplied).toBe(1);
            expect((await readTargetWith(driver, flow)).map((r) => r[col])).toEqual([7]);
          }
        } finally {
          await driver.close();
        }
      });
  });
}

describe.each(engines.filter((e) => e.name !== 'duckdb'))('$name: a CSV with a system column', (engine) => {
  it('is refused in one line before anything is created', async () => {
    const tmp = tempDir();
    const driver = await engine.open();
    try {
      const file = path.join(tmp.dir, 'in.csv');
      writeFileSync(file, 'id,seq,xmax,v\n1,1,5,a\n');
      const e = await applyFiles(driver, defineFlow({ target: 'dim', keys: 'id', sequenceBy: 'seq' }), [{ path: file, format: 'csv' }]).then(
        () => undefined,
        (x: unknown) => x,
      );
      expect(e).toBeInstanceOf(ScdError);
      expect((e as ScdError).code).toBe('SOURCE_INVALID');
      expect((e as ScdError).message).toContain('"xmax"');
      expect(await tablesNamedDim(driver)).toEqual([]);
    } finally {
      await driver.close();
      tmp.cleanup();
    }
  });
});

async function tablesNamedDim(driver: Driver): Promise<string[]> {
  const names = await driver.query(`SELECT table_name AS t FROM information_schema.tables WHERE table_schema = current_schema() AND table_name LIKE '%dim%'`);
  return names.map((r) => String(r.t));
}
