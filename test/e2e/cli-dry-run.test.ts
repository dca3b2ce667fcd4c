/**
 * `scd apply --dry-run` through bin/scd: the statements the commit would run (each ended with
 * ';', separated by a blank line), then one line saying nothing was changed and what the commit
 * would have done; --json gives one object. Nothing is changed: the log, the target and the
 * landing folder's records are as before, and the real apply after it is the same commit.
 */
import { appendFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PostgresDriver } from '../../src/dialects/postgres/index.js';
import { freshSchema } from '../engines.js';
import { copyFixture, errorLines, parseNdjson, scd, scdOk, tempDir } from './fixtures/cli.js';

let tmp: { dir: string; cleanup: () => void };
beforeAll(() => {
  tmp = tempDir();
});
afterAll(() => tmp.cleanup());

/** A fresh copy of the accounts fixture (flow.yaml, changes/), as the current directory. */
function project(name: string): string {
  return copyFixture('accounts', path.join(tmp.dir, name));
}

const log = async (dir: string) => parseNdjson((await scdOk(['log', 'flow.yaml', '--format', 'ndjson'], dir)).stdout);
const exported = async (dir: string) => (await scdOk(['export', 'flow.yaml', '--format', 'ndjson'], dir)).stdout;

describe('scd apply --dry-run', () => {
  it('prints the statements and what the commit would do; changes nothing; the real apply is the same commit', async () => {
    const dir = project('text');
    await scdOk(['apply', 'flow.yaml', '--input', 'changes/001_initial.ndjson'], dir);
    const [logBefore, targetBefore] = [await log(dir), await exported(dir)];
    const dry = await scdOk(['apply', 'flow.yaml', '--input', 'changes/002_upgrade_delete_new.ndjson', '--dry-run'], dir);
    const lines = dry.stdout.trimEnd().split('\n');
    const last = lines.pop()!;
    expect(last).toMatch(
      /^dry run: nothing was changed; it would have made commit 2: read 3 rows = 3 applied \+ 0 duplicates \+ 0 quarantined; 3 keys changed: 2 versions added, 2 closed, 2 changed, 0 removed \(\d+ ms\)$/,
    );
    const blocks = lines.join('\n').trimEnd().split('\n\n');
    expect(blocks.length).toBeGreaterThan(5);
    for (const b of blocks) expect(b.endsWith(';'), b).toBe(true);
    expect(
      blocks.some((b) => b.startsWith('INSERT INTO "dim_account" ')),
      "the target's INSERT",
    ).toBe(true);
    // Parameters are shown above their statement.
    expect(blocks.some((b) => /^-- \$1 = 2\nINSERT INTO "_scd_dim_account_events"/.test(b))).toBe(true);

    expect(await log(dir)).toEqual(logBefore);
    expect(await exported(dir)).toBe(targetBefore);
    const real = await scdOk(['apply', 'flow.yaml', '--input', 'changes/002_upgrade_delete_new.ndjson'], dir);
    expect(real.stdout).toMatch(/^commit 2: read 3 rows = 3 applied \+ 0 duplicates \+ 0 quarantined; 3 keys changed: 2 versions added, 2 closed, 2 changed, 0 removed/);
  });

  it('--json: one object {dryRun, statements, result}', async () => {
    const dir = project('json');
    const dry = await scdOk(['apply', 'flow.yaml', '--input', 'changes/001_initial.ndjson', '--dry-run', '--json'], dir);
    const out = parseNdjson(dry.stdout);
    expect(out).toHaveLength(1);
    const { dryRun, statements, result } = out[0] as { dryRun: boolean; statements: Array<{ sql: string; params?: unknown[] }>; result: Record<string, unknown> };
    expect(dryRun).toBe(true);
    expect(result).toMatchObject({ version: 1, operation: 'apply', rowsRead: 3, eventsApplied: 3, versionsAdded: 3 });
    expect(statements.some((s) => s.sql.startsWith('CREATE TABLE "dim_account"'))).toBe(true);
    expect(statements.some((s) => s.sql.startsWith('INSERT INTO "dim_account" '))).toBe(true);
    expect(statements.find((s) => s.sql.startsWith('INSERT INTO "_scd_commits"'))?.params?.slice(0, 2)).toEqual(['dim_account', 1]);
    expect(dry.stderr).toBe('');
    // Nothing consumed: the real apply is commit 1.
    expect(JSON.parse((await scdOk(['apply', 'flow.yaml', '--input', 'changes/001_initial.ndjson', '--json'], dir)).stdout)).toMatchObject({ version: 1 });
  });

  it("the flow's landing folder: no file is recorded as applied; the real apply applies every file", async () => {
    const dir = project('landing');
    const dry = await scdOk(['apply', 'flow.yaml', '--dry-run'], dir);
    expect(dry.stdout.trimEnd().split('\n').pop()).toMatch(/^dry run: nothing was changed; it would have made commit 1: read 10 rows = /);
    const real = await scdOk(['apply', 'flow.yaml', '--json'], dir);
    expect(parseNdjson(real.stdout).map((r) => [r.version, (r.inputs as string[]).length])).toEqual([[1, 3]]);
    const after = await scdOk(['apply', 'flow.yaml', '--dry-run'], dir);
    expect(after.stdout).toMatch(/dry run: nothing was changed; nothing new to apply \(3 files already applied\)\n$/);
  });

  it('--each and --watch are refused with one line: a dry run shows one commit', async () => {
    const dir = project('each');
    for (const flag of ['--each', '--watch']) {
      const r = await scd(['apply', 'flow.yaml', '--dry-run', flag], dir);
      expect(r.code).toBe(1);
      expect(errorLines(r.stderr)).toEqual([expect.stringMatching(new RegExp(`^scd: --dry-run shows one commit, not those of ${flag}`))]);
    }
  });
});

