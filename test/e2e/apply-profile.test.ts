/**
 * `scd apply --profile` and `--json`'s `steps`: where a commit's time went, step by step in the
 * order the commit runs them, with the rows each step produced — so a person can see which step a
 * slow commit spends its time in. Times are only checked to be whole milliseconds (never timed).
 */
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { copyFixture, parseNdjson, scdOk, tempDir } from './fixtures/cli.js';

let tmp: { dir: string; cleanup: () => void };
beforeAll(() => {
  tmp = tempDir();
});
afterAll(() => tmp.cleanup());

const STEPS = ['stage', 'lock', 'target', 'types', 'events', 'fates', 'keys', 'new events', 'changes', 'record'];

describe('scd apply --profile', () => {
  for (const db of [undefined, 'pglite://memory'])
    it(`--json has each step with its time and rows; --profile prints them as a table (${db ?? 'DuckDB'})`, async () => {
      const dir = copyFixture('accounts', path.join(tmp.dir, db ? 'pglite' : 'duckdb'));
      const on = db ? ['--db', db] : [];
      const first = await scdOk(['apply', 'flow.yaml', '--input', 'changes/001_initial.ndjson', '--json', ...on], dir);
      const [result] = parseNdjson(first.stdout) as Array<{ steps: Array<{ step: string; ms: number; rows?: number }>; versionsAdded: number }>;
      expect(result!.steps.map((s) => s.step)).toEqual(STEPS);
      for (const s of result!.steps) expect(Number.isInteger(s.ms) && s.ms >= 0, `${s.step}: ${s.ms}`).toBe(true);
      const rows = Object.fromEntries(result!.steps.filter((s) => s.rows !== undefined).map((s) => [s.step, s.rows]));
      // Three records of three keys, each a new version.
      expect(rows).toEqual({ stage: 3, events: 3, fates: 3, keys: 3, 'new events': 3, changes: result!.versionsAdded });

      if (db) return;
      const second = await scdOk(['apply', 'flow.yaml', '--input', 'changes/002_upgrade_delete_new.ndjson', '--profile'], dir);
      expect(second.stdout).toMatch(/^commit 2: /);
      const table = second.stderr.slice(second.stderr.indexOf('commit 2, step by step:'));
      const lines = table.trimEnd().split('\n');
      expect(lines[0]).toBe('commit 2, step by step:');
      expect(lines[1]).toMatch(/^step\s+ms\s+share\s+rows$/);
      expect(lines.slice(3).map((l) => l.split(/\s{2,}/)[0])).toEqual([...STEPS, 'all steps']);
      // 2 versions added, 2 changed (closed): the changes step wrote 4 rows.
      expect(lines.find((l) => l.startsWith('changes'))).toMatch(/^changes\s+\d+\s+\d+%\s+4$/);
    });

  it('without --profile, no table', async () => {
    const dir = copyFixture('accounts', path.join(tmp.dir, 'quiet'));
    const r = await scdOk(['apply', 'flow.yaml', '--input', 'changes/001_initial.ndjson'], dir);
    expect(r.stderr).not.toContain('step by step');
  });
});
