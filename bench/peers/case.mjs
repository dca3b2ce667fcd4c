// The peers' sides of a DuckDB batch case (`--peers`): dbt snapshot and SQLMesh, installed for real
// (venv.mjs), each on a copy of its own setup database of the same initial dimension, each batch
// landed into their source table first (source.mjs), then the tool's command run as a whole
// process under /usr/bin/time -v. Per run: the process's wall time and peak RSS, the SQL alone
// (the statements' own times, from the tool), and the landing's time.

import { spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readdirSync, readFileSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { GEN_VERSION, sizeLabel } from '../generate.mjs';
import { DBT_HISTORY, dbtCommand, dbtProject, dbtSqlTimes } from './dbt.mjs';
import { SETUP_END, SETUP_PLAN_TIME, SQLMESH_HISTORY, sqlmeshCommand, sqlmeshProject, sqlmeshSqlTimes } from './sqlmesh.mjs';
import { ensurePeersVenv, PEER_PACKAGES } from './venv.mjs';

const TIME = '/usr/bin/time';
/** The database file's name: DuckDB names a file's catalog after it, and both tools' SQL and state name that catalog. */
const DB_FILE = 'bench.duckdb';

/** Each peer: its project, its command for a bench run and (each made when it runs) for the two setup runs, its SQL times, its history. */
export const PEERS = {
  dbt: {
    label: 'dbt snapshot',
    project: dbtProject,
    run: (bin, dir) => dbtCommand(bin, dir),
    setupRuns: (bin, dir) => [() => dbtCommand(bin, dir), () => dbtCommand(bin, dir)],
    sqlTimes: dbtSqlTimes,
    history: DBT_HISTORY,
  },
  sqlmesh: {
    label: 'SQLMesh SCD_TYPE_2_BY_TIME',
    project: sqlmeshProject,
    run: (bin, dir) => sqlmeshCommand(bin, dir, ['run']),
    setupRuns: (bin, dir) => [
      () => sqlmeshCommand(bin, dir, ['plan', '--auto-apply', '--no-prompts', '--execution-time', SETUP_PLAN_TIME]),
      () => sqlmeshCommand(bin, dir, ['run', '--end', SETUP_END]),
    ],
    sqlTimes: sqlmeshSqlTimes,
    history: SQLMESH_HISTORY,
  },
};

/**
 * The peers' places: a project folder per tool and the one database path its project names (the
 * work copy of each run; a setup is built there too, then moved to its cache).
 */
export function peerPaths(dataDir, tool) {
  const root = path.join(dataDir, 'peers');
  return { project: path.join(root, `${tool}-project`), db: path.join(dataDir, 'work', 'peers', tool, DB_FILE) };
}

/** Write the project's files (only those that changed, so that dbt's partial parsing stays valid). */
function writeProject(tool, dataDir, sourceMode) {
  const { project, db } = peerPaths(dataDir, tool);
  for (const [rel, text] of Object.entries(PEERS[tool].project({ db, sourceMode }))) {
    const f = path.join(project, rel);
    mkdirSync(path.dirname(f), { recursive: true });
    if (!existsSync(f) || readFileSync(f, 'utf8') !== text) writeFileSync(f, text);
  }
  mkdirSync(path.dirname(db), { recursive: true });
  return { project, db };
}

/** One command of a tool as a whole process, timed, with its peak RSS. */
function runProcess({ cmd, args, env }, cwd, timeoutS) {
  const useTime = existsSync(TIME);
  return new Promise((resolve) => {
    const t0 = performance.now();
    const child = spawn(useTime ? TIME : cmd, useTime ? ['-v', cmd, ...args] : args, {
      cwd,
      env: { ...process.env, ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
      detached: true,
    });
    let out = '';
    let err = '';
    child.stdout.on('data', (d) => (out += d));
    child.stderr.on('data', (d) => (err += d));
    const timer = setTimeout(() => {
      try {
        process.kill(-child.pid, 'SIGKILL');
      } catch {}
    }, timeoutS * 1000);
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      const seconds = (performance.now() - t0) / 1000;
      const rss = /Maximum resident set size \(kbytes\): (\d+)/.exec(err);
      const r = { seconds, rssMb: rss ? Number(rss[1]) / 1024 : null, exit: code ?? signal };
      if (code !== 0) {
        const tail = (out + '\n' + err)
          .split('\n')
          .filter((l) => l.trim() && !/^\t/.test(l))
          .slice(-12)
          .join('\n');
        r.error = { message: `${path.basename(cmd)} ${args.filter((a) => !a.startsWith('/')).join(' ')} exited ${code ?? signal}`, stderr: tail };
      }
      resolve(r);
    });
  });
}

