/**
 * Debezium envelopes (SEMANTICS §2): realistic PostgreSQL and MySQL connector events in
 * fixtures/debezium/, with and without the Kafka Connect schema/payload wrapper. c/r/u upsert
 * `after`, d deletes the key of `before`, t truncates; the default sequence is source.ts_ms
 * with the connector's position as tie breaker ([ts_ms, lsn] for PostgreSQL, [ts_ms, file, pos]
 * for MySQL, ...; ts_ms alone where no record carries one);
 * Kafka tombstones are skipped and counted; an op the engine does not know is quarantined.
 * Expected targets written by hand.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { isInteger, members, type Span, scanDocument, textOf } from '../../src/files/json-text.js';
import { applySourceWith, type Driver, defineFlow, exportTargetWith, type Flow, readTargetWith, rebuild } from '../../src/index.js';
import { engines } from '../engines.js';
import { expectAccounted, FIXTURES, mkdir, plain, quarantined, type Row, tempDir } from './fixtures/util.js';

let tmp: { dir: string; cleanup: () => void };
beforeAll(() => {
  tmp = tempDir();
});
afterAll(() => tmp.cleanup());

const PG = path.join(FIXTURES, 'debezium', 'postgres');
const MYSQL = path.join(FIXTURES, 'debezium', 'mysql');

// PostgreSQL: source.ts_ms of each transaction (S = 2024-05-30T09:00:00Z) and source.lsn.
const S = 1717059600000;
const at = (dt: number, lsn: number) => ({ _ts_ms: S + dt, _lsn: lsn });
const SNAP = at(0, 34490840);
const C1005 = at(60_000, 34491200);
const U1001 = at(120_000, 34491600);
const U1002A = at(180_000, 34492000); // same transaction as U1002B: the lsn orders them
const U1002B = at(180_000, 34492100);
const D1004 = at(240_000, 34492400);
const PK_CHANGE = at(300_000, 34492800); // delete 1003 + create 1006
const TRUNCATE = at(360_000, 34493200);
const C1007 = at(420_000, 34493600);
const C1001 = at(420_000, 34493700);

const cust = (id: number, first_name: string, last_name: string, email: string, start: unknown, end: unknown): Row => ({
  id,
  first_name,
  last_name,
  email,
  __START_AT: start,
  __END_AT: end,
});

const PG_SCD2: Row[] = [
  cust(1001, 'Sally', 'Thomas', 'sally.thomas@acme.com', SNAP, U1001),
  cust(1001, 'Sally', 'Thomas', 'sally.t@acme.com', U1001, TRUNCATE),
  cust(1001, 'Sally', 'Thomas', 'sally.thomas@acme.com', C1001, null),
  cust(1002, 'George', 'Bailey', 'gbailey@foobar.com', SNAP, U1002A),
  cust(1002, 'George', 'Bailey-Smith', 'gbailey@foobar.com', U1002A, U1002B),
  cust(1002, 'G.', 'Bailey-Smith', 'gbailey@foobar.com', U1002B, TRUNCATE),
  cust(1003, 'Edward', 'Walker', 'ed@walker.com', SNAP, PK_CHANGE),
  cust(1004, 'Anne', 'Kretchmar', 'annek@noanswer.org', SNAP, D1004),
  cust(1005, 'John', 'Doe', 'john.doe@example.com', C1005, TRUNCATE),
  cust(1006, 'Edward', 'Walker', 'ed@walker.com', PK_CHANGE, TRUNCATE),
  cust(1007, 'Ana', 'Lima', 'ana@lima.pt', C1007, null),
];

// MySQL: source.ts_ms (M = 2024-05-31T09:00:00Z); ties of ts_ms are broken by binlog file and position.
const M = 1717146000000;
const prod = (id: number, name: string, description: string, weight: number, start: number, end: number | null): Row => ({
  id,
  name,
  description,
  weight,
  start,
  end,
});
const MYSQL_SCD2: Row[] = [
  prod(101, 'scooter', 'Small 2-wheel scooter', 3.14, M, M + 120_000),
  prod(101, 'scooter', 'Small 2-wheel scooter', 5.18, M + 120_000, null),
  prod(102, 'car battery', '12V car battery', 8.1, M, M + 180_000), // ends at mysql-bin.000003:1230
  prod(102, 'car battery', '12V car battery, 70Ah', 8.1, M + 180_000, M + 180_000), // 000003:1230 → 000003:1650
  prod(102, 'car battery', '12V car battery, 70Ah', 8.5, M + 180_000, M + 360_000), // deleted by the key change to 105
  prod(103, '12-pack drill bits', '12-pack of drill bits with sizes ranging from #40 to #3', 0.8, M, M + 240_000),
  prod(104, 'hammer', "12oz carpenter's hammer", 0.75, M + 60_000, M + 300_000), // ends at 000003:9050
  prod(104, 'claw hammer', "12oz carpenter's hammer", 0.75, M + 300_000, M + 300_000), // 000003:9050 → 000004:157
  prod(104, 'claw hammer', "12oz carpenter's hammer", 0.8, M + 300_000, null), // 000004:157, arrived first
  prod(105, 'car battery', '12V car battery, 70Ah', 8.5, M + 360_000, null),
];

type Seq = { _ts_ms: number; _lsn: number } | null;
// MySQL's sequence: ts_ms, then the binlog file (as text) and the position in it (as an integer).
type BinlogSeq = { _ts_ms: number; _file: string; _pos: number } | null;
const before = (a: BinlogSeq, b: BinlogSeq) =>
  a !== null && (b === null || a._ts_ms < b._ts_ms || (a._ts_ms === b._ts_ms && (a._file < b._file || (a._file === b._file && a._pos < b._pos))));

/** A JSON value read from its text as written: integers as bigints (no rounding above 2^53). */
function exact(text: string, span: Span): unknown {
  if (span.kind === 'object') return Object.fromEntries(members(text, span).map((m) => [m.name, exact(text, m.value)]));
  if (isInteger(text, span)) return BigInt(textOf(text, span));
  return JSON.parse(textOf(text, span));
}

