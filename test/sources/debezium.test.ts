/**
 * Debezium envelopes (issue 3 §2, SPEC §2): realistic PostgreSQL and MySQL connector events in
 * fixtures/debezium/, with and without the Kafka Connect schema/payload wrapper. c/r/u upsert
 * `after`, d deletes the key of `before`, t truncates; the default sequence is
 * [source.ts_ms, source.lsn] (MySQL has no lsn: its binlog file and position break ties);
 * Kafka tombstones are skipped and counted; an op the engine does not know is quarantined.
 * Expected targets written by hand.
 */
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { applySourceWith, defineFlow, readTargetWith } from '../../src/index.js';
import { engines } from '../engines.js';
import { expectAccounted, FIXTURES, mkdir, plain, quarantined, tempDir, type Row } from './fixtures/util.js';

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
const before = (a: Seq, b: Seq) => a !== null && (b === null || a._ts_ms < b._ts_ms || (a._ts_ms === b._ts_ms && a._lsn < b._lsn));

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
        expect(plain(await readTargetWith(driver, flow))).toEqual(
          PG_SCD2.map((r) => ({ ...r, __START_AT: lsn(r.__START_AT as Seq), __END_AT: lsn(r.__END_AT as Seq) })),
        );
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
            start: (__START_AT as Seq)!._ts_ms,
            end: __END_AT === null ? null : (__END_AT as Seq)!._ts_ms,
          })),
        ).toEqual(MYSQL_SCD2);
        // Versions of a key follow each other: each ends where the next starts, strictly later.
        for (let i = 0; i < rows.length; i++) {
          const r = rows[i]!;
          expect(before(r.__START_AT as Seq, r.__END_AT as Seq), JSON.stringify(r)).toBe(true);
          const next = rows[i + 1];
          if (next && next.id === r.id) expect(next.__START_AT).toEqual(r.__END_AT);
        }
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
