// PostgreSQL for the benchmark: a throwaway server on loopback (as .ci/run starts one), and the few
// admin statements the harness needs (databases copied from a template, dumps of the setup).
//
// The server: the newest /usr/lib/postgresql/*/bin (Debian's `postgresql` package), initdb into a
// new temporary folder (as the postgres user when run as root: initdb refuses root), pg_ctl on
// 127.0.0.1 with a free port, trust authentication, unix socket in the same folder. It is stopped
// and its folder removed when the harness exits (also on Ctrl-C). `--pg-url` uses a server of
// yours instead (it needs a role that may CREATE DATABASE and CHECKPOINT).

import { spawnSync } from 'node:child_process';
import { chmodSync, chownSync, copyFileSync, existsSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';

/** Server settings of the throwaway server (both sides run on it; `--pg-conf k=v,...` adds or overrides). */
export const DEFAULT_PG_CONF = {
  shared_buffers: '1GB',
  temp_buffers: '256MB', // both sides stage into temporary tables (default 8MB)
  work_mem: '64MB',
  maintenance_work_mem: '512MB',
  max_wal_size: '8GB',
};

export function parsePgConf(text) {
  const out = { ...DEFAULT_PG_CONF };
  for (const kv of String(text ?? '')
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean)) {
    const m = /^([a-z_.]+)\s*=\s*(.+)$/i.exec(kv);
    if (!m) throw new Error(`--pg-conf: "${kv}" is not name=value`);
    out[m[1]] = m[2];
  }
  return out;
}

/** The newest PostgreSQL bin folder of the machine, or undefined. */
export function findPgBin() {
  const root = '/usr/lib/postgresql';
  if (existsSync(root)) {
    const versions = readdirSync(root)
      .filter((v) => existsSync(path.join(root, v, 'bin', 'initdb')))
      .sort((a, b) => Number(a) - Number(b));
    if (versions.length) return path.join(root, versions.at(-1), 'bin');
  }
  const cfg = spawnSync('pg_config', ['--bindir'], { encoding: 'utf8' });
  const dir = cfg.status === 0 ? cfg.stdout.trim() : '';
  return dir && existsSync(path.join(dir, 'initdb')) ? dir : undefined;
}

async function freePort() {
  return new Promise((resolve, reject) => {
    const srv = net.createServer();
    srv.unref();
    srv.on('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const { port } = /** @type {import('node:net').AddressInfo} */ (srv.address());
      srv.close(() => resolve(port));
    });
  });
}

const isRoot = () => typeof process.getuid === 'function' && process.getuid() === 0;

/** Run a PostgreSQL program (as the postgres user when we are root). */
function pgRun(bin, prog, args, { check = true } = {}) {
  const cmd = isRoot() ? 'runuser' : path.join(bin, prog);
  const argv = isRoot() ? ['-u', 'postgres', '--', path.join(bin, prog), ...args] : args;
  const r = spawnSync(cmd, argv, { encoding: 'utf8' });
  if (check && r.status !== 0) throw new Error(`${prog} failed (exit ${r.status}): ${(r.stderr || r.stdout || '').trim().split('\n').slice(-5).join(' | ')}`);
  return r;
}

/**
 * Start a throwaway server. Returns { url(db), admin, bin, version, conf, dir, stop() }.
 * stop() is also called when the process exits.
 * @param {{ conf?: Record<string, string>, log?: (line: string) => void, keepLog?: string }} [options]
 *   keepLog: a file the server's log is copied to when it stops
 */
export async function startServer({ conf = DEFAULT_PG_CONF, log = () => {}, keepLog } = {}) {
  const bin = findPgBin();
  if (!bin) throw new Error('PostgreSQL is not installed: `apt-get install -y postgresql` (Debian), or give a server with --pg-url postgres://user@host:port/db');
  const dir = mkdtempSync(path.join(os.tmpdir(), 'scdkit-bench-pg.'));
  if (isRoot()) {
    const pw = spawnSync('id', ['-u', 'postgres'], { encoding: 'utf8' });
    const gw = spawnSync('id', ['-g', 'postgres'], { encoding: 'utf8' });
    if (pw.status !== 0) throw new Error('running as root, but there is no postgres user to run the server as');
    chownSync(dir, Number(pw.stdout), Number(gw.stdout));
  }
  chmodSync(dir, 0o700);
  const data = path.join(dir, 'data');
  const port = await freePort();
  let stopped = false;
  const stop = () => {
    if (stopped) return;
    stopped = true;
    pgRun(bin, 'pg_ctl', ['-D', data, '-m', 'fast', '-w', 'stop'], { check: false });
    try {
      if (keepLog) copyFileSync(path.join(dir, 'server.log'), keepLog);
    } catch {}
    rmSync(dir, { recursive: true, force: true });
  };
  process.on('exit', stop);
  for (const sig of ['SIGINT', 'SIGTERM', 'SIGHUP'])
    process.once(sig, () => {
      stop();
      process.exit(130);
    });
  try {
    pgRun(bin, 'initdb', ['-D', data, '--auth=trust', '--username=postgres', '--no-sync', '--encoding=UTF8', '--locale=C']);
    const opts = ['-k', dir, '-p', String(port), '-h', '127.0.0.1', ...Object.entries(conf).flatMap(([k, v]) => ['-c', `${k}=${v}`])];
    pgRun(bin, 'pg_ctl', ['-D', data, '-l', path.join(dir, 'server.log'), '-w', '-t', '120', '-o', opts.join(' '), 'start']);
  } catch (e) {
    stop();
    throw e;
  }
  const version = pgRun(bin, 'postgres', ['--version']).stdout.trim();
  log(
    `postgres: ${version} on 127.0.0.1:${port} (${dir}), ${Object.entries(conf)
      .map(([k, v]) => `${k}=${v}`)
      .join(' ')}`,
  );
  return { base: `postgres://postgres@127.0.0.1:${port}`, bin, version, conf, dir, port, stop, own: true };
}

