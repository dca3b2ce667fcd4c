import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { applyRows, defineFlow } from '../../src/index.js';
import { type Fixture, FixtureTape, readFixture } from './replay/fixture.js';
import { replayingDriver } from './replay/replaying-driver.js';
import { statementText } from './replay/statement-text.js';

/**
 * The replaying driver of the golden SQL (replay/): it answers what was recorded, in order, and a
 * statement it was not recorded with fails loudly, naming the statement and the nearest recorded
 * one, never with an empty answer.
 */
const here = path.dirname(fileURLToPath(import.meta.url));

describe('a fixture tape', () => {
  const fixture: Fixture = {
    dialect: 'duckdb',
    entries: [
      { call: 'read', sql: 'SELECT count(*) AS n FROM "t"', rows: [{ n: '1' }] },
      { call: 'read', sql: 'SELECT count(*) AS n FROM "t"', rows: [{ n: '2' }] },
      { call: 'read', sql: 'SELECT v FROM "t" WHERE k = $1', params: '["ä ✓ 9007199254740993"]', rows: [{ v: '12345678901234567890.000000000001' }] },
      { call: 'run', sql: 'CREATE TABLE "t" (k VARCHAR)', error: { message: 'Catalog Error: Table with name t already exists!', code: '42P07' } },
    ],
  };

  it('answers a statement sent twice with its two recorded answers, in order, whatever its spacing', () => {
    const tape = new FixtureTape(fixture, 'the fixture');
    expect(tape.answer('read', 'SELECT count(*)  AS n\n  FROM "t"').rows).toEqual([{ n: '1' }]);
    expect(tape.answer('read', 'SELECT count(*) AS n FROM "t"').rows).toEqual([{ n: '2' }]);
    expect(() => tape.answer('read', 'SELECT count(*) AS n FROM "t"')).toThrow(/more often than the fixture the fixture recorded it/);
  });

  it('tells parameters apart: unicode and big integers answer only as recorded', () => {
    const tape = new FixtureTape(fixture, 'the fixture');
    expect(() => tape.answer('read', 'SELECT v FROM "t" WHERE k = $1', ['ä ✓ 9007199254740992'])).toThrow(/lacks/);
    expect(tape.answer('read', 'SELECT v FROM "t" WHERE k = $1', ['ä ✓ 9007199254740993']).rows).toEqual([{ v: '12345678901234567890.000000000001' }]);
  });

  it('fails a recorded failure again, with its message and code', () => {
    const tape = new FixtureTape(fixture, 'the fixture');
    expect(() => tape.answer('run', 'CREATE TABLE "t" (k VARCHAR)')).toThrow(
      expect.objectContaining({ message: 'Catalog Error: Table with name t already exists!', code: '42P07' }),
    );
  });

  it('names the statement it lacks, the nearest recorded one, and where they differ', () => {
    const tape = new FixtureTape(fixture, 'test/plan/fixtures/x.json');
    let message = '';
    try {
      tape.answer('read', 'SELECT count(*) AS n FROM "u"');
    } catch (e) {
      message = (e as Error).message;
    }
    expect(message).toContain('lacks');
    expect(message).toContain('test/plan/fixtures/x.json');
    expect(message).toContain('sent:    read SELECT count(*) AS n FROM "u"');
    expect(message).toContain('nearest: read SELECT count(*) AS n FROM "t"');
    expect(message).toContain('differ from character 32');
  });
});

describe('a replayed commit whose SQL changed', () => {
  it('stops at the first statement the recording lacks, and names it', async () => {
    // The fixture was recorded for keys ['id']: a flow keyed by ['id', 'n'] sends other SQL.
    const tape = new FixtureTape(readFixture(path.join(here, 'fixtures', 'duckdb-scd2.json')), 'duckdb-scd2.json');
    const driver = replayingDriver('duckdb', tape);
    const flow = defineFlow({ name: 'golden', target: 'dim', keys: ['id', 'n'], sequenceBy: 'ts', storedAs: 'scd2' });
    const rows = [{ id: 1, ts: 10, n: 0, city: 'Zürich', tier: 'a', op: 'U' }];
    await expect(applyRows(driver, flow, rows)).rejects.toThrow(/the plan sent a statement the fixture duckdb-scd2.json lacks/);
    // The driver reports the first line; the tape keeps the whole of it for the golden test to show.
    expect(tape.firstMiss).toMatch(/lacks[\s\S]*\n {2}sent: {4}\S[\s\S]*\n {2}nearest: \S[\s\S]*differ from character \d+/);
  });
});

describe('the text a golden file and a fixture keep of a statement', () => {
  it("makes a run's own names fixed: its temporary folder, a fresh test schema, a UUID, a Spark lease's process", () => {
    const sql = `SELECT * FROM json.\`${tmpdir()}/scdkit-Ab3xYz/rows.ndjson\`   JOIN scd_test_4242_m9x1k2_7.t
      WHERE holder = '0f8fad5b-d9cb-469f-a165-70867728950e'`;
    expect(statementText(sql)).toBe("SELECT * FROM json.`<tmp>/rows.ndjson` JOIN scd_golden.t WHERE holder = '<uuid>'");
    const lease = `SELECT 'host-1' AS host, CAST(31337 AS INT) AS pid, 'pid:[4026531836]' AS pid_space, 'node vitest it\\'s' AS command`;
    expect(statementText(lease)).toBe("SELECT '<process>' AS host, CAST(0 AS INT) AS pid, '<process>' AS pid_space, '<process>' AS command");
  });

  it('keeps everything else as written, values included', () => {
    const sql = `INSERT INTO t VALUES (TIMESTAMP '2024-05-30 09:00:00+02:00', 123456789012345678901234567890.5, 'naïve ✓', NULL)`;
    expect(statementText(sql)).toBe(sql);
  });
});
