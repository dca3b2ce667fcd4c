/**
 * A flow expression that fails on one record's values is that record's problem, through bin/scd
 * on every engine: `CAST(code AS INTEGER)` with code "abc" and `100 / d` with d = 0 quarantine
 * the record with why (a division by zero told alike everywhere), whatever the expectation's
 * action, and the other records of the commit land; an expectation whose action is fail stops the
 * run in one line naming it, the file and the line. A landing folder moves on and `--watch` goes
 * on; a rebuild whose operations fail on a logged event stops, naming it, before changing anything.
 */
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { describe, it } from 'vitest';
import { cliDatabases, cliTestDir } from '../history/fixtures/cli-databases.js';
import { parseNdjson, scd, scdOk } from '../history/fixtures/history.js';
import { mkdir, sleep, spawnScd } from '../sources/fixtures/util.js';

const tmp = cliTestDir();

/** Change records as they come: zoned timestamps, exact decimals, a big integer key, unicode, nulls. */
const LINES = [
  '{"id":9007199254740993,"seq":"2026-03-01T10:00:00+02:00","d":"5.00","code":"7","name":"Zoë"}',
  '{"id":2,"seq":"2026-03-01T10:00:00.000001Z","d":"0.00","code":"8","name":"Ñandú"}',
  '{"id":3,"seq":"2026-03-01T10:00:00Z","d":"4.50","code":"abc","name":null}',
  '{"id":4,"seq":"2026-03-01T10:00:00Z","d":"20.00","code":"12","name":"東京"}',
];
const COLUMN_TYPES = { id: 'bigint', seq: 'timestamp', d: 'decimal(12,2)', code: 'string' };

/** The project's database settings, made once per folder (a server project is a fresh schema). */
const settingsOf = new Map<string, { database: string; schema?: string }>();

function flowOf(db: (typeof cliDatabases)[number], dir: string, expect: Record<string, unknown>, extra: Record<string, unknown> = {}) {
  const file = path.join(dir, 'flow.json');
  if (!settingsOf.has(dir)) settingsOf.set(dir, db.settings(dir));
  writeFileSync(
    file,
    JSON.stringify({ target: 'm', keys: 'id', sequenceBy: 'seq', columnTypes: COLUMN_TYPES, applyAsDeletes: '100 / d > 10', expect, ...extra, ...settingsOf.get(dir) }, null, 2),
  );
  return file;
}

const CODE_REASON = /^expect\.code_ok\.sql "CAST\(code AS INTEGER\) > 0" failed on this record/;

