/**
 * What `scd` says when a person's command cannot be done, through bin/scd on DuckDB (a file),
 * PGlite (a folder) and a PostgreSQL server (when SCD_TEST_POSTGRES_URL is set): one line on
 * stderr naming the problem and the fix, exit code 1 (a person's to fix; README "The `scd`
 * command", exit codes), never a stack trace or "a bug in scdkit", and nothing created by a read.
 */
import { appendFileSync, existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PostgresDriver } from '../../src/dialects/postgres/index.js';
import { defineFlow } from '../../src/index.js';
import { freshSchema } from '../engines.js';
import { copyFixture, errorLines, parseNdjson, type RunResult, scd, scdOk, tempDir } from './fixtures/cli.js';

let tmp: { dir: string; cleanup: () => void };
beforeAll(() => {
  tmp = tempDir();
});
afterAll(() => tmp.cleanup());

/** A person's error: exit 1, one line `scd: …` naming `what`, with a fix; nothing of a bug. */
function refusedInOneLine(r: RunResult, what: RegExp): string {
  expect(r.code, r.stderr).toBe(1);
  const lines = errorLines(r.stderr);
  expect(lines, r.stderr).toHaveLength(1);
  expect(lines[0]).toMatch(/^scd: /);
  expect(lines[0]).toMatch(what);
  expect(lines[0]).toMatch(/\(fix: .+\)$/);
  expect(r.stderr).not.toMatch(/bug in scdkit|\n\s+at /);
  return lines[0]!;
}

interface Engine {
  name: string;
  /** A copy of the accounts fixture and the --db arguments that put its target on the engine. */
  project(name: string): Promise<{ dir: string; db: string[]; close: () => Promise<void> }>;
}

const url = process.env.SCD_TEST_POSTGRES_URL;
const ENGINES: Engine[] = [
  { name: 'duckdb', project: async (name) => ({ dir: copyFixture('accounts', path.join(tmp.dir, `duckdb-${name}`)), db: [], close: async () => {} }) },
  {
    name: 'pglite',
    project: async (name) => {
      const dir = copyFixture('accounts', path.join(tmp.dir, `pglite-${name}`));
      return { dir, db: ['--db', `pglite://${path.join(dir, 'pgdata')}`], close: async () => {} };
    },
  },
];
if (url)
  ENGINES.push({
    name: 'postgres',
    project: async (name) => {
      const dir = copyFixture('accounts', path.join(tmp.dir, `postgres-${name}`));
      const schema = freshSchema();
      appendFileSync(path.join(dir, 'flow.yaml'), `schema: ${schema}\n`);
      // Drops the test's schema when closed, after the scd processes.
      const owner = await PostgresDriver.connect(url, { schema, dropSchemaOnClose: true });
      return { dir, db: ['--db', url], close: () => owner.close() };
    },
  });

