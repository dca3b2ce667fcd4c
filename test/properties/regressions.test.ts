/**
 * Minimal counterexamples found by the properties, kept as plain tests (the properties stay as
 * they are). Each names the rule of docs/SEMANTICS.md it checks.
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import {
  applyFiles,
  applyRows,
  compact,
  type Driver,
  defineFlow,
  type Flow,
  openDriver,
  readTargetWith,
  rebuild,
  resolveInputs,
  sharedDriver,
  startServer,
  targetQuery,
  writeRows,
} from '../../src/index.js';
import { readRows, valueText } from '../../src/query/output.js';
import { storeNames } from '../../src/store/names.js';
import { engines } from '../engines.js';
import { applyBatches } from '../helpers.js';
import { JsonNumber, parseJsonExact } from './wide-values.js';

/** The target's rows as NDJSON writes them, every number kept as its text (JsonNumber). */
async function storedExactly(driver: Driver, flow: Flow): Promise<Array<Record<string, unknown>>> {
  const dir = mkdtempSync(path.join(tmpdir(), 'scdkit-regression-'));
  try {
    const out = path.join(dir, 'target.ndjson');
    await writeRows(driver, await targetQuery(driver, flow), { format: 'ndjson', out });
    return readFileSync(out, 'utf8')
      .split('\n')
      .filter((l) => l.trim())
      .map((l) => parseJsonExact(l) as Record<string, unknown>);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** A JSON number's value as a double (-0 kept), or the text of what is not a number. */
const numberOf = (v: unknown) => (v instanceof JsonNumber ? Number(v.raw) : v === null ? null : `not a number: ${JSON.stringify(v)}`);

/** Apply one change file with these lines to a fresh target; its result and its rows, exactly. */
async function applyLines(engine: (typeof engines)[number], lines: string[], columnTypes?: Record<string, string>) {
  const dir = mkdtempSync(path.join(tmpdir(), 'scdkit-regression-'));
  const file = path.join(dir, 'changes.ndjson');
  writeFileSync(file, lines.join('\n') + '\n');
  const flow = defineFlow({ target: 't', keys: 'id', sequenceBy: 'seq', ...(columnTypes ? { columnTypes } : {}) });
  const driver = await engine.open();
  try {
    const result = await applyFiles(driver, flow, resolveInputs([file]));
    const quarantine = await driver.query(`SELECT reason, raw FROM ${driver.dialect.quote(storeNames(flow.target).quarantine)} ORDER BY line`);
    return { result, rows: await storedExactly(driver, flow), quarantine };
  } finally {
    await driver.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

for (const engine of engines) {
  describe(`${engine.name}: property regressions`, () => {
    /** A JSON -0.0 as the engine stores it: PostgreSQL's jsonb has no negative zero (decision 0170). */
    const NEGATIVE_ZERO = ['pglite', 'postgres'].includes(engine.name) ? 0 : -0;
    // TYPES.md: a number with an exponent is a double, on every engine alike. ±1e308 is a double
    // (the largest are near 1.8e308): stored as it is, never classed as a 309-digit integer (found by
    // the every-path property: on PostgreSQL the records were quarantined, or with a fraction
    // beside them the apply stopped: "integers beyond 2^53 and fractions").
    it('doubles at the edge (±1e308) are stored as they are, beside fractions', async () => {
      const { result, rows } = await applyLines(engine, ['{"id":1,"seq":1,"x":1e308}', '{"id":2,"seq":1,"x":-1e308}', '{"id":3,"seq":1,"x":0.5}']);
      expect(result.quarantined).toBe(0);
      expect(rows.map((r) => numberOf(r.x))).toEqual([1e308, -1e308, 0.5]);
    });

    it('doubles at the edge (±1e308) alone are stored, not quarantined', async () => {
      const { result, rows } = await applyLines(engine, ['{"id":1,"seq":1,"x":1e308}', '{"id":2,"seq":1,"x":-1e308}']);
      expect(result.quarantined).toBe(0);
      expect(rows.map((r) => numberOf(r.x))).toEqual([1e308, -1e308]);
    });

    // TYPES.md: a number beyond every double is quarantined, its reason naming the value as written
    // (on PostgreSQL it quoted the first 80 of jsonb's 1,000 digits of 1e999).
    it('a number beyond a double: the quarantine reason names it as written', async () => {
      const { result, quarantine } = await applyLines(engine, ['{"id":1,"seq":1,"x":1e999}', '{"id":2,"seq":1,"x":-1e999}', '{"id":3,"seq":1,"x":0.5}']);
      expect(result.quarantined).toBe(2);
      expect(quarantine.map((q) => String(q.reason).replace(/ \(.*$/, ''))).toEqual(['value 1e999 does not fit column "x"', 'value -1e999 does not fit column "x"']);
    });

    // TYPES.md: a number with an exponent is a fraction (a double's value) on every engine:
    // PostgreSQL's jsonb wrote 2e3 as the integer 2000, so a column of 2e3 and 2^53 + 1 was a column
    // of integers (decimal(38,0)) there and one of integers and fractions (decimal(20,1)) on DuckDB.
    it('a number with an exponent is a fraction, beside an integer beyond 2^53', async () => {
      const { result, rows } = await applyLines(engine, ['{"id":1,"seq":1,"x":2e3}', '{"id":2,"seq":1,"x":9007199254740993}']);
      expect(result.quarantined).toBe(0);
      expect(rows.map((r) => (r.x as JsonNumber).raw)).toEqual(['2000.0', '9007199254740993.0']);
    });

    // TYPES.md: numbers are never converted through a binary float on their way in. A declared
    // decimal holds 9007199254740993.0 exactly, written as a JSON number or as a string (found by
    // the every-path property: DuckDB stored 9007199254740992.0 from the JSON number).
    it('a declared decimal holds 9007199254740993.0 exactly, from a JSON number or a string', async () => {
      const { result, rows } = await applyLines(engine, ['{"id":1,"seq":1,"a":9007199254740993.0}', '{"id":2,"seq":1,"a":"9007199254740993.0"}', '{"id":3,"seq":1,"a":-0.5}'], {
        a: 'decimal(20,1)',
      });
      expect(result.quarantined).toBe(0);
      expect(rows.map((r) => (r.a as JsonNumber).raw)).toEqual(['9007199254740993.0', '9007199254740993.0', '-0.5']);
    });

    // Nothing stored may differ from what was read: -0.0 is a double of its own (its sign is what
    // 1/x and an atan2 see), kept as DuckDB keeps it. PostgreSQL's jsonb has no negative zero: there
    // a JSON -0.0 is 0 (decision 0170).
    it('-0.0 in a double column keeps its sign (0 on PostgreSQL, decision 0170)', async () => {
      const { rows } = await applyLines(engine, ['{"id":1,"seq":1,"x":-0.0}', '{"id":2,"seq":1,"x":0.5}']);
      expect(Object.is(numberOf(rows[0]!.x), NEGATIVE_ZERO), JSON.stringify(rows[0])).toBe(true);
    });

    // Every output format gives back every stored value: in CSV an empty string is a quoted empty
    // field (`""`), null an empty one — else the two read back alike (found by the output-formats
    // property).
    it('CSV tells an empty string from null', async () => {
      const flow = defineFlow({ target: 't', keys: 'id', sequenceBy: 'seq' });
      const driver = await engine.open();
      const dir = mkdtempSync(path.join(tmpdir(), 'scdkit-regression-'));
      try {
        await applyRows(driver, flow, [
          { id: 1, seq: 1, b: '' },
          { id: 2, seq: 1, b: null },
          { id: 3, seq: 1, b: 'x' },
        ]);
        const out = path.join(dir, 'target.csv');
        await writeRows(driver, await targetQuery(driver, flow), { format: 'csv', out });
        expect(readFileSync(out, 'utf8').split('\n').slice(1, 4)).toEqual(['1,1,"",1,', '2,1,,1,', '3,1,x,1,']);
      } finally {
        await driver.close();
        rmSync(dir, { recursive: true, force: true });
      }
    });

    // The web pages show what is stored (found by the web-pages property): a key page of a key
    // beyond 2^53 shows the key and its values as stored (it showed 9007199254740992), and a key
    // with an empty-string part is a key like any other.
    async function keyPageOf(engine: (typeof engines)[number], line: string, keys: string[], query: string): Promise<{ status: number; body: string }> {
      const dir = mkdtempSync(path.join(tmpdir(), 'scdkit-regression-'));
      const file = path.join(dir, 'changes.ndjson');
      writeFileSync(file, `${line}\n`);
      const flow = defineFlow({ target: 't', keys, sequenceBy: 'seq' });
      const driver = await engine.open();
      const server = await startServer({ flow, source: sharedDriver(driver, true), port: 0, log: () => {} });
      try {
        await applyFiles(driver, flow, resolveInputs([file]));
        const res = await fetch(new URL(`/key?${query}`, server.url));
        return { status: res.status, body: await res.text() };
      } finally {
        await server.close();
        rmSync(dir, { recursive: true, force: true });
      }
    }

    it('web key page: a key and values beyond 2^53 are shown exactly', async () => {
      const { status, body } = await keyPageOf(engine, '{"id":9007199254740993,"seq":1,"a":9007199254740995}', ['id'], 'id=9007199254740993');
      expect(status).toBe(200);
      expect(body).toContain('>9007199254740993<');
      expect(body).toContain('>9007199254740995<');
    });

    it('web key page: a key with an empty-string part has its history page', async () => {
      const { status, body } = await keyPageOf(engine, '{"id":1,"reg":"","seq":1,"a":"kept"}', ['id', 'reg'], 'id=1&reg=');
      expect(status).toBe(200);
      expect(body).toContain('>kept<');
    });

    // Every output shows what is stored: a tuple sequence's struct is shown as its JSON text, and a
    // part beyond 2^53 in it is a number there, not a quoted string (found by the output-formats
    // property: the table and CSV showed {"seq":"9007199254740995","lsn":0}).
    it('CSV and the table show a struct part beyond 2^53 as a number', async () => {
      const flow = defineFlow({ target: 't', keys: 'id', sequenceBy: ['seq', 'lsn'] });
      const driver = await engine.open();
      const dir = mkdtempSync(path.join(tmpdir(), 'scdkit-regression-'));
      try {
        await applyRows(driver, flow, [{ id: 1, seq: 9007199254740995n, lsn: 0, a: 'x' }]);
        const query = await targetQuery(driver, flow);
        const [row] = await readRows(driver, query);
        expect(valueText(row!.__START_AT)).toBe('{"seq":9007199254740995,"lsn":0}');
        const out = path.join(dir, 'target.csv');
        await writeRows(driver, query, { format: 'csv', out });
        expect(readFileSync(out, 'utf8')).toContain('"{""seq"":9007199254740995,""lsn"":0}"');
      } finally {
        await driver.close();
        rmSync(dir, { recursive: true, force: true });
      }
    });

    // Parquet keeps an empty string apart from null (found by the output-formats property: on
    // PostgreSQL the Parquet file held null for "").
    it('Parquet keeps an empty string apart from null', async () => {
      const flow = defineFlow({ target: 't', keys: 'id', sequenceBy: 'seq' });
      const driver = await engine.open();
      const dir = mkdtempSync(path.join(tmpdir(), 'scdkit-regression-'));
      try {
        await applyRows(driver, flow, [
          { id: 1, seq: 1, b: '' },
          { id: 2, seq: 1, b: null },
          { id: 3, seq: 1, b: 'x' },
        ]);
        const out = path.join(dir, 'target.parquet');
        await writeRows(driver, await targetQuery(driver, flow), { format: 'parquet', out });
        const reader = await openDriver(':memory:');
        try {
          const rows = await reader.query(`SELECT CAST(id AS INTEGER) AS id, b FROM read_parquet('${out.replace(/'/g, "''")}') ORDER BY id`);
          expect(rows).toEqual([
            { id: 1, b: '' },
            { id: 2, b: null },
            { id: 3, b: 'x' },
          ]);
        } finally {
          await reader.close();
        }
      } finally {
        await driver.close();
        rmSync(dir, { recursive: true, force: true });
      }
    });

    // The library's rows are JS values: a BigInt (a key or value beyond 2^53) is stored exactly,
    // not refused with "Do not know how to serialize a BigInt" (found by the every-path property).
    it('library rows: BigInt keys and values beyond 2^53 are stored exactly', async () => {
      const flow = defineFlow({ target: 't', keys: 'id', sequenceBy: 'seq' });
      const driver = await engine.open();
      try {
        await applyRows(driver, flow, [{ id: 9007199254740993n, seq: 1, v: -9223372036854775807n }]);
        const [row] = await storedExactly(driver, flow);
        expect([(row!.id as JsonNumber).raw, (row!.v as JsonNumber).raw]).toEqual(['9007199254740993', '-9223372036854775807']);
      } finally {
        await driver.close();
      }
    });

    // The library's rows: -0 keeps its sign (JSON.stringify writes it "0"), and ±Infinity, which no
    // column can store, is quarantined as a value that does not fit, like 1e999 in a file — never
    // stored as null (JSON.stringify writes it "null"): found by the every-path property. NaN, no
    // number JSON can write, is quarantined too (decision 0171).
    it('library rows: -0 keeps its sign; ±Infinity is quarantined, not stored as null', async () => {
      const flow = defineFlow({ target: 't', keys: 'id', sequenceBy: 'seq' });
      const driver = await engine.open();
      try {
        const r = await applyRows(driver, flow, [
          { id: 1, seq: 1, x: -0 },
          { id: 2, seq: 1, x: 0.5 },
          { id: 3, seq: 1, x: Infinity },
          { id: 4, seq: 1, x: -Infinity },
          { id: 5, seq: 1, x: NaN },
        ]);
        expect(r.quarantined).toBe(3);
        const rows = await storedExactly(driver, flow);
        expect(rows.map((x) => numberOf(x.id))).toEqual([1, 2]);
        expect(Object.is(numberOf(rows[0]!.x), NEGATIVE_ZERO), JSON.stringify(rows[0])).toBe(true);
      } finally {
        await driver.close();
      }
    });

    // SEMANTICS §1: the current version has __END_AT null; §3: __START_AT/__END_AT typed like the
    // sequence, a tuple sequence stored as a struct of its parts (named like the source columns).
    it('tuple sequence: the current version ends at null, and the struct keeps the column names', async () => {
      const { rows } = await applyBatches({ target: 't', keys: 'id', sequenceBy: ['seq', 'lsn'] }, [[{ id: 1, seq: 0, lsn: 0, v: 'a' }]], engine);
      expect(rows).toEqual([{ id: 1, seq: 0, lsn: 0, v: 'a', __START_AT: { seq: 0, lsn: 0 }, __END_AT: null }]);
    });

    it('tuple sequence: closing the current version counts as a version closed (SEMANTICS §5)', async () => {
      const { results } = await applyBatches(
        { target: 't', keys: 'id', sequenceBy: ['seq', 'lsn'] },
        [[{ id: 1, seq: 1, lsn: 0, v: 'a' }], [{ id: 1, seq: 2, lsn: 0, v: 'b' }]],
        engine,
      );
      expect(results[1]!.versionsClosed).toBe(1);
    });

    // docs/decisions/0003 (ties counted) + 0002 (truncates ignore the key, stored as null): two truncates at one
    // sequence with different payloads are two events sharing key (null) and sequence: two ties.
    it('two different truncates at one sequence are counted as ties', async () => {
      const { results } = await applyBatches(
        { target: 't', keys: 'id', sequenceBy: 'seq', applyAsTruncates: "op = 'T'" },
        [
          [{ id: 1, seq: 0, op: 'U', a: 1 }],
          [
            { id: null, seq: 5, op: 'T', a: 1 },
            { id: null, seq: 5, op: 'T', a: 2 },
          ],
        ],
        engine,
      );
      expect(results[1]!.eventsApplied).toBe(2);
      expect(results[1]!.ties).toBe(2);
    });

    // SEMANTICS §3 ties: then ordered by the payload's canonical text, whether or not a commit
    // counted them. A log can hold ties no commit counted (one re-derived under a changed flow);
    // then the walk finds them itself and orders them in full (recompute.ts walkKeys).
    it('ties no commit counted: a rebuild still orders them by their payload', async () => {
      const flow = defineFlow({ target: 't', keys: 'id', sequenceBy: 'seq' });
      const driver = await engine.open();
      try {
        // 24 keys, each with two events at one sequence, the later-ordered one first in half of them.
        const events = Array.from({ length: 24 }, (_, id) => {
          const pair = [
            { id, seq: 1, a: `x${id}` },
            { id, seq: 1, a: `y${id}` },
          ];
          return id % 2 ? pair : pair.reverse();
        }).flat();
        const applied = await applyRows(driver, flow, events);
        expect(applied.ties).toBe(48);
        const built = await readTargetWith(driver, flow);
        expect(built.map((r) => r.a)).toEqual(Array.from({ length: 24 }, (_, id) => `y${id}`));
        await driver.run(`UPDATE ${driver.dialect.quote(storeNames(flow.target).commits)} SET ties = 0 WHERE target = 't'`);
        const r = await rebuild(driver, flow);
        expect(r.versionsAdded + r.versionsChanged + r.versionsRemoved).toBe(0);
        expect(await readTargetWith(driver, flow)).toEqual(built);
      } finally {
        await driver.close();
      }
    });

    // SEMANTICS §4 surrogateKey: a version keeps its key across rebuilds and replays. An
    // scd1 row does not store its version's start, so batch by batch must still name the version
    // by the start the whole history gives it (found by the paths property).
    it('scd1 surrogate key: three same-valued events in three batches = the same events at once', async () => {
      const flow = { target: 't', keys: 'id', sequenceBy: 'seq', storedAs: 'scd1' as const, surrogateKey: 'sk' };
      const events = [1, 2, 3].map((seq) => ({ id: 1, seq, a: 1 }));
      const split = await applyBatches(
        flow,
        events.map((e) => [e]),
        engine,
      );
      const whole = await applyBatches(flow, [events], engine);
      expect(split.rows).toEqual(whole.rows);
      expect(split.rows).toHaveLength(1);
    });

    // SEMANTICS §4 deletes: "tombstone": a delete opens a tombstone version only when it ends one; a
    // delete with nothing live before it (a key's first event, or after another delete) changes
    // nothing (found by mutating the one-sort walk: the properties do not compare tombstones).
    it('tombstones: a delete with nothing live before it opens no version', async () => {
      const flow = { target: 't', keys: 'id', sequenceBy: 'seq', applyAsDeletes: "op = 'D'", deletes: 'tombstone' as const };
      const events = [
        { id: 1, seq: 1, op: 'D', a: null },
        { id: 2, seq: 1, op: 'D', a: null },
        { id: 2, seq: 2, op: 'U', a: 5 },
        { id: 3, seq: 1, op: 'U', a: 7 },
        { id: 3, seq: 2, op: 'D', a: null },
        { id: 3, seq: 3, op: 'D', a: null },
        { id: 4, seq: 1, op: 'D', a: null },
        { id: 4, seq: 2, op: 'D', a: null },
      ];
      for (const batches of [[events], events.map((e) => [e])]) {
        const { rows } = await applyBatches(flow, batches, engine);
        expect(rows.map((r) => [r.id, r.a, r.__DELETED, r.__START_AT, r.__END_AT])).toEqual([
          [2, 5, false, 2, null],
          [3, 7, false, 1, 2],
          [3, null, true, 2, null],
        ]);
      }
    });

    // Compaction (docs/decisions/0014): a rebuild after compacting changes nothing (found by the compact
    // property: a tuple sequence, scd1, and a payload column that is a sequence part).
    it('scd1, tuple sequence: rebuild after compaction keeps the latest event', async () => {
      const flow = defineFlow({
        target: 'dim',
        keys: ['id'],
        sequenceBy: ['seq', 'lsn'],
        storedAs: 'scd1',
        applyAsDeletes: "op = 'D'",
        exceptColumns: ['seq', 'b'],
      });
      const batch = [
        { id: 2, reg: 'n', seq: 0, lsn: 2, op: 'U', a: 2, b: 'x', c: 1 },
        { id: 1, reg: 's', seq: 2, lsn: 2, op: 'U', a: 3, b: 'x', c: 1 },
        { id: 1, reg: 's', seq: 2, lsn: 2, op: 'U', a: 2, b: 'x', c: 1 },
        { id: 1, reg: 's', seq: 7, lsn: 1, op: 'U', a: 3, b: null, c: null },
        { id: 2, reg: 'n', seq: 6, lsn: 0, op: 'U', a: 2, b: null, c: 1 },
        { id: 2, reg: 'n', seq: 0, lsn: 2, op: 'U', a: 2, b: 'x', c: 1 },
        { id: 1, reg: 'n', seq: 0, lsn: 0, op: 'U', a: 2, b: null, c: null },
        { id: 2, reg: 'n', seq: 0, lsn: 2, op: 'U', a: 2, b: 'x', c: 1 },
        { id: 2, reg: 'n', seq: 0, lsn: 2, op: 'U', a: 2, b: 'x', c: 1 },
      ];
      const driver = await engine.open();
      try {
        await applyRows(driver, flow, batch);
        const before = await readTargetWith(driver, flow);
        expect(before.find((r) => r.id === 2)).toMatchObject({ lsn: 0 });
        await compact(driver, flow, '8');
        expect(await readTargetWith(driver, flow)).toEqual(before);
        await rebuild(driver, flow);
        expect(await readTargetWith(driver, flow)).toEqual(before);
      } finally {
        await driver.close();
      }
    });
  });
}