describe('a flow expression that fails on a record quarantines that record (bin/scd)', { timeout: 600_000 }, () => {
  for (const db of cliDatabases) {
    for (const action of ['quarantine', 'warn', 'drop'] as const) {
      it(`${db.name}: --input, action ${action}: "abc" and d = 0 quarantined with why, the rest applied`, async ({ expect }) => {
        const dir = mkdir(tmp.dir, `input-${action}-${db.name}`);
        const flow = flowOf(db, dir, { code_ok: { sql: 'CAST(code AS INTEGER) > 0', action } });
        const input = path.join(dir, 'changes.ndjson');
        writeFileSync(input, LINES.join('\n') + '\n');
        const r = await scd(['apply', flow, '--input', input, '--json'], dir);
        expect(r.stderr).not.toMatch(/bug in scdkit|refused a statement/);
        expect(r.code).toBe(0);
        const [applied] = parseNdjson(r.stdout);
        expect([applied!.rowsRead, applied!.eventsApplied, applied!.quarantined, applied!.dropped]).toEqual([4, 2, 2, 0]);
        expect(applied!.expectations).toEqual({ code_ok: 0 });
        const q = parseNdjson((await scdOk(['quarantine', flow, '--format', 'ndjson'], dir)).stdout);
        expect(q.map((x) => [x.line, x.raw])).toEqual([
          [2, LINES[1]],
          [3, LINES[2]],
        ]);
        expect(q[0]!.reason).toBe('division by zero in applyAsDeletes');
        expect(String(q[1]!.reason)).toMatch(CODE_REASON);
        const rows = parseNdjson((await scdOk(['export', flow, '--format', 'ndjson'], dir)).stdout);
        // 100 / 5.00 > 10 deletes key 9007199254740993 (never seen: nothing to end); 100 / 20.00 does not.
        expect(rows.map((x) => [String(x.id), x.d, x.name])).toEqual([['4', '20.00', '東京']].map(([i, _d, n]) => [i, expect.anything(), n]));
        expect(Number(rows[0]!.d)).toBe(20);
      });
    }

    it(`${db.name}: action fail stops the run in one line naming the expectation, file and line; nothing applied`, async ({ expect }) => {
      const dir = mkdir(tmp.dir, `fail-${db.name}`);
      const flow = flowOf(db, dir, { code_ok: { sql: 'CAST(code AS INTEGER) > 0', action: 'fail' } }, { applyAsDeletes: "code = 'x'" });
      const input = path.join(dir, 'changes.ndjson');
      writeFileSync(input, LINES.join('\n') + '\n');
      const r = await scd(['apply', flow, '--input', input], dir);
      expect(r.code).not.toBe(0);
      const lines = r.stderr.split('\n').filter((l) => l.startsWith('scd:'));
      expect(lines).toHaveLength(1);
      expect(lines[0]).toContain('expectation "code_ok" (CAST(code AS INTEGER) > 0) could not be evaluated on the record at');
      expect(lines[0]).toContain(`${input}:3`);
      expect(lines[0]).toContain('nothing was applied');
      expect(r.stderr).not.toMatch(/bug in scdkit|refused a statement/);
      const status = await scd(['export', flow, '--format', 'ndjson'], dir);
      expect(status.code).not.toBe(0); // the target was never made
    });

    it(`${db.name}: a landing folder moves on past the record, and a rebuild after stops on a logged division by zero`, async ({ expect }) => {
      const dir = mkdir(tmp.dir, `landing-${db.name}`);
      const landing = mkdir(dir, 'landing');
      const source = { source: { path: 'landing/', format: 'ndjson' } };
      const flow = flowOf(db, dir, { code_ok: { sql: 'CAST(code AS INTEGER) > 0', action: 'warn' } }, source);
      writeFileSync(path.join(landing, '001.ndjson'), LINES.join('\n') + '\n');
      const first = parseNdjson((await scdOk(['apply', flow, '--json'], dir)).stdout)[0]!;
      expect([first.eventsApplied, first.quarantined]).toEqual([2, 2]);
      writeFileSync(path.join(landing, '002.ndjson'), '{"id":4,"seq":"2026-03-02T00:00:00Z","d":"50.00","code":"1","name":"x"}\n');
      const second = parseNdjson((await scdOk(['apply', flow, '--json'], dir)).stdout)[0]!;
      expect([second.version, second.eventsApplied, second.quarantined]).toEqual([2, 1, 0]);
      // The logged records under a flow whose deletes divide by a logged zero: stopped, unchanged.
      const before = (await scdOk(['export', flow, '--format', 'ndjson'], dir)).stdout;
      flowOf(db, dir, { code_ok: { sql: 'CAST(code AS INTEGER) > 0', action: 'warn' } }, { ...source, applyAsDeletes: '100 / (d - 50) > 10' });
      const rebuilt = await scd(['rebuild', flow], dir);
      expect(rebuilt.code).not.toBe(0);
      const lines = rebuilt.stderr.split('\n').filter((l) => l.startsWith('scd:'));
      expect(lines).toEqual([expect.stringContaining('applyAsDeletes "100 / (d - 50) > 10" fails on a logged event (division by zero); nothing was rebuilt')]);
      expect((await scdOk(['export', flow, '--format', 'ndjson'], dir)).stdout).toBe(before);
      // Guarded, the rebuild goes through: now no record is a delete (100 / (d - 50) is negative for
      // every other d), so the big key and key 4's two versions are there.
      flowOf(db, dir, { code_ok: { sql: 'CAST(code AS INTEGER) > 0', action: 'warn' } }, { ...source, applyAsDeletes: 'd <> 50 AND 100 / (d - 50) > 10' });
      await scdOk(['rebuild', flow], dir);
      const after = (await scdOk(['export', flow, '--format', 'ndjson'], dir)).stdout;
      expect(after).toMatch(/"id":9007199254740993,/);
      const rows = parseNdjson(after);
      expect(rows.map((x) => [Number(x.d), x.__END_AT === null])).toEqual([
        [20, false],
        [50, true],
        [5, true],
      ]);
    });

    it(`${db.name}: more than 100 records an expression fails on stop the run in one line; 100 are quarantined`, async ({ expect }) => {
      const dir = mkdir(tmp.dir, `many-${db.name}`);
      const flow = flowOf(db, dir, {});
      const zeros = (n: number, from: number) =>
        Array.from({ length: n }, (_, i) => `{"id":${from + i},"seq":"2026-03-01T10:00:00Z","d":"0.00","code":"1","name":"n${i}"}`).join('\n') + '\n';
      const many = path.join(dir, 'many.ndjson');
      writeFileSync(many, '{"id":1,"seq":"2026-03-01T10:00:00Z","d":"50.00","code":"1","name":"ok"}\n' + zeros(101, 100));
      const r = await scd(['apply', flow, '--input', many], dir);
      expect(r.code).not.toBe(0);
      expect(r.stderr.split('\n').filter((l) => l.startsWith('scd:'))).toEqual([
        expect.stringContaining(
          `applyAsDeletes "100 / d > 10" fails on more than 100 records of this commit, first at ${many}:2 (division by zero in applyAsDeletes); nothing was applied`,
        ),
      ]);
      const hundred = path.join(dir, 'hundred.ndjson');
      writeFileSync(hundred, '{"id":1,"seq":"2026-03-01T10:00:00Z","d":"50.00","code":"1","name":"ok"}\n' + zeros(100, 100));
      const [applied] = parseNdjson((await scdOk(['apply', flow, '--input', hundred, '--json'], dir)).stdout);
      expect([applied!.eventsApplied, applied!.quarantined]).toEqual([1, 100]);
    });

    it(`${db.name}: export --where says which expression failed on the target's rows, in one line`, async ({ expect }) => {
      const dir = mkdir(tmp.dir, `where-${db.name}`);
      const flow = flowOf(db, dir, {}, { applyAsDeletes: "code = 'x'" });
      const input = path.join(dir, 'changes.ndjson');
      writeFileSync(input, LINES.join('\n') + '\n');
      await scdOk(['apply', flow, '--input', input], dir);
      const cast = await scd(['export', flow, '--where', 'CAST(code AS INTEGER) > 0'], dir);
      expect(cast.code).not.toBe(0);
      expect(cast.stderr.split('\n').filter((l) => l.startsWith('scd:'))).toEqual([
        expect.stringMatching(/^scd: --where "CAST\(code AS INTEGER\) > 0" failed on the target's rows: .*abc.* \(fix: compare each column with a value of its type/),
      ]);
      // DuckDB's query yields NULL for a division by zero where PostgreSQL fails: --where differs there still.
      if (db.name === 'duckdb') return;
      const division = await scd(['export', flow, '--where', '100 / d > 1'], dir);
      expect(division.code).not.toBe(0);
      expect(division.stderr.split('\n').filter((l) => l.startsWith('scd:'))).toEqual([
        `scd: --where "100 / d > 1" failed on the target's rows: division by zero (fix: guard the division, e.g. --where "d <> 0 AND 100 / d > 1")`,
      ]);
    });

    it(`${db.name}: apply --watch quarantines the record and goes on`, async ({ expect }) => {
      const dir = mkdir(tmp.dir, `watch-${db.name}`);
      const landing = mkdir(dir, 'landing');
      const flow = flowOf(db, dir, { code_ok: { sql: 'CAST(code AS INTEGER) > 0', action: 'quarantine' } }, { source: { path: 'landing/', format: 'ndjson' } });
      writeFileSync(path.join(landing, '001.ndjson'), LINES.join('\n') + '\n');
      const live = spawnScd(['apply', flow, '--watch', '--interval', '0.2'], dir);
      try {
        await live.until(({ stdout }) => /^commit 1: /m.test(stdout), 120_000);
        writeFileSync(
          path.join(landing, '002.ndjson'),
          '{"id":5,"seq":"2026-03-02T00:00:00Z","d":"0","code":"x1","name":"five"}\n{"id":6,"seq":"2026-03-02T00:00:00Z","d":"40","code":"3","name":"six"}\n',
        );
        await live.until(({ stdout }) => /^commit 2: /m.test(stdout), 120_000);
        await sleep(500);
        expect(live.child.exitCode).toBe(null);
        live.child.kill('SIGINT');
        expect(await live.exited).toEqual({ code: 0, signal: null });
      } finally {
        if (live.child.exitCode === null && live.child.signalCode === null) live.child.kill('SIGKILL');
      }
      expect(live.stderr()).not.toMatch(/bug in scdkit|refused a statement/);
      const q = parseNdjson((await scdOk(['quarantine', flow, '--format', 'ndjson'], dir)).stdout);
      expect(q.map((x) => [x.commit, x.line, x.reason]).sort((a, b) => Number(a[0]) - Number(b[0]) || Number(a[1]) - Number(b[1]))).toEqual([
        [1, 2, 'division by zero in applyAsDeletes'],
        [1, 3, expect.stringMatching(CODE_REASON)],
        [2, 1, 'division by zero in applyAsDeletes'],
      ]);
      const rows = parseNdjson((await scdOk(['export', flow, '--format', 'ndjson'], dir)).stdout);
      expect(rows.map((x) => String(x.id))).toEqual(['4', '6']);
    });
  }
});