const url = process.env.SCD_TEST_POSTGRES_URL;
describe.skipIf(!url)('scd apply --dry-run on PostgreSQL', () => {
  it('changes nothing on the server; the real apply after it is commit 2', async () => {
    const dir = project('postgres');
    const schema = freshSchema();
    appendFileSync(path.join(dir, 'flow.yaml'), `schema: ${schema}\n`);
    // Drops the test's schema when closed, after the scd processes.
    const owner = await PostgresDriver.connect(url!, { schema, dropSchemaOnClose: true });
    try {
      const db = ['--db', url!];
      await scdOk(['apply', 'flow.yaml', ...db, '--input', 'changes/001_initial.ndjson'], dir);
      const logOf = async () => parseNdjson((await scdOk(['log', 'flow.yaml', ...db, '--format', 'ndjson'], dir)).stdout);
      const targetOf = async () => (await scdOk(['export', 'flow.yaml', ...db, '--format', 'ndjson'], dir)).stdout;
      const [logBefore, targetBefore] = [await logOf(), await targetOf()];
      const dry = await scdOk(['apply', 'flow.yaml', ...db, '--input', 'changes/002_upgrade_delete_new.ndjson', '--dry-run', '--json'], dir);
      const out = JSON.parse(dry.stdout) as { statements: Array<{ sql: string }>; result: { version: number } };
      expect(out.result.version).toBe(2);
      expect(out.statements.some((s) => s.sql.startsWith('INSERT INTO "dim_account" '))).toBe(true);
      expect(await logOf()).toEqual(logBefore);
      expect(await targetOf()).toBe(targetBefore);
      const real = await scdOk(['apply', 'flow.yaml', ...db, '--input', 'changes/002_upgrade_delete_new.ndjson', '--json'], dir);
      expect(JSON.parse(real.stdout)).toMatchObject({ version: 2 });
    } finally {
      await owner.close();
    }
  });
});