/** The target exported as NDJSON, read exactly. */
async function exported(driver: Driver, flow: Flow, dir: string): Promise<Row[]> {
  const out = path.join(dir, `${flow.target}.ndjson`);
  await exportTargetWith(driver, flow, { format: 'ndjson', out });
  return readFileSync(out, 'utf8')
    .split('\n')
    .filter((l) => l !== '')
    .map((l) => exact(l, scanDocument(l)) as Row);
}

/** A folder holding one file of the given lines, written as they are. */
function landing(name: string, lines: Array<string | Buffer>, file = 'events.json'): string {
  const dir = mkdir(tmp.dir, name);
  writeFileSync(path.join(dir, file), Buffer.concat(lines.map((l) => Buffer.concat([Buffer.from(l), Buffer.from('\n')]))));
  return dir;
}

const dbz = (op: string, image: string, source: string) => `{"before":null,"after":${image},"source":${source},"op":"${op}","ts_ms":${S + 999_000}}`;

for (const engine of engines) {
  describe(`Debezium envelopes on ${engine.name}`, () => {
    it('PostgreSQL connector: wrapped snapshot reads, unwrapped stream; c, r, u, d, t, tombstones, an unknown op, a key change (SCD2)', async () => {
      const flow = defineFlow({ target: 'customers', keys: ['id'], source: { path: PG, format: 'debezium' } });
      const driver = await engine.open();
      try {
        const report = await applySourceWith(driver, flow);
        expect(report.results).toHaveLength(1);
        const r = report.results[0]!;
        expect(r.inputs.map((i) => path.basename(i))).toEqual(['0001-snapshot.json', '0002-stream.json']);
        // 17 lines: 2 Kafka tombstones skipped, 1 unknown op quarantined, 14 events.
        expect(r).toMatchObject({ rowsRead: 17, skipped: 2, quarantined: 1, eventsApplied: 14, duplicates: 0, ties: 0 });
        expectAccounted(r);
        const q = await quarantined(driver, 'customers');
        expect(q.map((x) => [x.file, x.line])).toEqual([['0002-stream.json', 10]]);
        expect(q[0]!.reason).toMatch(/unknown Debezium op "m"/);
        expect(JSON.parse(q[0]!.raw)).toMatchObject({ op: 'm', message: { prefix: 'audit' } });

        // The envelope's own columns (_op, _ts_ms, _lsn) are not target columns.
        expect(plain(await readTargetWith(driver, flow))).toEqual(PG_SCD2);

        // Applying the folder again finds nothing new.
        const again = await applySourceWith(driver, flow);
        expect(again.results).toEqual([]);
        expect(again.alreadyApplied).toBe(2);
      } finally {
        await driver.close();
      }
    });

    it('PostgreSQL connector, SCD1: only the keys live after the truncate', async () => {
      const flow = defineFlow({ target: 'customers', keys: ['id'], storedAs: 'scd1', source: { path: PG, format: 'debezium' } });
      const driver = await engine.open();
      try {
        const r = (await applySourceWith(driver, flow)).results[0]!;
        expectAccounted(r);
        expect(plain(await readTargetWith(driver, flow))).toEqual([
          { id: 1001, first_name: 'Sally', last_name: 'Thomas', email: 'sally.thomas@acme.com' },
          { id: 1007, first_name: 'Ana', last_name: 'Lima', email: 'ana@lima.pt' },
        ]);
      } finally {
        await driver.close();
      }
    });

    it('the sequence is overridable: sequenceBy: _lsn (the log position alone)', async () => {
      const flow = defineFlow({ target: 'customers', keys: ['id'], sequenceBy: '_lsn', source: { path: PG, format: 'debezium' } });
      const driver = await engine.open();
      try {
        expectAccounted((await applySourceWith(driver, flow)).results[0]!);
        const lsn = (s: { _lsn: number } | null) => (s === null ? null : s._lsn);
        expect(plain(await readTargetWith(driver, flow))).toEqual(PG_SCD2.map((r) => ({ ...r, __START_AT: lsn(r.__START_AT as Seq), __END_AT: lsn(r.__END_AT as Seq) })));
      } finally {
        await driver.close();
      }
    });

    it('lines that are not envelopes are quarantined with line and reason; every line accounted for', async () => {
      const dir = mkdir(tmp.dir, `bad-${engine.name}`);
      const src = { version: '2.7.3.Final', connector: 'postgresql', name: 'dbserver1', ts_ms: S, db: 'inventory', schema: 'inventory', table: 'customers', txId: 1, lsn: 100 };
      const lines: Array<string | Buffer> = [
        JSON.stringify({ before: null, after: { id: 1, first_name: 'A', last_name: 'B', email: 'a@b' }, source: src, op: 'c', ts_ms: S }), // 1 good
        '{"before":null,"after":{"id":2', // 2 truncated
        '"just text"', // 3 not an object
        JSON.stringify({ before: null, after: { id: 3 }, source: src }), // 4 no op
        JSON.stringify({ before: null, after: null, source: src, op: 'u', ts_ms: S }), // 5 update without after
        JSON.stringify({ before: null, after: null, source: src, op: 'd', ts_ms: S }), // 6 delete without before (REPLICA IDENTITY NOTHING)
        Buffer.from([0x7b, 0x22, 0xc3, 0x28, 0x22, 0x3a, 0x31, 0x7d]), // 7 invalid UTF-8
        JSON.stringify({ schema: { type: 'struct' }, payload: null }), // 8 a tombstone with the wrapper
        'null', // 9 a tombstone
        '', // 10 empty: not a record
        JSON.stringify({ before: null, after: { id: null, first_name: 'no key' }, source: { ...src, lsn: 101 }, op: 'c', ts_ms: S }), // 11 null key
        JSON.stringify({ before: null, after: { id: 4, first_name: 'no ts' }, source: { lsn: 102 }, op: 'c' }), // 12 no ts_ms anywhere
      ];
      writeFileSync(path.join(dir, 'events.json'), Buffer.concat(lines.map((l) => Buffer.concat([Buffer.from(l), Buffer.from('\n')]))));
      const flow = defineFlow({ target: 'customers', keys: ['id'], source: { path: dir, format: 'debezium' } });
      const driver = await engine.open();
      try {
        const r = (await applySourceWith(driver, flow)).results[0]!;
        expectAccounted(r);
        expect(r).toMatchObject({ rowsRead: 11, eventsApplied: 1, skipped: 2, quarantined: 8, duplicates: 0 });
        const q = await quarantined(driver, 'customers');
        expect(q.map((x) => x.line)).toEqual([2, 3, 4, 5, 6, 7, 11, 12]);
        const reasons = q.map((x) => x.reason);
        expect(reasons[0]).toMatch(/malformed JSON/);
        expect(reasons[1]).toMatch(/not a Debezium envelope/);
        expect(reasons[2]).toMatch(/no "op"/);
        expect(reasons[3]).toMatch(/without "after"/);
        expect(reasons[4]).toMatch(/without "before"/);
        expect(reasons[5]).toMatch(/invalid UTF-8/);
        expect(reasons[6]).toMatch(/key column "id" is null/);
        expect(reasons[7]).toMatch(/sequence column "_ts_ms" is null/);
      } finally {
        await driver.close();
      }
    });

    it('MySQL connector: binlog file and position break ties of ts_ms; a key change; tombstones with and without the wrapper', async () => {
      const flow = defineFlow({ target: 'products', keys: ['id'], source: { path: MYSQL, format: 'debezium' } });
      const driver = await engine.open();
      try {
        const report = await applySourceWith(driver, flow, { each: true });
        expect(report.results.map((c) => [path.basename(c.inputs[0]!), c.rowsRead, c.skipped, c.quarantined, c.eventsApplied])).toEqual([
          ['0001-binlog.000003.json', 9, 1, 0, 8],
          ['0002-binlog.000004.json', 5, 1, 0, 4],
        ]);
        report.results.forEach(expectAccounted);

        const rows = plain(await readTargetWith(driver, flow));
        expect(
          rows.map(({ __START_AT, __END_AT, ...r }) => ({
            ...r,
            start: (__START_AT as BinlogSeq)!._ts_ms,
            end: __END_AT === null ? null : (__END_AT as BinlogSeq)!._ts_ms,
          })),
        ).toEqual(MYSQL_SCD2);
        expect(Object.keys(rows[0]!.__START_AT as object)).toEqual(['_ts_ms', '_file', '_pos']);
        // Versions of a key follow each other: each ends where the next starts, strictly later.
        for (let i = 0; i < rows.length; i++) {
          const r = rows[i]!;
          expect(before(r.__START_AT as BinlogSeq, r.__END_AT as BinlogSeq), JSON.stringify(r)).toBe(true);
          const next = rows[i + 1];
          if (next && next.id === r.id) expect(next.__START_AT).toEqual(r.__END_AT);
        }
      } finally {
        await driver.close();
      }
    });

    it('integer keys above 2^53 stay distinct and exact: two keys, no tie', async () => {
      const src = `{"connector":"postgresql","ts_ms":${S}}`;
      const dir = landing(`big-keys-${engine.name}`, [dbz('c', '{"id":1234567890123456789,"name":"a"}', src), dbz('c', '{"id":1234567890123456790,"name":"b"}', src)]);
      const flow = defineFlow({ target: 'big', keys: ['id'], source: { path: dir, format: 'debezium' } });
      const driver = await engine.open();
      try {
        const r = (await applySourceWith(driver, flow)).results[0]!;
        expect(r).toMatchObject({ rowsRead: 2, eventsApplied: 2, ties: 0, quarantined: 0 });
        expect(await exported(driver, flow, dir)).toEqual([
          { id: 1234567890123456789n, name: 'a', __START_AT: BigInt(S), __END_AT: null },
          { id: 1234567890123456790n, name: 'b', __START_AT: BigInt(S), __END_AT: null },
        ]);
      } finally {
        await driver.close();
      }
    });

    it('an LSN above 2^53 is exact: it orders two events of one millisecond', async () => {
      const src = (lsn: string) => `{"connector":"postgresql","ts_ms":${S},"txId":7,"lsn":${lsn}}`;
      // The update comes first in the file: only the LSN puts it after the create.
      const dir = landing(`big-lsn-${engine.name}`, [
        dbz('u', '{"id":1,"name":"a"}', src('9007199254740993')),
        dbz('c', '{"id":1,"name":"b"}', src('9007199254740992')),
        dbz('c', '{"id":2,"name":"c"}', src('9223372036854775807')),
      ]);
      const flow = defineFlow({ target: 'lsn', keys: ['id'], source: { path: dir, format: 'debezium' } });
      const driver = await engine.open();
      try {
        const r = (await applySourceWith(driver, flow)).results[0]!;
        expect(r).toMatchObject({ eventsApplied: 3, ties: 0, quarantined: 0 });
        const at = (lsn: bigint) => ({ _ts_ms: BigInt(S), _lsn: lsn });
        expect(await exported(driver, flow, dir)).toEqual([
          { id: 1n, name: 'b', __START_AT: at(9007199254740992n), __END_AT: at(9007199254740993n) },
          { id: 1n, name: 'a', __START_AT: at(9007199254740993n), __END_AT: null },
          { id: 2n, name: 'c', __START_AT: at(9223372036854775807n), __END_AT: null },
        ]);
      } finally {
        await driver.close();
      }
    });

    it('a stream whose records carry no position is sequenced by ts_ms alone: a plain column, not a struct', async () => {
      const dir = landing(`no-position-${engine.name}`, [
        dbz('c', '{"id":1,"name":"a"}', `{"connector":"postgresql","ts_ms":${S}}`),
        dbz('u', '{"id":1,"name":"b"}', `{"connector":"postgresql","ts_ms":${S + 1000}}`),
        `{"before":null,"after":{"id":2,"name":"c"},"op":"c","ts_ms":${S + 2000}}`, // no source: the envelope's ts_ms
      ]);
      const flow = defineFlow({ target: 'plain', keys: ['id'], source: { path: dir, format: 'debezium' } });
      const driver = await engine.open();
      try {
        expectAccounted((await applySourceWith(driver, flow)).results[0]!);
        const types = Object.fromEntries(((await driver.columns('plain')) ?? []).map((c) => [c.name, c.type]));
        expect(Object.keys(types)).toEqual(['id', 'name', '__START_AT', '__END_AT']);
        expect(types.__START_AT).toMatch(/^bigint$/i);
        expect(await exported(driver, flow, dir)).toEqual([
          { id: 1n, name: 'a', __START_AT: BigInt(S), __END_AT: BigInt(S + 1000) },
          { id: 1n, name: 'b', __START_AT: BigInt(S + 1000), __END_AT: null },
          { id: 2n, name: 'c', __START_AT: BigInt(S + 2000), __END_AT: null },
        ]);
      } finally {
        await driver.close();
      }
    });

    it('the stored model decides later commits: positions a target does not have are ignored, missing ones quarantined', async () => {
      const first = landing(`stable-${engine.name}`, [dbz('c', '{"id":1,"name":"a"}', `{"ts_ms":${S}}`)], '0001.json');
      writeFileSync(path.join(first, '0002.json'), dbz('u', '{"id":1,"name":"b"}', `{"ts_ms":${S + 1000},"lsn":5}`) + '\n');
      const flow = defineFlow({ target: 'stable', keys: ['id'], source: { path: first, format: 'debezium' } });
      const pg = landing(`stable-pg-${engine.name}`, [dbz('c', '{"id":1,"name":"a"}', `{"ts_ms":${S},"lsn":5}`)], '0001.json');
      writeFileSync(path.join(pg, '0002.json'), dbz('u', '{"id":1,"name":"b"}', `{"ts_ms":${S + 1000}}`) + '\n');
      const pgFlow = defineFlow({ target: 'stable_pg', keys: ['id'], source: { path: pg, format: 'debezium' } });
      const driver = await engine.open();
      try {
        // Created without positions: ts_ms alone, also for a later file whose records have an LSN.
        const plainRun = await applySourceWith(driver, flow, { each: true });
        expect(plainRun.results.map((c) => [c.eventsApplied, c.quarantined])).toEqual([
          [1, 0],
          [1, 0],
        ]);
        const plainRows = [
          { id: 1n, name: 'a', __START_AT: BigInt(S), __END_AT: BigInt(S + 1000) },
          { id: 1n, name: 'b', __START_AT: BigInt(S + 1000), __END_AT: null },
        ];
        expect(await exported(driver, flow, first)).toEqual(plainRows);
        // A rebuild keeps it too.
        await rebuild(driver, flow);
        expect(await exported(driver, flow, first)).toEqual(plainRows);
        // Created with an LSN: a later record without one cannot be placed.
        const pgRun = await applySourceWith(driver, pgFlow, { each: true });
        expect(pgRun.results.map((c) => [c.eventsApplied, c.quarantined])).toEqual([
          [1, 0],
          [0, 1],
        ]);
        expect((await quarantined(driver, 'stable_pg'))[0]!.reason).toMatch(/sequence column "_lsn" is null/);
      } finally {
        await driver.close();
      }
    });

    it('records carrying the positions of two connectors are refused, naming the fix; sequenceBy settles it', async () => {
      const dir = landing(`two-connectors-${engine.name}`, [
        dbz('c', '{"id":1,"name":"a"}', `{"connector":"postgresql","ts_ms":${S},"lsn":5}`),
        dbz('c', '{"id":2,"name":"b"}', `{"connector":"mysql","ts_ms":${S},"file":"mysql-bin.000001","pos":4}`),
      ]);
      const driver = await engine.open();
      try {
        const flow = defineFlow({ target: 'mixed', keys: ['id'], source: { path: dir, format: 'debezium' } });
        const e = await applySourceWith(driver, flow).then(
          () => undefined,
          (err: unknown) => err as { message: string; fix?: string },
        );
        expect(e?.message).toMatch(/log positions of 2 connectors \(PostgreSQL: source\.lsn; MySQL: source\.file, source\.pos\)/);
        expect(e?.fix).toMatch(/set sequenceBy/);
        const chosen = defineFlow({ target: 'mixed', keys: ['id'], sequenceBy: '_ts_ms', source: { path: dir, format: 'debezium' } });
        expect((await applySourceWith(driver, chosen)).results[0]!).toMatchObject({ eventsApplied: 2, quarantined: 0 });
        // The positions of both are excepted from the output.
        expect(Object.keys((await exported(driver, chosen, dir))[0]!)).toEqual(['id', 'name', '__START_AT', '__END_AT']);
      } finally {
        await driver.close();
      }
    });

    it('MySQL: ties of ts_ms are broken by the binlog file (as text), then the position in it (as an integer)', async () => {
      const src = (file: string, pos: number) =>
        `{"version":"2.7.3.Final","connector":"mysql","name":"mysql1","ts_ms":${M},"snapshot":"false","db":"inventory","table":"products","server_id":223344,"gtid":null,"file":"${file}","pos":${pos},"row":0,"thread":7,"query":null}`;
      // In the file's order; the payloads sort against the log's order, so a tie would show.
      const dir = landing(`mysql-ties-${engine.name}`, [
        dbz('u', '{"id":1,"name":"a"}', src('mysql-bin.000010', 1000)),
        dbz('u', '{"id":1,"name":"c"}', src('mysql-bin.000010', 4)),
        dbz('c', '{"id":1,"name":"d"}', src('mysql-bin.000009', 5000)),
        dbz('u', '{"id":1,"name":"b"}', src('mysql-bin.000010', 900)),
      ]);
      const flow = defineFlow({ target: 'products', keys: ['id'], source: { path: dir, format: 'debezium' } });
      const driver = await engine.open();
      try {
        expect((await applySourceWith(driver, flow)).results[0]!).toMatchObject({ eventsApplied: 4, ties: 0 });
        const at = (file: string, pos: bigint) => ({ _ts_ms: BigInt(M), _file: file, _pos: pos });
        expect(await exported(driver, flow, dir)).toEqual([
          { id: 1n, name: 'd', __START_AT: at('mysql-bin.000009', 5000n), __END_AT: at('mysql-bin.000010', 4n) },
          { id: 1n, name: 'c', __START_AT: at('mysql-bin.000010', 4n), __END_AT: at('mysql-bin.000010', 900n) },
          { id: 1n, name: 'b', __START_AT: at('mysql-bin.000010', 900n), __END_AT: at('mysql-bin.000010', 1000n) },
          { id: 1n, name: 'a', __START_AT: at('mysql-bin.000010', 1000n), __END_AT: null },
        ]);
      } finally {
        await driver.close();
      }
    });

    it('SQL Server: the commit LSN, then the change LSN (hex text) break ties; a snapshot read stands at its commit LSN', async () => {
      const src = (ts: number, change: string | null, commit: string, snapshot: string) =>
        `{"version":"2.7.3.Final","connector":"sqlserver","name":"server1","ts_ms":${ts},"snapshot":"${snapshot}","db":"testDB","schema":"dbo","table":"customers",` +
        `"change_lsn":${change === null ? 'null' : `"${change}"`},"commit_lsn":"${commit}","event_serial_no":${change === null ? 'null' : 2}}`;
      const T = S + 60_000;
      const dir = landing(`sqlserver-${engine.name}`, [
        dbz('u', '{"id":1001,"email":"a@x"}', src(T, '0000002b:000001a0:000a', '0000002b:000001a8:0003', 'false')),
        dbz('r', '{"id":1001,"email":"c@x"}', src(S, null, '0000002b:00000138:0001', 'last')),
        dbz('u', '{"id":1001,"email":"b@x"}', src(T, '0000002b:000001a0:0009', '0000002b:000001a8:0003', 'false')),
        dbz('u', '{"id":1001,"email":"0@x"}', src(T, '0000002b:000001b0:0002', '0000002b:000001b8:0004', 'false')),
      ]);
      const flow = defineFlow({ target: 'customers', keys: ['id'], source: { path: dir, format: 'debezium' } });
      const driver = await engine.open();
      try {
        expect((await applySourceWith(driver, flow)).results[0]!).toMatchObject({ eventsApplied: 4, ties: 0 });
        const at = (ts: number, commit: string, change: string) => ({ _ts_ms: BigInt(ts), _commit_lsn: commit, _change_lsn: change });
        const snap = at(S, '0000002b:00000138:0001', '0000002b:00000138:0001');
        const first = at(T, '0000002b:000001a8:0003', '0000002b:000001a0:0009');
        const second = at(T, '0000002b:000001a8:0003', '0000002b:000001a0:000a');
        const third = at(T, '0000002b:000001b8:0004', '0000002b:000001b0:0002');
        expect(await exported(driver, flow, dir)).toEqual([
          { id: 1001n, email: 'c@x', __START_AT: snap, __END_AT: first },
          { id: 1001n, email: 'b@x', __START_AT: first, __END_AT: second },
          { id: 1001n, email: 'a@x', __START_AT: second, __END_AT: third },
          { id: 1001n, email: '0@x', __START_AT: third, __END_AT: null },
        ]);
      } finally {
        await driver.close();
      }
    });

    it('MongoDB: ord breaks ties of ts_ms (whole seconds); the document is JSON text, read exactly', async () => {
      const src = (ord: number) =>
        `{"version":"2.7.3.Final","connector":"mongodb","name":"dbserver1","ts_ms":${M},"snapshot":"false","db":"inventory","rs":"rs0","collection":"customers","ord":${ord}}`;
      const doc = (name: string) => JSON.stringify(`{\n  "_id": 1234567890123456789,\n  "name": "${name}",\n  "address": {\n    "city": "Lisboa"\n  }\n}`);
      const dir = landing(`mongodb-${engine.name}`, [
        `{"after":${doc('a')},"source":${src(2)},"op":"u","ts_ms":${M + 5}}`,
        `{"after":${doc('b')},"source":${src(1)},"op":"c","ts_ms":${M + 5}}`,
      ]);
      const flow = defineFlow({ target: 'customers', keys: ['_id'], source: { path: dir, format: 'debezium' } });
      const driver = await engine.open();
      try {
        expect((await applySourceWith(driver, flow)).results[0]!).toMatchObject({ eventsApplied: 2, ties: 0 });
        const at = (ord: bigint) => ({ _ts_ms: BigInt(M), _ord: ord });
        const address = { city: 'Lisboa' };
        expect(await exported(driver, flow, dir)).toEqual([
          { _id: 1234567890123456789n, name: 'b', address, __START_AT: at(1n), __END_AT: at(2n) },
          { _id: 1234567890123456789n, name: 'a', address, __START_AT: at(2n), __END_AT: null },
        ]);
      } finally {
        await driver.close();
      }
    });

    it('Oracle: the scn, given as digits, breaks ties as an integer, exactly', async () => {
      const src = (scn: string) =>
        `{"version":"2.7.3.Final","connector":"oracle","name":"server1","ts_ms":${S},"snapshot":"false","db":"ORCLPDB1","schema":"DEBEZIUM","table":"CUSTOMERS","txId":"6a0017001f040000","scn":"${scn}","commit_scn":"${scn}"}`;
      const dir = landing(`oracle-${engine.name}`, [dbz('u', '{"ID":1,"NAME":"a"}', src('18014398509481985')), dbz('c', '{"ID":1,"NAME":"b"}', src('9999999999999999'))]);
      const flow = defineFlow({ target: 'customers', keys: ['ID'], source: { path: dir, format: 'debezium' } });
      const driver = await engine.open();
      try {
        expect((await applySourceWith(driver, flow)).results[0]!).toMatchObject({ eventsApplied: 2, ties: 0 });
        const at = (scn: bigint) => ({ _ts_ms: BigInt(S), _scn: scn });
        expect(await exported(driver, flow, dir)).toEqual([
          { ID: 1n, NAME: 'b', __START_AT: at(9999999999999999n), __END_AT: at(18014398509481985n) },
          { ID: 1n, NAME: 'a', __START_AT: at(18014398509481985n), __END_AT: null },
        ]);
      } finally {
        await driver.close();
      }
    });

    it('a line that is not an envelope is quarantined with its text exactly as written', async () => {
      const bad = ['2024-05-30T09:00:00Z', '2024-05-31T10:30:00Z']; // what an engine would read as timestamps
      const dir = landing(`raw-${engine.name}`, [dbz('c', '{"id":1,"name":"a"}', `{"ts_ms":${S}}`), ...bad], '0001.json');
      const more = ['  {"op": "x" , "n": 1.50,"big":12345678901234567890123}  ', '1e2', '{"before":null,"after":{"id":2'];
      writeFileSync(path.join(dir, '0002.json'), more.join('\n') + '\n');
      const flow = defineFlow({ target: 'raw', keys: ['id'], source: { path: dir, format: 'debezium' } });
      const driver = await engine.open();
      try {
        expect((await applySourceWith(driver, flow)).results[0]!).toMatchObject({ eventsApplied: 1, quarantined: 5 });
        const q = await quarantined(driver, 'raw');
        expect(q.map((x) => [x.file, x.line, x.raw])).toEqual([
          ['0001.json', 2, bad[0]],
          ['0001.json', 3, bad[1]],
          ['0002.json', 1, more[0]],
          ['0002.json', 2, more[1]],
          ['0002.json', 3, more[2]],
        ]);
        expect(q.map((x) => x.reason.replace(/ at position \d+$/, ''))).toEqual([
          expect.stringMatching(/^malformed JSON/),
          expect.stringMatching(/^malformed JSON/),
          'unknown Debezium op "x"',
          'not a Debezium envelope (not a JSON object)',
          expect.stringMatching(/^malformed JSON/),
        ]);
      } finally {
        await driver.close();
      }
    });
  });
}