/** A server given by URL (--pg-url): databases are made next to the URL's database. */
export function existingServer(url) {
  const u = new URL(url);
  // The password goes to PGPASSWORD (read by pg, pg_dump and the children), never into a URL
  // that is logged, written to the results or passed on a command line.
  if (u.password) process.env.PGPASSWORD = decodeURIComponent(u.password);
  const base = `${u.protocol}//${u.username ? `${u.username}@` : ''}${u.host}`;
  return { base, bin: findPgBin(), version: undefined, conf: undefined, stop: () => {}, own: false, adminDb: decodeURIComponent(u.pathname.slice(1)) || 'postgres' };
}

export const dbUrl = (server, db) => `${server.base}/${db}`;

/** One admin connection (pg): run statements outside any transaction. */
export async function admin(server, fn) {
  const { default: pg } = await import('pg');
  const client = new pg.Client({ connectionString: dbUrl(server, server.adminDb ?? 'postgres') });
  client.on('error', () => undefined);
  await client.connect();
  try {
    return await fn(client);
  } finally {
    await client.end();
  }
}

const qi = (s) => `"${String(s).replace(/"/g, '""')}"`;

/** Drop and re-create `db` as a copy of `template` (a file copy, like copying the DuckDB file). */
export async function copyDatabase(server, template, db) {
  await admin(server, async (c) => {
    const v = Number((await c.query('SHOW server_version_num')).rows[0].server_version_num);
    await c.query(`DROP DATABASE IF EXISTS ${qi(db)}${v >= 130000 ? ' WITH (FORCE)' : ''}`);
    await c.query(`CREATE DATABASE ${qi(db)} TEMPLATE ${qi(template)}${v >= 150000 ? ' STRATEGY = FILE_COPY' : ''}`);
  });
}

export async function dropDatabase(server, db) {
  await admin(server, async (c) => {
    const v = Number((await c.query('SHOW server_version_num')).rows[0].server_version_num);
    await c.query(`DROP DATABASE IF EXISTS ${qi(db)}${v >= 130000 ? ' WITH (FORCE)' : ''}`);
  });
}

export async function createDatabase(server, db) {
  await dropDatabase(server, db);
  await admin(server, (c) => c.query(`CREATE DATABASE ${qi(db)}`));
}

/** VACUUM ANALYZE a database (the template, after setup or restore: copies inherit stats and visibility). */
export async function vacuumAnalyze(server, db) {
  const { default: pg } = await import('pg');
  const client = new pg.Client({ connectionString: dbUrl(server, db) });
  client.on('error', () => undefined);
  await client.connect();
  try {
    await client.query('VACUUM ANALYZE');
    await client.query('CHECKPOINT');
  } finally {
    await client.end();
  }
}

/** pg_dump -Fc of a database into `file` (the cached setup), and its restore. */
export function dumpDatabase(server, db, file) {
  if (!server.bin) throw new Error('pg_dump not found');
  const r = spawnSync(path.join(server.bin, 'pg_dump'), ['-Fc', '-Z', '1', '-f', file, '-d', dbUrl(server, db)], { encoding: 'utf8' });
  if (r.status !== 0) throw new Error(`pg_dump failed: ${r.stderr.trim()}`);
}

export function restoreDatabase(server, db, file) {
  if (!server.bin) throw new Error('pg_restore not found');
  const r = spawnSync(path.join(server.bin, 'pg_restore'), ['--no-owner', '-j', '2', '-d', dbUrl(server, db), file], { encoding: 'utf8' });
  if (r.status !== 0) throw new Error(`pg_restore failed: ${r.stderr.trim()}`);
}
