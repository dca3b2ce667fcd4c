/**
 * A widening never changes a committed value
 * (docs/decisions/0026-a-widening-never-changes-a-committed-value.md, docs/TYPES.md "Integers and
 * fractions"). A BIGINT column meeting 1.5 used to become DOUBLE in the target, the event log, the
 * change feed and time travel: 9007199254740993 became …992 in `export --version 1`, and rebuild
 * could not bring it back. Now it becomes the decimal that holds both, on every engine; a declared
 * double over committed integers is refused; a fresh column of integers beyond 2^53 and fractions
 * is a decimal too.
 */
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { Writable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { changesQuery, type Driver, defineFlow, type Flow, rebuild, ScdError, versionQuery, writeRows } from '../../src/index.js';
import { engines } from '../engines.js';
import { assertBuilt, scd, tempDir } from './fixtures/util.js';

const BIG = '9007199254740993'; // 2^53 + 1: no double holds it
const FLOW = { target: 'w', keys: 'id', sequenceBy: 'seq' };
/** The records as written (JSON.stringify would round BIG). */
const FIRST = [`{"id":1,"seq":1,"v":${BIG}}`, `{"id":2,"seq":1,"v":5}`];
const SECOND = [`{"id":2,"seq":2,"v":1.5}`];

let tmp: { dir: string; cleanup: () => void };
beforeAll(() => {
  assertBuilt();
  tmp = tempDir();
});
afterAll(() => tmp.cleanup());

/** Apply records given as JSON text, exactly as written. */
async function applyLines(driver: Driver, flow: Flow, lines: string[]) {
  const { applyFiles } = await import('../../src/index.js');
  const file = path.join(tmp.dir, `batch-${Math.random().toString(36).slice(2)}.ndjson`);
  writeFileSync(file, lines.join('\n') + '\n');
  return applyFiles(driver, flow, [{ path: file, format: 'ndjson' }]);
}

/** NDJSON text of a query, as `scd export` writes it. */
async function ndjsonOf(driver: Driver, query: Awaited<ReturnType<typeof versionQuery>>): Promise<string> {
  let text = '';
  const stdout = new Writable({
    write(chunk, _enc, done) {
      text += String(chunk);
      done();
    },
  });
  await writeRows(driver, query, { format: 'ndjson', stdout });
  return text;
}

const exact = (v: string) => new RegExp(`"v":${v.replace('.', '\\.')}(\\.0+)?[,}]`);

for (const engine of engines) {
  describe(`${engine.name}: a widening never changes a committed value`, () => {
    it('a BIGINT column meeting 1.5 becomes a decimal in the target, the log and the feed; version 1 and rebuild keep 2^53 + 1', async () => {
      const flow = defineFlow(FLOW);
      const driver = await engine.open();
      try {
        await applyLines(driver, flow, FIRST);
        const r = await applyLines(driver, flow, SECOND);
        expect(r).toMatchObject({ eventsApplied: 1, quarantined: 0 });
        for (const table of ['w', '_scd_w_events', '_scd_w_changes'])
          expect((await driver.columns(table))!.find((c) => c.name === 'v')!.type, table).toMatch(/^(DECIMAL\(20,1\)|numeric\(20,1\))$/);
        const v1 = await ndjsonOf(driver, await versionQuery(driver, flow, 1));
        expect(v1).toMatch(exact(BIG));
        expect(await ndjsonOf(driver, await changesQuery(driver, flow, 1, 1))).toMatch(exact(BIG));
        const logged = await driver.query(`SELECT CAST(v AS ${driver.dialect.types.text}) AS v FROM _scd_w_events WHERE id = 1`);
        expect(logged.map((x) => String(x.v).replace(/\.0+$/, ''))).toEqual([BIG]);
        expect(await ndjsonOf(driver, await versionQuery(driver, flow, 2))).toMatch(exact('1.5'));
        // Rebuild recomputes from the log, which kept every value.
        await rebuild(driver, flow);
        expect(await ndjsonOf(driver, await versionQuery(driver, flow, 1))).toMatch(exact(BIG));
        // The first batch again: duplicates of the logged events (their hashes follow the new type).
        expect(await applyLines(driver, flow, FIRST)).toMatchObject({ eventsApplied: 0, duplicates: 2, ties: 0 });
      } finally {
        await driver.close();
      }
    });

    it('more digits after the point widen the decimal again; integers still fit', async () => {
      const flow = defineFlow(FLOW);
      const driver = await engine.open();
      try {
        await applyLines(driver, flow, FIRST);
        await applyLines(driver, flow, SECOND);
        expect(await applyLines(driver, flow, [`{"id":2,"seq":3,"v":2.25}`])).toMatchObject({ eventsApplied: 1, quarantined: 0 });
        expect((await driver.columns('w'))!.find((c) => c.name === 'v')!.type).toMatch(/^(DECIMAL\(21,2\)|numeric\(21,2\))$/);
        // (A batch of its own: PostgreSQL's reader still reads a file's integers and fractions as doubles.)
        expect(await applyLines(driver, flow, [`{"id":3,"seq":3,"v":9223372036854775807}`])).toMatchObject({ eventsApplied: 1, quarantined: 0 });
        const v3 = await ndjsonOf(driver, await versionQuery(driver, flow, 4));
        expect(v3).toMatch(exact(BIG));
        expect(v3).toMatch(exact('2.25'));
        expect(v3).toMatch(exact('9223372036854775807'));
      } finally {
        await driver.close();
      }
    });

    it('a declared double over committed integers is refused, naming the decimal that holds them; nothing changes', async () => {
      const driver = await engine.open();
      try {
        await applyLines(driver, defineFlow(FLOW), FIRST);
        const e = await applyLines(driver, defineFlow({ ...FLOW, columnTypes: { v: 'double' } }), SECOND).catch((x: unknown) => x);
        expect(e).toBeInstanceOf(ScdError);
        expect((e as ScdError).code).toBe('SCHEMA_CHANGE');
        expect((e as ScdError).oneLine()).toMatch(
          /column "v" is stored as (BIGINT|bigint), and a declared double would round its committed values.*fix: declare a decimal that holds them, e\.g\. decimal\(38,19\)/,
        );
        expect((await driver.columns('w'))!.find((c) => c.name === 'v')!.type).toMatch(/^(BIGINT|bigint)$/);
        // The fix it names works: the decimal holds the committed integers and the fraction.
        const r = await applyLines(driver, defineFlow({ ...FLOW, columnTypes: { v: 'decimal(38,19)' } }), SECOND);
        expect(r).toMatchObject({ eventsApplied: 1, quarantined: 0 });
        expect(await ndjsonOf(driver, await versionQuery(driver, defineFlow(FLOW), 1))).toMatch(exact(BIG));
      } finally {
        await driver.close();
      }
    });

    it('scd export --version 1 after the widening prints 2^53 + 1 as written (bin/scd)', async () => {
      const dir = path.join(tmp.dir, `cli-${engine.name}`);
      const { mkdirSync } = await import('node:fs');
      mkdirSync(dir);
      let database: string;
      let schema = '';
      if (engine.name === 'duckdb') database = 'w.duckdb';
      else if (engine.name === 'pglite') database = 'pglite://data';
      else {
        database = process.env.SCD_TEST_POSTGRES_URL!;
        const { freshSchema } = await import('../engines.js');
        schema = `schema: ${freshSchema()}\n`;
      }
      writeFileSync(path.join(dir, 'flow.yaml'), `target: w\nkeys: id\nsequenceBy: seq\ndatabase: ${database}\n${schema}`);
      writeFileSync(path.join(dir, 'a.ndjson'), FIRST.join('\n') + '\n');
      writeFileSync(path.join(dir, 'b.ndjson'), SECOND.join('\n') + '\n');
      for (const input of ['a.ndjson', 'b.ndjson']) {
        const r = await scd(['apply', 'flow.yaml', '--input', input], dir);
        expect(r.code, r.stderr).toBe(0);
      }
      const v1 = await scd(['export', 'flow.yaml', '--version', '1', '--format', 'ndjson'], dir);
      expect(v1.code, v1.stderr).toBe(0);
      expect(v1.stdout.split('\n')[0]).toMatch(exact(BIG));
      const rebuilt = await scd(['rebuild', 'flow.yaml'], dir);
      expect(rebuilt.code, rebuilt.stderr).toBe(0);
      const again = await scd(['export', 'flow.yaml', '--version', '1', '--format', 'ndjson'], dir);
      expect(again.stdout).toBe(v1.stdout);
      if (schema) {
        const { PostgresDriver } = await import('../../src/dialects/postgres/index.js');
        const owner = await PostgresDriver.connect(database, { schema: schema.slice('schema: '.length).trim(), dropSchemaOnClose: true });
        await owner.close();
      }
    }, 240_000); // five bin/scd runs (PGlite starts in each)
  });
}

for (const engine of engines)
  describe(`${engine.name}: a fresh column of integers and fractions`, () => {
    it('is a decimal when an integer lies beyond 2^53 (a double would round it), a double otherwise', async () => {
      const driver = await engine.open();
      const d = driver.dialect;
      const typeOf = async (table: string) => (await driver.columns(table))!.find((c) => c.name === 'v')!.type;
      try {
        await applyLines(driver, defineFlow(FLOW), [`{"id":1,"seq":1,"v":${BIG}}`, `{"id":2,"seq":1,"v":1.25}`, `{"id":3,"seq":1,"v":7}`]);
        expect(d.sameType(await typeOf('w'), d.decimal(21, 2)), await typeOf('w')).toBe(true);
        expect(await ndjsonOf(driver, await versionQuery(driver, defineFlow(FLOW), 1))).toMatch(exact(BIG));
        await applyLines(driver, defineFlow({ ...FLOW, target: 'small' }), [`{"id":1,"seq":1,"v":9007199254740992}`, `{"id":2,"seq":1,"v":1.25}`]);
        expect(d.sameType(await typeOf('small'), d.types.double), await typeOf('small')).toBe(true);
        // No decimal of 38 digits holds 30 digits before the point and 10 after: refused with the fix.
        const e = await applyLines(driver, defineFlow({ ...FLOW, target: 'wide' }), [
          `{"id":1,"seq":1,"v":123456789012345678901234567890}`,
          `{"id":2,"seq":1,"v":0.0123456789}`,
        ]).catch((x: unknown) => x);
        expect(e).toBeInstanceOf(ScdError);
        expect((e as ScdError).oneLine()).toMatch(
          /column "v" has integers beyond 2\^53 and fractions: no decimal of 38 digits holds values of 30 digits before the point and 10 after it.*fix: declare its type, e\.g\. columnTypes: \{ v: decimal\(38,8\) \}/,
        );
      } finally {
        await driver.close();
      }
    });
  });