for (const engine of ENGINES) {
  describe(`${engine.name}: a person's mistakes through bin/scd`, () => {
    it('export --out into a folder that does not exist: one line with the fix, exit 1, for every format; nothing is created', async () => {
      const p = await engine.project('out');
      try {
        await scdOk(['apply', 'flow.yaml', ...p.db], p.dir);
        for (const ext of ['csv', 'ndjson', 'json', 'jsonl', 'parquet', 'txt']) {
          const r = await scd(['export', 'flow.yaml', ...p.db, '--out', `nope/x.${ext}`], p.dir);
          expect(refusedInOneLine(r, new RegExp(`--out nope/x\\.${ext}: the folder nope does not exist`))).toContain('mkdir -p nope');
        }
        refusedInOneLine(await scd(['log', 'flow.yaml', ...p.db, '--out', 'nope/log.csv'], p.dir), /--out nope\/log\.csv: the folder nope does not exist/);
        refusedInOneLine(await scd(['quarantine', 'flow.yaml', ...p.db, '--raw', '--out', 'nope/q.ndjson'], p.dir), /the folder nope does not exist/);
        refusedInOneLine(await scd(['export', 'flow.yaml', ...p.db, '--out', 'changes'], p.dir), /the name has no extension/);
        mkdirSync(path.join(p.dir, 'out.csv'));
        refusedInOneLine(await scd(['export', 'flow.yaml', ...p.db, '--out', 'out.csv'], p.dir), /--out out\.csv is a folder/);
        expect(existsSync(path.join(p.dir, 'nope'))).toBe(false);
        // The same export into a folder that exists writes the file.
        mkdirSync(path.join(p.dir, 'yes'));
        await scdOk(['export', 'flow.yaml', ...p.db, '--out', 'yes/x.ndjson'], p.dir);
        expect(parseNdjson(readFileSync(path.join(p.dir, 'yes/x.ndjson'), 'utf8'))).toHaveLength(6);
      } finally {
        await p.close();
      }
    }, 300_000);

    it("export --where the engine refuses on the target's values: one line naming the expression, not a bug", async () => {
      const p = await engine.project('where');
      try {
        await scdOk(['apply', 'flow.yaml', ...p.db], p.dir);
        for (const where of ["account_id > 'abc'", 'CAST(tier AS INTEGER) > 1']) {
          for (const format of where.startsWith('CAST') ? ['csv'] : ['ndjson', 'table']) {
            const r = await scd(['export', 'flow.yaml', ...p.db, '--format', format, '--where', where], p.dir);
            refusedInOneLine(r, new RegExp(`--where "${where.replace(/[()]/g, '\\$&')}"`));
          }
          for (const out of ['x.parquet', 'x.csv']) {
            refusedInOneLine(await scd(['export', 'flow.yaml', ...p.db, '--out', out, '--where', where], p.dir), /--where "/);
            expect(existsSync(path.join(p.dir, out)), `${out} cut short is not left behind`).toBe(false);
          }
        }
        // A good one still filters.
        const gold = parseNdjson((await scdOk(['export', 'flow.yaml', ...p.db, '--format', 'ndjson', '--where', "tier = 'gold'"], p.dir)).stdout);
        expect(gold.map((r) => r.account_id)).toEqual([1, 4]);
      } finally {
        await p.close();
      }
    }, 300_000);

    it('show --key: no versions, a value the key type cannot hold, a column given twice; quarantine --commit beyond the last: one line, exit 1', async () => {
      const p = await engine.project('show');
      try {
        await scdOk(['apply', 'flow.yaml', ...p.db], p.dir);
        refusedInOneLine(await scd(['show', 'flow.yaml', ...p.db, '--key', 'account_id=99'], p.dir), /key account_id=99 has no versions in dim_account/);
        const typed = refusedInOneLine(
          await scd(['show', 'flow.yaml', ...p.db, '--key', 'account_id=abc'], p.dir),
          /"abc" is not a value of the key column "account_id", which is /,
        );
        expect(typed).toMatch(/which is (BIGINT|bigint)/);
        refusedInOneLine(
          await scd(['show', 'flow.yaml', ...p.db, '--key', 'account_id=1', '--key', 'account_id=2'], p.dir),
          /--key account_id is given twice \(account_id=1 and account_id=2\)/,
        );
        refusedInOneLine(await scd(['quarantine', 'flow.yaml', ...p.db, '--commit', '99'], p.dir), /commit 99 is beyond the last commit \(commits are 1\.\.1\)/);
        refusedInOneLine(await scd(['quarantine', 'flow.yaml', ...p.db, '--commit', '2147483648'], p.dir), /commit 2147483648 is beyond the last commit \(commits are 1\.\.1\)/);
        // Past 2^53 a number reads as another: refused as given, never echoed as a rounded one.
        for (const big of ['9223372036854775808', '99999999999999999999999']) {
          const r = await scd(['quarantine', 'flow.yaml', ...p.db, '--commit', big], p.dir);
          expect(r.code).toBe(1);
          expect(r.stderr).toContain(`${big} is beyond any commit a target can have`);
          expect(r.stderr).not.toMatch(/bug in scdkit|e\+|9223372036854776000|\n\s+at /);
        }
        // The key as its type: 001 is the key 1.
        const shown = parseNdjson((await scdOk(['show', 'flow.yaml', ...p.db, '--key', 'account_id=001', '--format', 'ndjson'], p.dir)).stdout);
        expect(shown.map((r) => r.tier)).toEqual(['gold', 'silver', 'platinum']);
        await scdOk(['quarantine', 'flow.yaml', ...p.db, '--commit', '1'], p.dir);
      } finally {
        await p.close();
      }
    }, 300_000);

    it('a key column with no kind most of its values have: the message quotes two values of different kinds, as written', async () => {
      const p = await engine.project('kinds');
      try {
        const changes = path.join(p.dir, 'changes');
        writeFileSync(
          path.join(changes, '001_initial.ndjson'),
          '{"account_id": 1, "seq": 1}\n{"account_id": "2", "seq": 2}\n{"account_id": true, "seq": 3}\n{"account_id": "12", "seq": 4}\n',
        );
        for (const f of ['002_upgrade_delete_new.ndjson', '003_late_and_duplicate.ndjson']) writeFileSync(path.join(changes, f), '');
        const line = refusedInOneLine(await scd(['apply', 'flow.yaml', ...p.db], p.dir), /column "account_id" holds values of different kinds/);
        expect(line).toContain('(e.g. "12" and 1)');
      } finally {
        await p.close();
      }
    }, 300_000);

    it('the only file changed after it was applied: apply, its dry run and status name it and the fix; nothing pending', async () => {
      const p = await engine.project('changed');
      try {
        await scdOk(['apply', 'flow.yaml', ...p.db], p.dir);
        appendFileSync(path.join(p.dir, 'changes', '002_upgrade_delete_new.ndjson'), '{"account_id": 9007199254740993, "owner": "Zoë 😀", "tier": "gold", "op": "U", "seq": 99}\n');
        for (const dry of [[], ['--dry-run']]) {
          const r = await scdOk(['apply', 'flow.yaml', ...p.db, ...dry], p.dir);
          expect(errorLines(r.stderr)).toEqual([
            'scd: warning: changes/002_upgrade_delete_new.ndjson changed after commit 1 applied it; it is not applied again (fix: put new changes in a new file)',
          ]);
          expect(r.stdout.trimEnd().split('\n').at(-1)).toBe(
            `${dry.length ? 'dry run: nothing was changed; ' : ''}nothing new to apply: 1 file changed after it was applied and is not applied again (see the warning above: put new changes in a new file); 2 files already applied`,
          );
        }
        const status = (await scdOk(['status', 'flow.yaml', ...p.db], p.dir)).stdout;
        expect(status).toMatch(/pending files\s+0\n/);
        expect(status).toMatch(
          /changed files\s+1: changes\/002_upgrade_delete_new\.ndjson \(applied by commit 1\), changed after it was applied; never applied again \(put new changes in a new file\)\n/,
        );
      } finally {
        await p.close();
      }
    }, 300_000);

    it('a dry run on a database that is not there creates nothing: no file, no folder, no table in the schema', async () => {
      const p = await engine.project('dry');
      try {
        const r = await scdOk(['apply', 'flow.yaml', ...p.db, '--dry-run'], p.dir);
        expect(r.stdout).toContain('dry run: nothing was changed; it would have made commit 1: read 10 rows = 9 applied + 1 duplicate + 0 quarantined');
        expect(existsSync(path.join(p.dir, 'accounts.duckdb'))).toBe(false);
        expect(existsSync(path.join(p.dir, 'pgdata'))).toBe(false);
        if (engine.name === 'postgres') {
          const schema = /schema: (\S+)/.exec(readFileSync(path.join(p.dir, 'flow.yaml'), 'utf8'))![1]!;
          const look = await PostgresDriver.connect(url!, { schema: 'public' });
          try {
            // The test's schema is made before the run (to be dropped after it): no table is in it.
            expect(await look.query('SELECT tablename FROM pg_tables WHERE schemaname = $1', [schema])).toEqual([]);
          } finally {
            await look.close();
          }
        }
        // The real apply after it is commit 1.
        expect(JSON.parse((await scdOk(['apply', 'flow.yaml', ...p.db, '--json'], p.dir)).stdout).version).toBe(1);
      } finally {
        await p.close();
      }
    }, 300_000);

    it('a flow change that needs a rebuild is told at once, with nothing pending, on every apply path; after `scd rebuild` apply finds nothing new', async () => {
      const p = await engine.project('rebuild');
      try {
        await scdOk(['apply', 'flow.yaml', ...p.db], p.dir);
        appendFileSync(path.join(p.dir, 'flow.yaml'), 'previousValues: { tier: previous_tier }\n');
        const said = /the flow changed \(previousValues\) since the target was built, and this needs a rebuild \(fix: .*`scd rebuild flow\.yaml`/;
        for (const extra of [[], ['--dry-run']]) refusedInOneLine(await scd(['apply', 'flow.yaml', ...p.db, ...extra], p.dir), said);
        refusedInOneLine(await scd(['apply', 'flow.yaml', ...p.db, '--input', 'changes/003_late_and_duplicate.ndjson'], p.dir), said);
        await scdOk(['rebuild', 'flow.yaml', ...p.db], p.dir);
        expect((await scdOk(['apply', 'flow.yaml', ...p.db], p.dir)).stdout).toMatch(/^nothing new to apply \(3 files already applied\)/);
      } finally {
        await p.close();
      }
    }, 300_000);

    it('trackHistory (and every list of names) takes one name; a misspelt field says "did you mean" in one line', async () => {
      const p = await engine.project('names');
      try {
        appendFileSync(path.join(p.dir, 'flow.yaml'), 'trackHistory: tier\n');
        await scdOk(['apply', 'flow.yaml', ...p.db], p.dir);
        const rows = parseNdjson((await scdOk(['export', 'flow.yaml', ...p.db, '--format', 'ndjson'], p.dir)).stdout);
        // Account 4 changed only its seq (22 → 30): not a tracked change, so one version.
        expect(rows.filter((r) => r.account_id === 4)).toHaveLength(1);
        expect(rows.filter((r) => r.account_id === 1).map((r) => r.tier)).toEqual(['gold', 'silver', 'platinum']);
        writeFileSync(path.join(p.dir, 'typo.yaml'), readFileSync(path.join(p.dir, 'flow.yaml'), 'utf8').replace('trackHistory:', 'trackHistroy:'));
        refusedInOneLine(await scd(['apply', 'typo.yaml', ...p.db], p.dir), /"trackHistroy" is not a flow field \(fix: did you mean "trackHistory"\?\)/);
      } finally {
        await p.close();
      }
    }, 300_000);
  });
}

describe('read-only commands never create a database', () => {
  it('export, log, changes, as-of, show, quarantine with a mistyped --db (a DuckDB file, a PGlite folder): one line, exit 1, nothing created', async () => {
    const dir = copyFixture('accounts', path.join(tmp.dir, 'nodb'));
    await scdOk(['apply', 'flow.yaml'], dir);
    const reads = [['export'], ['log'], ['changes'], ['as-of', '15'], ['show', '--key', 'account_id=1'], ['quarantine'], ['quarantine', '--raw']];
    for (const db of ['x.duckdb', 'pglite://nope']) {
      for (const [cmd, ...rest] of reads) {
        const r = await scd([cmd!, 'flow.yaml', ...rest, '--db', db], dir);
        refusedInOneLine(r, /database .*(x\.duckdb|pglite:\/\/nope) does not exist \(fix: check --db/);
      }
    }
    // status refuses a --db that names nothing; of the flow's own database not there yet it says
    // nothing is applied, creating none.
    for (const db of ['x.duckdb', 'pglite://nope']) refusedInOneLine(await scd(['status', 'flow.yaml', '--db', db], dir), /does not exist \(fix: check --db/);
    for (const [i, database] of ['never.duckdb', 'pglite://never'].entries()) {
      writeFileSync(path.join(dir, `never-${i}.yaml`), readFileSync(path.join(dir, 'flow.yaml'), 'utf8').replace('database: accounts.duckdb', `database: ${database}`));
      const status = JSON.parse((await scdOk(['status', `never-${i}.yaml`, '--json'], dir)).stdout) as Record<string, unknown>;
      expect([status.applied, status.engine]).toEqual([false, database.endsWith('.duckdb') ? 'duckdb' : 'postgres']);
    }
    expect(existsSync(path.join(dir, 'never.duckdb'))).toBe(false);
    expect(existsSync(path.join(dir, 'never'))).toBe(false);
    expect(existsSync(path.join(dir, 'x.duckdb'))).toBe(false);
    expect(existsSync(path.join(dir, 'nope'))).toBe(false);
    // The flow's own database, not there yet: the fix says to apply first.
    const fresh = copyFixture('accounts', path.join(tmp.dir, 'nodb2'));
    refusedInOneLine(await scd(['export', 'flow.yaml'], fresh), /database .*accounts\.duckdb does not exist \(fix: run `scd apply` first/);
    expect(existsSync(path.join(fresh, 'accounts.duckdb'))).toBe(false);
  }, 300_000);
});

describe("the library's errors", () => {
  it('e.message is the whole line: where, what and the fix ("did you mean" included); problem and fix are its parts', () => {
    let error: unknown;
    try {
      defineFlow({ target: 't', keyz: 'id', sequenceBy: 's' } as never);
    } catch (e) {
      error = e;
    }
    const e = error as { message: string; problem: string; fix: string };
    expect(e.message).toBe('defineFlow: field "keyz": "keyz" is not a flow field (fix: did you mean "keys"?)');
    expect(e.problem).toBe('"keyz" is not a flow field');
    expect(e.fix).toBe('did you mean "keys"?');
  });

  it('a single name wherever a flow takes a list of names', () => {
    const base = { target: 't', keys: 'id', sequenceBy: 'ts' };
    const one = defineFlow({ ...base, trackHistory: 'city', columns: 'city' });
    expect([one.keys, one.sequenceBy, one.trackHistory, one.columns]).toEqual([['id'], ['ts'], ['city'], ['city']]);
    const except = defineFlow({ ...base, exceptColumns: 'op', trackHistoryExcept: 'name' });
    expect([except.exceptColumns, except.trackHistoryExcept]).toEqual([['op'], ['name']]);
  });
});