/** The SQL alone of a run: the sum of its statements' times, their count, and the slowest few. */
function sqlSummary(stmts) {
  const seconds = stmts.reduce((a, s) => a + s.seconds, 0);
  const slowest = [...stmts]
    .sort((a, b) => b.seconds - a.seconds)
    .slice(0, 4)
    .map((s) => ({ ...s, seconds: +s.seconds.toFixed(3) }));
  return { sqlSeconds: seconds, sqlStatements: stmts.length, sqlSlowest: slowest };
}

const hash = (s) => createHash('sha1').update(s).digest('hex').slice(0, 8);
const readdirSafe = (d) => (existsSync(d) ? readdirSync(d) : []);

function rmDb(file) {
  for (const f of [file, `${file}.wal`, `${file}.tmp`]) rmSync(f, { force: true });
}

/**
 * A tool's setup database for the initial dimension of N keys, cached by data version, tool
 * versions and N (not by scdkit's build): two runs of the tool, over the source table as it stood
 * at the end of 2023 and then after every initial event, so that its history is the initial
 * dimension's (closed 2023 versions included). Returns the cached file and the setup's figures.
 */
export async function ensurePeerBase(tool, N, ctx) {
  const { dataDir, genDir, log, runChild, opts, initialFile } = ctx;
  const venv = ensurePeersVenv(dataDir, log);
  const key = `peer_${tool}_n${sizeLabel(N)}_${hash(JSON.stringify([GEN_VERSION, PEER_PACKAGES, PEERS[tool].project({ db: '', sourceMode: 'table' })]))}`;
  const dir = path.join(genDir, key);
  const base = path.join(dir, DB_FILE);
  const meta = path.join(dir, 'setup.json');
  if (existsSync(base) && existsSync(meta) && !opts.fresh) return { base, venv, setup: { ...JSON.parse(readFileSync(meta, 'utf8')), cached: true } };
  for (const f of readdirSafe(genDir)) if (f.startsWith(`peer_${tool}_n${sizeLabel(N)}_`)) rmSync(path.join(genDir, f), { recursive: true, force: true });
  const { project, db } = writeProject(tool, dataDir, 'table');
  rmDb(db);
  rmSync(path.join(project, 'target'), { recursive: true, force: true });
  log(`setup (${PEERS[tool].label}) ${sizeLabel(N)}: two runs of the tool over the source table at the end of 2023, then after every initial event ...`);
  const steps = [];
  const [first, second] = PEERS[tool].setupRuns(venv.bin, project);
  for (const [until, command] of [
    ['2024-01-01', first],
    [null, second],
  ]) {
    const s = await runChild({ kind: 'peer-source', db, file: initialFile, until }, opts);
    if (s.error) throw new Error(`peer setup (${tool}): source table: ${JSON.stringify(s.error)}`);
    const r = await runProcess(command(), project, Math.max(opts.timeout, 3600));
    if (r.error) throw new Error(`peer setup (${tool}): ${r.error.message}\n${r.error.stderr}`);
    steps.push({ sourceRows: s.rows, seconds: r.seconds, rssMb: r.rssMb, ...sqlSummary(PEERS[tool].sqlTimes(project)) });
    log(`  run ${steps.length}: source ${s.rows} rows; ${r.seconds.toFixed(1)} s (SQL ${steps.at(-1).sqlSeconds.toFixed(1)} s), ${r.rssMb?.toFixed(0)} MB`);
  }
  const c = await runChild({ kind: 'correctness', db, history: PEERS[tool].history, file: initialFile }, opts);
  mkdirSync(dir, { recursive: true });
  renameSync(db, base);
  if (existsSync(`${db}.wal`)) renameSync(`${db}.wal`, `${base}.wal`);
  const setup = { tool, N, steps, versions: c.versions, current: c.current, fileMb: statSync(base).size / 1e6, versionsOfTools: venv.versions };
  log(`  ${setup.versions} versions (${setup.current} current), ${setup.fileMb.toFixed(0)} MB file`);
  writeFileSync(meta, JSON.stringify(setup));
  return { base, venv, setup };
}

/**
 * One run of a tool on the batch: a fresh copy of its setup database, the landing (timed apart), the
 * tool's process. The copy is kept (its path is returned) for the correctness query; the caller removes it.
 */
export async function peerRun(tool, peerBase, file, ctx) {
  const { dataDir, opts, runChild, copyDb } = ctx;
  const { project, db } = writeProject(tool, dataDir, opts.peerSource);
  copyDb(peerBase.base, db);
  const landing = await runChild({ kind: 'peer-landing', db, file, sourceMode: opts.peerSource }, opts);
  if (landing.error) return { error: { message: `landing: ${landing.error.message}` }, db };
  const r = await runProcess(PEERS[tool].run(peerBase.venv.bin, project), project, opts.timeout);
  if (r.error) return { ...r, db };
  return { ...r, closeSeconds: 0, landingSeconds: landing.seconds, ...sqlSummary(PEERS[tool].sqlTimes(project)), db };
}
