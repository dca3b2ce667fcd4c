/**
 * PostgreSQL server only (SCD_TEST_POSTGRES_URL): `scd apply --watch` outlives its connections.
 * The server ending the watcher's sessions (pg_terminate_backend, what a restart does to a
 * client) is one line when it happens and one when the server answers again; the watcher goes on
 * and every file is applied exactly once. (PGlite runs in the watcher's own process: it has no
 * connection to lose.)
 */
import { spawn } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { PostgresDriver } from '../../src/dialects/postgres/index.js';
import { errorLines, type RunResult, SCD, scd, tempDir } from '../e2e/fixtures/cli.js';
import { freshSchema } from '../engines.js';

const url = process.env.SCD_TEST_POSTGRES_URL;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Wait until `cond` holds, checking every 50 ms, for at most `ms`. */
async function until(cond: () => boolean, ms: number, what: string): Promise<void> {
  for (const end = Date.now() + ms; !cond(); ) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await sleep(50);
  }
}

describe.skipIf(!url)('postgres: apply --watch when the server ends its connections', () => {
  it('says once that the connection was lost, once that it is back, goes on, and applies each file once', async () => {
    const schema = freshSchema();
    const owner = await PostgresDriver.connect(url!, { schema, dropSchemaOnClose: true });
    const tmp = tempDir();
    try {
      const dir = tmp.dir;
      mkdirSync(path.join(dir, 'in'));
      writeFileSync(path.join(dir, 'flow.yaml'), `target: dim_customer\nkeys: [customer_id]\nsequenceBy: changed_at\nschema: ${schema}\nsource:\n  path: in/\n`);
      const app = `scd_watch_${schema}`;
      const db = `${url}${url!.includes('?') ? '&' : '?'}application_name=${app}`;
      const line = (id: string, at: string, name: string, balance: string) => `{"customer_id": ${id}, "changed_at": "${at}", "name": "${name}", "balance": ${balance}}\n`;
      writeFileSync(path.join(dir, 'in', '001.ndjson'), line('9007199254740993', '2025-03-01T10:00:00.123456+01:00', 'Zoë 😀', '12345678901234.56'));

      const child = spawn(process.execPath, [SCD, 'apply', 'flow.yaml', '--watch', '--interval', '0.3', '--db', db], { cwd: dir, env: { ...process.env, SCD_DEBUG: '' } });
      let stdout = '';
      let stderr = '';
      child.stdout.on('data', (b) => (stdout += String(b)));
      child.stderr.on('data', (b) => (stderr += String(b)));
      const exited = new Promise<number | null>((r) => child.on('exit', (code) => r(code)));
      try {
        await until(() => /commit 1\b/.test(stdout), 60_000, 'commit 1');

        // End every session the watcher opens, as a restarting server does, while a new file lands.
        let killing = true;
        const killer = (async () => {
          while (killing) {
            await owner.query('SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name = $1', [app]);
            await sleep(5);
          }
        })();
        writeFileSync(
          path.join(dir, 'in', '002.ndjson'),
          line('9007199254740993', '2025-03-02T08:30:00Z', 'Zoë Ångström', '-0.01') + line('42', '2025-03-02T08:30:00-05:00', '李雷', '0'),
        );
        try {
          await until(() => /lost the connection/.test(stderr), 60_000, 'the lost connection line');
          await sleep(1500); // several rounds fail while the sessions are ended
        } finally {
          killing = false;
          await killer;
        }
        await until(() => /commit 2\b/.test(stdout), 60_000, 'commit 2');
        await until(() => /answers again/.test(stderr), 10_000, 'the line that the database is back');
      } finally {
        child.kill('SIGINT');
      }
      expect(await exited, stderr).toBe(0);

      const said = stderr.split('\n').filter((l) => l.startsWith('scd: '));
      expect(said.filter((l) => l.includes('lost the connection'))).toHaveLength(1);
      expect(said.find((l) => l.includes('lost the connection'))).toMatch(
        /^scd: lost the connection to the database \(.+\); trying again every 0\.3s \(each file is still applied exactly once\)$/,
      );
      expect(said.filter((l) => l === 'scd: the database answers again; watching goes on')).toHaveLength(1);
      expect(stderr).not.toMatch(/bug in scdkit|\n\s+at /);
      expect(said.at(-1)).toBe('scd: stopped');

      // Each file applied once: two commits, the target's history whole.
      const commits = await owner.query(`SELECT version, inputs FROM _scd_commits WHERE target = 'dim_customer' ORDER BY version`);
      expect(commits.map((c) => Number(c.version))).toEqual([1, 2]);
      const rows = await owner.query(
        `SELECT CAST(customer_id AS text) AS id, name, CAST(balance AS text) AS balance, "__END_AT" IS NULL AS live FROM dim_customer ORDER BY customer_id, "__START_AT"`,
      );
      expect(rows).toEqual([
        { id: '42', name: '李雷', balance: '0', live: true },
        { id: '9007199254740993', name: 'Zoë 😀', balance: '12345678901234.56', live: false },
        { id: '9007199254740993', name: 'Zoë Ångström', balance: '-0.01', live: true },
      ]);
    } finally {
      await owner.close();
      tmp.cleanup();
    }
  }, 240_000);

  it('an apply whose session the server ends: one line with the fix, exit 1; run again, each file is applied once', async () => {
    const schema = freshSchema();
    const owner = await PostgresDriver.connect(url!, { schema, dropSchemaOnClose: true });
    const tmp = tempDir();
    try {
      const dir = tmp.dir;
      mkdirSync(path.join(dir, 'in'));
      writeFileSync(path.join(dir, 'flow.yaml'), `target: dim_customer\nkeys: [customer_id]\nsequenceBy: changed_at\nschema: ${schema}\nsource:\n  path: in/\n`);
      writeFileSync(
        path.join(dir, 'in', '001.ndjson'),
        '{"customer_id": 9007199254740993, "changed_at": "2025-03-01T10:00:00.123456+01:00", "name": "Zoë 😀", "balance": 12345678901234.56}\n',
      );
      const app = `scd_apply_${schema}`;
      const db = `${url}${url!.includes('?') ? '&' : '?'}application_name=${app}`;
      let killing = true;
      const killer = (async () => {
        while (killing) {
          await owner.query('SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name = $1', [app]);
          await sleep(2);
        }
      })();
      let cut: RunResult;
      try {
        cut = await scd(['apply', 'flow.yaml', '--db', db], dir);
      } finally {
        killing = false;
        await killer;
      }
      expect(cut.code, cut.stderr).toBe(1);
      const lines = errorLines(cut.stderr);
      expect(lines).toHaveLength(1);
      expect(lines[0]).toMatch(
        /^scd: (lost the connection to the database \(.+\) \(fix: run the command again once the server answers: each file is still applied exactly once\)|cannot connect to .+\(fix: .+\))$/,
      );
      expect(cut.stderr).not.toMatch(/bug in scdkit|\n\s+at /);
      const again = await scd(['apply', 'flow.yaml', '--db', db, '--json'], dir);
      expect(again.code, again.stderr).toBe(0);
      expect(JSON.parse(again.stdout)).toMatchObject({ version: 1, eventsApplied: 1 });
    } finally {
      await owner.close();
      tmp.cleanup();
    }
  }, 240_000);
});
