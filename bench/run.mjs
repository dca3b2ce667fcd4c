// scdkit benchmark: scdkit side by side with the two-step SQL baseline, on file-backed DuckDB.
// `npm run bench -- --help` for the options; bench/README.md for what each case means.

import { spawn, spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { copyFileSync, cpSync, existsSync, mkdirSync, readdirSync, readFileSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { BASE_TABLE } from './baseline.mjs';
import { TARGET } from './flow.mjs';
import { batchMix, ensureFile, ensureInitialChunks, GEN_VERSION, landingLinesFor, parseSize, sizeLabel } from './generate.mjs';
import { ensurePeerBase, PEERS, peerRun } from './peers/case.mjs';
import * as PG from './postgres.mjs';
import * as SPARK from './spark.mjs';
import { SPARK_FLOORS, sparkFloorCopies } from './spark-floor.mjs';

const here = path.dirname(new URL(import.meta.url).pathname);
const root = path.join(here, '..');
const dataDir = path.join(here, 'data');
const genDir = path.join(dataDir, `v${GEN_VERSION}`);
const workDir = path.join(dataDir, 'work');
const resultsDir = path.join(here, 'results');
const childScript = path.join(here, 'child.mjs');
const TIME = '/usr/bin/time';

const HELP = `npm run bench -- [options]        (or: node bench/run.mjs [options] after npm run build)

  --sizes LIST      initial dimension sizes (current versions)      default 1m      env BENCH_SIZES
  --batches LIST    batch sizes (events)                             default 1k,100k env BENCH_BATCHES
  --modes LIST      in,out (in order / out of order)                 default in,out  env BENCH_MODES
  --reps N          repetitions per case (median reported)           default 3       env BENCH_REPS
  --landing LIST    landing-file sizes (lines) applied to an empty target, or none   default 1m
  --rebuild LIST    dimension sizes to time rebuild on, or none      default: the largest of --sizes
  --full            the whole matrix: --sizes 1m,10m --batches 1k,100k,1m --rebuild 10m
  --huge [GB]       add the 5 GB landing file (or GB given), 1 repetition
  --threads N       SET threads on both sides;  --memory-limit X: SET memory_limit on both sides
  --timeout S       seconds before a child is killed                 default 3600
  --no-check        skip the row-by-row comparison of the in-order results
  --floor           batch cases also time the three floors of bench/floor.mjs (the least docs/SEMANTICS.md asks, hand-written);
                    Spark cases those of bench/spark-floor.mjs
  --fresh           rebuild the cached initial databases even if scdkit's build did not change
  --keep-work       keep the database copies of the last repetition in bench/data/work
  --build ID        run the snapshot bench/data/builds/ID of an earlier run (same build in two runs)
  --engines LIST    duckdb,postgres,spark                            default duckdb  env BENCH_ENGINES
  --peers           DuckDB batch cases also run dbt snapshot and SQLMesh SCD_TYPE_2_BY_TIME, installed
                    into bench/data/peers/venv by pip (bench/peers/; whole process and SQL alone)
  --peer-batches LIST  the batch sizes the peers run on                default: the largest of --batches
  --peer-source table|batch  what the peers read: the source table the batch is landed into (default),
                    or the batch file itself (then missing keys are not invalidated: bench/peers/source.mjs)
PostgreSQL cases (--engines ...,postgres): batch cases only, scdkit vs the same two-step SQL, both
through \`pg\` on one server (a throwaway one on 127.0.0.1, started and stopped by the harness):
  --pg-sizes LIST   initial dimension sizes                          default 1m
  --pg-batches LIST batch sizes                                      default 100k
  --pg-modes LIST   in,out                                           default: --modes
  --pg-reps N       repetitions                                      default: --reps
  --pg-url URL      use this server instead (a role that may CREATE DATABASE and CHECKPOINT)
  --pg-conf LIST    name=value,... settings of the throwaway server (added to the defaults:
                    ${Object.entries(PG.DEFAULT_PG_CONF)
                      .map(([k, v]) => `${k}=${v}`)
                      .join(' ')})
  --pg-chunk N|all  setup: initial events per commit (all: one commit, as on DuckDB)  default all
Spark cases (--engines ...,spark): batch cases only, scdkit (its Spark driver) vs the two-step Delta
MERGE baseline as SQL, both through one Spark Connect server (bench/spark.mjs):
  --spark-sizes LIST   initial dimension sizes                       default 1m
  --spark-batches LIST batch sizes                                   default 1k,100k
  --spark-modes LIST   in,out                                        default: --modes
  --spark-reps N       repetitions                                   default: --reps
  --spark-url URL      the server (default: env SCD_BENCH_SPARK_URL, else the local one of
                       scripts/spark.mjs, started if it does not answer and then stopped at the end)
Sizes: 1k, 100k, 1m, 10m, ... Data is generated once into bench/data/ (gitignored).`;

// ---------- options ----------
/**
 * The options as parseArgs returns them: lists parsed, sizes as numbers.
 * @typedef {object} Options
 * @property {number[]} sizes
 * @property {number[]} batches
 * @property {string[]} modes
 * @property {number} reps
 * @property {number[]} landing
 * @property {number[]} rebuild
 * @property {number} huge
 * @property {number} [threads]
 * @property {string} [memoryLimit]
 * @property {number} timeout
 * @property {boolean} check
 * @property {boolean} [floor]
 * @property {boolean} fresh
 * @property {boolean} keepWork
 * @property {string[]} engines
 * @property {string} [build]
 * @property {number[]} pgSizes
 * @property {number[]} pgBatches
 * @property {string[]} pgModes
 * @property {number} pgReps
 * @property {string} [pgUrl]
 * @property {string} pgConf
 * @property {Record<string, string>} pgConfig
 * @property {number} pgChunk
 * @property {number[]} sparkSizes
 * @property {number[]} sparkBatches
 * @property {string[]} sparkModes
 * @property {number} sparkReps
 * @property {string} [sparkUrl]
 * @property {boolean} peers
 * @property {number[]} peerBatches
 * @property {string} peerSource
 * @property {string[]} settings
 * @property {string} [dist] the build under test (set by main)
 */

/** @returns {Options} */
function parseArgs(argv) {
  /** @type {any} the options as given (text), turned into their parsed types below */
  const o = {
    sizes: process.env.BENCH_SIZES ?? '1m',
    batches: process.env.BENCH_BATCHES ?? '1k,100k',
    modes: process.env.BENCH_MODES ?? 'in,out',
    reps: Number(process.env.BENCH_REPS ?? 3),
    landing: '1m',
    rebuild: undefined,
    huge: 0,
    threads: undefined,
    memoryLimit: undefined,
    timeout: 3600,
    check: true,
    fresh: false,
    keepWork: false,
    engines: process.env.BENCH_ENGINES ?? 'duckdb',
    pgSizes: '1m',
    pgBatches: '100k',
    pgModes: undefined,
    pgReps: undefined,
    pgUrl: undefined,
    pgConf: '',
    pgChunk: 'all',
    sparkSizes: '1m',
    sparkBatches: '1k,100k',
    sparkModes: undefined,
    sparkReps: undefined,
    sparkUrl: undefined,
    peers: false,
    peerBatches: undefined,
    peerSource: 'table',
  };
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    const val = () => {
      const v = argv[++i];
      if (v === undefined) throw new Error(`${a} needs a value`);
      return v;
    };
    if (a === '--help' || a === '-h') {
      console.log(HELP);
      process.exit(0);
    } else if (a === '--sizes') o.sizes = val();
    else if (a === '--batches') o.batches = val();
    else if (a === '--modes') o.modes = val();
    else if (a === '--reps') o.reps = Number(val());
    else if (a === '--landing') o.landing = val();
    else if (a === '--rebuild') o.rebuild = val();
    else if (a === '--full') {
      o.sizes = '1m,10m';
      o.batches = '1k,100k,1m';
      o.rebuild ??= '10m';
    } else if (a === '--huge') o.huge = argv[i + 1] && /^\d+(\.\d+)?$/.test(argv[i + 1]) ? Number(argv[++i]) : 5;
    else if (a === '--threads') o.threads = Number(val());
    else if (a === '--memory-limit') o.memoryLimit = val();
    else if (a === '--timeout') o.timeout = Number(val());
    else if (a === '--no-check') o.check = false;
    else if (a === '--floor') o.floor = true;
    else if (a === '--fresh') o.fresh = true;
    else if (a === '--keep-work') o.keepWork = true;
    else if (a === '--engines') o.engines = val();
    else if (a === '--build') o.build = val();
    else if (a === '--pg-sizes') o.pgSizes = val();
    else if (a === '--pg-batches') o.pgBatches = val();
    else if (a === '--pg-modes') o.pgModes = val();
    else if (a === '--pg-reps') o.pgReps = Number(val());
    else if (a === '--pg-url') o.pgUrl = val();
    else if (a === '--pg-conf') o.pgConf = val();
    else if (a === '--pg-chunk') o.pgChunk = val();
    else if (a === '--spark-sizes') o.sparkSizes = val();
    else if (a === '--spark-batches') o.sparkBatches = val();
    else if (a === '--spark-modes') o.sparkModes = val();
    else if (a === '--spark-reps') o.sparkReps = Number(val());
    else if (a === '--spark-url') o.sparkUrl = val();
    else if (a === '--peers') o.peers = true;
    else if (a === '--peer-batches') o.peerBatches = val();
    else if (a === '--peer-source') o.peerSource = val();
    else throw new Error(`unknown option ${a} (see --help)`);
  }
  const list = (s) =>
    s === 'none' || s === ''
      ? []
      : String(s)
          .split(',')
          .map((x) => x.trim())
          .filter(Boolean);
  o.sizes = list(o.sizes).map(parseSize);
  o.batches = list(o.batches).map(parseSize);
  o.modes = list(o.modes);
  for (const m of o.modes) if (m !== 'in' && m !== 'out') throw new Error(`--modes: "${m}" is not in or out`);
  o.landing = list(o.landing).map(parseSize);
  o.rebuild = o.rebuild === undefined ? (o.sizes.length ? [Math.max(...o.sizes)] : []) : list(o.rebuild).map(parseSize);
  if (!(o.reps >= 1)) throw new Error('--reps must be at least 1');
  o.engines = list(o.engines);
  for (const e of o.engines) if (!['duckdb', 'postgres', 'spark'].includes(e)) throw new Error(`--engines: "${e}" is not duckdb, postgres or spark`);
  o.pgSizes = list(o.pgSizes).map(parseSize);
  o.pgBatches = list(o.pgBatches).map(parseSize);
  o.pgModes = o.pgModes === undefined ? o.modes : list(o.pgModes);
  for (const m of o.pgModes) if (m !== 'in' && m !== 'out') throw new Error(`--pg-modes: "${m}" is not in or out`);
  o.pgReps = o.pgReps ?? o.reps;
  if (!(o.pgReps >= 1)) throw new Error('--pg-reps must be at least 1');
  o.pgConfig = PG.parsePgConf(o.pgConf);
  o.pgChunk = o.pgChunk === 'all' ? 0 : parseSize(o.pgChunk);
  o.sparkSizes = list(o.sparkSizes).map(parseSize);
  o.sparkBatches = list(o.sparkBatches).map(parseSize);
  o.sparkModes = o.sparkModes === undefined ? o.modes : list(o.sparkModes);
  for (const m of o.sparkModes) if (m !== 'in' && m !== 'out') throw new Error(`--spark-modes: "${m}" is not in or out`);
  o.sparkReps = o.sparkReps ?? o.reps;
  if (!(o.sparkReps >= 1)) throw new Error('--spark-reps must be at least 1');
  o.peerBatches = o.peerBatches === undefined ? (o.batches.length ? [Math.max(...o.batches)] : []) : list(o.peerBatches).map(parseSize);
  if (!['table', 'batch'].includes(o.peerSource)) throw new Error(`--peer-source: "${o.peerSource}" is not table or batch`);
  o.settings = [];
  if (o.threads) o.settings.push(`SET threads = ${o.threads}`);
  if (o.memoryLimit) o.settings.push(`SET memory_limit = '${o.memoryLimit.replace(/'/g, '')}'`);
  return o;
}

// ---------- helpers ----------
const log = (...a) => console.error(...a);
const median = (xs) => {
  const s = xs.filter((x) => typeof x === 'number').sort((a, b) => a - b);
  if (!s.length) return null;
  return s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
};
const max = (xs) => (xs.filter((x) => typeof x === 'number').length ? Math.max(...xs.filter((x) => typeof x === 'number')) : null);

function rmDb(file) {
  for (const f of [file, `${file}.wal`, `${file}.tmp`]) rmSync(f, { force: true });
}
function copyDb(from, to) {
  rmDb(to);
  copyFileSync(from, to);
  if (existsSync(`${from}.wal`)) copyFileSync(`${from}.wal`, `${to}.wal`);
  // The copy's dirty pages are written now, not while the next timed run writes its own.
  spawnSync('sync');
}

/** A fingerprint of scdkit's build: cached initial databases are rebuilt when the engine changes. */
function buildFingerprint() {
  const h = createHash('sha1');
  const walk = (dir) => {
    for (const e of readdirSync(dir, { withFileTypes: true }).sort((a, b) => a.name.localeCompare(b.name))) {
      const p = path.join(dir, e.name);
      if (e.isDirectory()) walk(p);
      else if (e.name.endsWith('.js')) h.update(e.name).update(readFileSync(p));
    }
  };
  walk(path.join(root, 'dist'));
  return h.digest('hex').slice(0, 10);
}

/** Run one task in a fresh child process; peak RSS from /usr/bin/time -v (else the child's VmHWM). */
function runChild(task, opts) {
  const json = JSON.stringify({ ...task, settings: opts.settings, dist: opts.dist });
  const useTime = existsSync(TIME);
  const cmd = useTime ? TIME : process.execPath;
  const args = useTime ? ['-v', process.execPath, childScript, json] : [childScript, json];
  return new Promise((resolve) => {
    // own process group, so a timeout kills node too, not only /usr/bin/time
    const child = spawn(cmd, args, { cwd: root, stdio: ['ignore', 'pipe', 'pipe'], detached: true });
    let out = '';
    let err = '';
    child.stdout.on('data', (d) => (out += d));
    child.stderr.on('data', (d) => {
      err += d;
      if (task.echo) for (const l of String(d).split('\n')) if (l.startsWith('  setup commit')) log(l);
    });
    const timer = setTimeout(() => {
      try {
        process.kill(-child.pid, 'SIGKILL');
      } catch {}
    }, opts.timeout * 1000);
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      const line = out.split('\n').find((l) => l.startsWith('RESULT '));
      const r = line ? JSON.parse(line.slice(7)) : { error: { message: `no result (exit ${code ?? signal})` } };
      const rss = /Maximum resident set size \(kbytes\): (\d+)/.exec(err);
      r.rssMb = rss ? Number(rss[1]) / 1024 : r.vmHwmMb;
      if (!line || (code !== 0 && !r.error)) {
        const tail = err
          .split('\n')
          .filter((l) => l && !/^\s/.test(l) && !l.startsWith('Command being timed'))
          .slice(-8)
          .join('\n');
        r.error ??= { message: `child exited ${code ?? signal}` };
        r.error.stderr = tail;
        if (signal === 'SIGKILL') r.error.message = `killed after ${opts.timeout} s (--timeout)`;
      }
      resolve(r);
    });
  });
}

// ---------- setup: the initial database of size N, cached per (data version, scdkit build) ----------
async function ensureBase(N, opts, fp, setups) {
  const initial = await ensureFile(dataDir, 'initial', { N }, log);
  const prefix = `base_n${sizeLabel(N)}_`;
  const base = path.join(genDir, `${prefix}${fp}.duckdb`);
  const meta = `${base}.json`;
  if (setups.has(N) && existsSync(base)) return base;
  for (const f of readdirSync(genDir)) {
    if (f.startsWith(prefix) && !f.startsWith(`${prefix}${fp}.`)) rmSync(path.join(genDir, f), { force: true });
  }
  if (opts.fresh && !setups.has(N)) {
    rmDb(base);
    rmSync(meta, { force: true });
  }
  if (existsSync(base) && existsSync(meta)) {
    setups.set(N, { ...JSON.parse(readFileSync(meta, 'utf8')), cached: true });
    return base;
  }
  rmDb(base);
  log(`setup: scdkit applies ${path.basename(initial)} to a new database (timed separately, not part of the cases) ...`);
  const r = await runChild({ kind: 'setup', db: base, file: initial }, opts);
  if (r.error) {
    rmDb(base);
    throw new Error(`setup of the ${sizeLabel(N)} dimension failed: ${JSON.stringify(r.error)}`);
  }
  log(`  ${r.seconds.toFixed(1)} s, ${r.versions} versions (${r.current} current), peak RSS ${r.rssMb.toFixed(0)} MB, ${(statSync(base).size / 1e6).toFixed(0)} MB file`);
  const info = { N, seconds: r.seconds, rssMb: r.rssMb, versions: r.versions, current: r.current, events: r.result?.eventsApplied, fileMb: statSync(base).size / 1e6 };
  writeFileSync(meta, JSON.stringify(info));
  setups.set(N, info);
  return base;
}

// ---------- cases ----------
function sideSummary(runs) {
  const ok = runs.filter((r) => !r.error);
  return {
    median: ok.length === runs.length ? median(ok.map((r) => r.seconds)) : null,
    closeMedian: ok.length === runs.length ? median(ok.map((r) => r.closeSeconds)) : null,
    runs: runs.map((r) => r.seconds ?? null),
    peakRssMb: max(runs.map((r) => r.rssMb)),
    peakServerRssMb: max(runs.map((r) => r.serverRssMb)),
    error: runs.find((r) => r.error)?.error,
    detail: runs,
  };
}

/** Median of the per-repetition ratios (each pair ran back to back): steadier on a busy machine. */
function pairedRatio(a, b) {
  return median(a.map((r, i) => (r.seconds != null && b[i]?.seconds ? r.seconds / b[i].seconds : null)));
}

async function batchCase(c, base, opts, peerBases) {
  const s = path.join(workDir, 'scdkit.duckdb');
  const b = path.join(workDir, 'baseline.duckdb');
  const sRuns = [];
  const bRuns = [];
  const fl = floorRuns();
  const floorChecks = {};
  const peers = Object.keys(peerBases ?? {});
  const pRuns = Object.fromEntries(peers.map((t) => [t, []]));
  const correctness = {};
  let check;
  for (let rep = 0; rep < opts.reps; rep++) {
    copyDb(base, s);
    copyDb(base, b);
    const runS = async () => sRuns.push(await runChild({ kind: 'scdkit', db: s, file: c.file }, opts));
    const runB = async () => bRuns.push(await runChild({ kind: 'baseline', db: b, file: c.file }, opts));
    const floorSide = (kind) => async () => {
      const f = path.join(workDir, `${kind}.duckdb`);
      copyDb(base, f);
      fl[kind].push(await runChild({ kind, db: f, file: c.file }, opts));
      // The floors are real jobs: in order, each gives the baseline's rows (checked once).
      if (rep === 0 && c.mode === 'in' && opts.check) floorChecks[kind] = f;
      else rmDb(f);
    };
    // alternate which side runs first, so slow drift of a shared machine hits each alike
    const peerSide = (tool) => async () => pRuns[tool].push(await peerRun(tool, peerBases[tool], c.file, peerContext(opts)));
    const sides = [...caseSides(opts, runS, runB, floorSide), ...peers.map(peerSide)];
    for (let k = 0; k < sides.length; k++) await sides[(k + rep) % sides.length]();
    log(repLine(rep, opts, sRuns, bRuns, fl) + peers.map((t) => `, ${t} ${fmtPeerRun(pRuns[t].at(-1))}`).join(''));
    if (rep === 0 && c.mode === 'in' && opts.check && !sRuns[0].error && !bRuns[0].error) {
      check = await runChild({ kind: 'check', scdDb: s, baseDb: b }, opts);
      log(`  check: ${fmtCheck(check)}`);
    }
    // What each side made of the batch (first repetition, untimed): the peers' correctness column.
    if (rep === 0 && peers.length) {
      const ok = !sRuns[0].error;
      const sides = [
        ['scdkit', s, { table: TARGET, from: '"__START_AT"', to: '"__END_AT"' }, null, !ok],
        ['baseline', b, { table: BASE_TABLE, from: 'effective_from', to: 'effective_to', openEnd: "TIMESTAMP '9999-12-31'" }, ok ? s : null, bRuns[0].error],
        ...peers.map((t) => [t, pRuns[t][0].db, PEERS[t].history, ok ? s : null, pRuns[t][0].error]),
      ];
      for (const [side, db, history, scdDb, failed] of sides) {
        if (failed) continue;
        correctness[side] = await runChild({ kind: 'correctness', db, history, file: c.file, scdDb }, opts);
        log(`  correctness ${side}: ${fmtCorrectness(correctness[side])}`);
      }
    }
    for (const t of peers) rmDb(pRuns[t].at(-1).db);
    for (const [kind, db] of Object.entries(floorChecks)) {
      const fc = await runChild({ kind: 'check', scdDb: db, baseDb: b, floor: true }, opts);
      log(`  check ${kind}: ${fmtCheck(fc)}`);
      check ??= {};
      check[kind] = fc;
      rmDb(db);
      delete floorChecks[kind];
    }
    if (!(opts.keepWork && rep === opts.reps - 1)) [s, b].forEach(rmDb);
    if (sRuns.at(-1).error && bRuns.at(-1).error) break;
  }
  /** @type {Record<string, any>} */
  const out = { scdkit: sideSummary(sRuns), baseline: sideSummary(bRuns), pairedRatio: pairedRatio(sRuns, bRuns), check, ...floors(opts, sRuns, bRuns, fl) };
  if (peers.length) out.peers = Object.fromEntries(peers.map((t) => [t, peerSummary(sRuns, pRuns[t])]));
  if (peers.length) out.correctness = correctness;
  return out;
}

/** What a peer run needs of the harness. */
const peerContext = (opts) => ({ dataDir, genDir, log, runChild, opts, copyDb });

/** A peer's runs: the whole process, the SQL alone, the landing; scdkit's ratio to each, paired by repetition. */
function peerSummary(sRuns, runs) {
  const sql = runs.map((r) => ({ seconds: r.error ? null : r.sqlSeconds }));
  const withLanding = runs.map((r) => ({ seconds: r.error ? null : r.seconds + r.landingSeconds }));
  return {
    ...sideSummary(runs.map(({ db, ...r }) => r)),
    sqlMedian: median(sql.map((r) => r.seconds)),
    landingMedian: median(runs.map((r) => r.landingSeconds)),
    sqlStatements: runs.find((r) => !r.error)?.sqlStatements,
    ratio: pairedRatio(sRuns, runs),
    sqlRatio: pairedRatio(sRuns, sql),
    withLandingRatio: pairedRatio(sRuns, withLanding),
  };
}

const fmtPeerRun = (r) =>
  !r
    ? '-'
    : r.error
      ? `ERROR (${r.error.message})`
      : `${r.seconds.toFixed(2)} s (SQL ${r.sqlSeconds.toFixed(2)} s, landing ${r.landingSeconds.toFixed(2)} s) / ${r.rssMb?.toFixed(0)} MB`;
const fmtCorrectness = (c) =>
  c.error
    ? `ERROR ${c.error.message}`
    : `${c.versions} versions (${c.current} current); late placed ${c.late_placed}, made current ${c.late_made_current} (of ${c.late_events}); deletes at event time ${c.deletes_at_event_time}, at another time ${c.deletes_at_other_time}, still current ${c.deletes_still_current} (of ${c.deletes}); unchanged versions ${c.unchanged_versions}${
        c.not_in_scdkit != null ? `; rows not in scdkit's ${c.not_in_scdkit}, scdkit's rows missing ${c.missing_from_scdkit}` : ''
      }`;

async function landingCase(c, opts) {
  const s = path.join(workDir, 'scdkit.duckdb');
  const b = path.join(workDir, 'baseline.duckdb');
  const sRuns = [];
  const bRuns = [];
  const reps = c.huge ? 1 : opts.reps;
  for (let rep = 0; rep < reps; rep++) {
    [s, b].forEach(rmDb);
    const runS = async () => sRuns.push(await runChild({ kind: 'scdkit', db: s, file: c.file }, opts));
    const runB = async () => bRuns.push(await runChild({ kind: 'baseline', db: b, file: c.file, create: true }, opts));
    if (rep % 2 === 0) await runS().then(runB);
    else await runB().then(runS);
    log(`  rep ${rep + 1}: scdkit ${fmtRun(sRuns.at(-1))}, baseline ${fmtRun(bRuns.at(-1))}`);
    if (!(opts.keepWork && rep === reps - 1)) [s, b].forEach(rmDb);
  }
  return { scdkit: sideSummary(sRuns), baseline: sideSummary(bRuns), pairedRatio: pairedRatio(sRuns, bRuns) };
}

async function rebuildCase(_c, base, opts) {
  const w = path.join(workDir, 'rebuild.duckdb');
  const sRuns = [];
  const refRuns = [];
  let available = true;
  for (let rep = 0; rep < opts.reps; rep++) {
    copyDb(base, w);
    refRuns.push(await runChild({ kind: 'sort', db: w }, opts));
    rmDb(w);
    if (available) {
      copyDb(base, w);
      const r = await runChild({ kind: 'rebuild', db: w }, opts);
      rmDb(w);
      if (r.available === false) available = false;
      else sRuns.push(r);
    }
    log(`  rep ${rep + 1}: scdkit rebuild ${available ? fmtRun(sRuns.at(-1)) : 'n/a'}, DuckDB sort ${fmtRun(refRuns.at(-1))}`);
  }
  return {
    scdkit: available ? sideSummary(sRuns) : { available: false },
    baseline: sideSummary(refRuns),
    pairedRatio: available ? pairedRatio(sRuns, refRuns) : null,
    events: refRuns[0]?.events,
  };
}

// ---------- PostgreSQL ----------
/**
 * The initial database of size N on the server, as a template database. scdkit applies the
 * initial file in one commit, as on DuckDB (or in commits of --pg-chunk events, in sequence
 * order); the baseline table is made from scdkit's target, as on DuckDB.
 * The result is cached as a pg_dump per scdkit build, restored into later runs' servers.
 */
async function ensurePgBase(N, server, opts, fp, setups) {
  const template = `bench_base_n${sizeLabel(N).toLowerCase()}`;
  if (setups.has(N)) return template;
  const prefix = `pg_base_n${sizeLabel(N)}_`;
  const chunkLabel = opts.pgChunk ? sizeLabel(opts.pgChunk) : 'all';
  const key = `${prefix}${fp}_c${chunkLabel}`;
  const dump = path.join(genDir, `${key}.dump`);
  const meta = `${dump}.json`;
  for (const f of readdirSync(genDir)) if (f.startsWith(prefix) && !f.startsWith(`${key}.`)) rmSync(path.join(genDir, f), { force: true });
  if (opts.fresh)
    [dump, meta].forEach((f) => {
      rmSync(f, { force: true });
    });
  await PG.createDatabase(server, template);
  let info;
  if (existsSync(dump) && existsSync(meta)) {
    const t = Date.now();
    PG.restoreDatabase(server, template, dump);
    info = { ...JSON.parse(readFileSync(meta, 'utf8')), cached: true, restoreSeconds: (Date.now() - t) / 1000 };
    log(`setup (postgres) ${sizeLabel(N)}: restored from ${path.relative(root, dump)} in ${info.restoreSeconds.toFixed(1)} s`);
  } else {
    const files = opts.pgChunk ? await ensureInitialChunks(dataDir, N, opts.pgChunk, log) : [await ensureFile(dataDir, 'initial', { N }, log)];
    log(
      `setup (postgres) ${sizeLabel(N)}: scdkit applies ${opts.pgChunk ? `the initial events in ${files.length} commits of ${chunkLabel}` : path.basename(files[0])} (timed separately, not part of the cases) ...`,
    );
    const r = await runChild({ kind: 'setup', db: PG.dbUrl(server, template), files, echo: true }, { ...opts, timeout: Math.max(opts.timeout, 4 * 3600) });
    if (r.error) throw new Error(`postgres setup of the ${sizeLabel(N)} dimension failed: ${JSON.stringify(r.error)}`);
    info = {
      N,
      engine: 'postgres',
      seconds: r.seconds,
      commits: r.commits,
      chunk: opts.pgChunk || 'all',
      slowestCommitSeconds: r.slowestCommitSeconds,
      rssMb: r.rssMb,
      serverRssMb: r.serverRssMb,
      versions: r.versions,
      current: r.current,
      events: r.result?.eventsApplied,
      server: server.version,
    };
    log(`  ${r.seconds.toFixed(1)} s in ${r.commits} commits (slowest ${r.slowestCommitSeconds.toFixed(1)} s), ${r.versions} versions (${r.current} current)`);
    PG.dumpDatabase(server, template, `${dump}.tmp`);
    renameSync(`${dump}.tmp`, dump);
    writeFileSync(meta, JSON.stringify(info));
  }
  await PG.vacuumAnalyze(server, template);
  setups.set(N, info);
  return template;
}

async function pgBatchCase(c, template, server, opts) {
  const sDb = 'bench_scdkit';
  const bDb = 'bench_baseline';
  const lDb = 'bench_floor';
  const sRuns = [];
  const bRuns = [];
  const fl = floorRuns();
  let check;
  for (let rep = 0; rep < opts.pgReps; rep++) {
    await PG.copyDatabase(server, template, sDb);
    await PG.copyDatabase(server, template, bDb);
    const runS = async () => sRuns.push(await runChild({ kind: 'scdkit', db: PG.dbUrl(server, sDb), file: c.file }, opts));
    const runB = async () => bRuns.push(await runChild({ kind: 'baseline', db: PG.dbUrl(server, bDb), file: c.file }, opts));
    const floorSide = (kind) => async () => {
      await PG.copyDatabase(server, template, lDb);
      fl[kind].push(await runChild({ kind, db: PG.dbUrl(server, lDb), file: c.file }, opts));
      await PG.dropDatabase(server, lDb);
    };
    const sides = caseSides(opts, runS, runB, floorSide);
    for (let k = 0; k < sides.length; k++) await sides[(k + rep) % sides.length]();
    log(repLine(rep, opts, sRuns, bRuns, fl));
    if (rep === 0 && c.mode === 'in' && opts.check && !sRuns[0].error && !bRuns[0].error) {
      check = await runChild({ kind: 'check', scdDb: PG.dbUrl(server, sDb), baseDb: PG.dbUrl(server, bDb) }, opts);
      log(`  check: ${fmtCheck(check)}`);
    }
    if (!(opts.keepWork && rep === opts.pgReps - 1)) for (const db of [sDb, bDb]) await PG.dropDatabase(server, db);
    if (sRuns.at(-1).error && bRuns.at(-1).error) break;
  }
  return { scdkit: sideSummary(sRuns), baseline: sideSummary(bRuns), pairedRatio: pairedRatio(sRuns, bRuns), check, ...floors(opts, sRuns, bRuns, fl) };
}

/** The floors of bench/floor.mjs (--floor): each child task's kind, and its key in the results. */
const FLOORS = [
  ['floor', 'floor'],
  ['floor-log', 'floorLog'],
  ['floor-check', 'floorCheck'],
];
/** Each floor's runs, by kind. */
const floorRuns = () => Object.fromEntries(FLOORS.map(([kind]) => [kind, []]));
/** The batch case's sides: scdkit, the baseline, and (--floor) each floor run by `floorSide`. */
const caseSides = (opts, runS, runB, floorSide) => (opts.floor ? [runS, runB, ...FLOORS.map(([kind]) => floorSide(kind))] : [runS, runB]);
/** One repetition's line of the log. */
const repLine = (rep, opts, sRuns, bRuns, fl) =>
  `  rep ${rep + 1}: scdkit ${fmtRun(sRuns.at(-1))}, baseline ${fmtRun(bRuns.at(-1))}${opts.floor ? FLOORS.map(([kind]) => `, ${kind} ${fmtRun(fl[kind].at(-1))}`).join('') : ''}`;

/** The floors' summaries (--floor), each paired by repetition with the baseline; scdkit's with the floor. */
function floors(opts, sRuns, bRuns, fl) {
  if (!opts.floor) return {};
  const out = { overFloor: pairedRatio(sRuns, fl.floor) };
  for (const [kind, key] of FLOORS) Object.assign(out, { [key]: sideSummary(fl[kind]), [`${key}Ratio`]: pairedRatio(fl[kind], bRuns) });
  return out;
}

function printFloors(rows) {
  const sec = (x) => (x.median == null ? 'ERROR' : x.median.toFixed(2));
  const x = (v) => (v == null ? 'n/a' : `${v.toFixed(2)}×`);
  for (const r of rows.filter((r) => r.floor && !r.sparkFloor))
    console.log(
      `${r.name}: baseline ${sec(r.baseline)} s; floor-log (baseline + narrowest log) ${sec(r.floorLog)} s = ${x(r.floorLogRatio)}; floor-check (floor-log + every value's kind) ${r.floorCheck ? sec(r.floorCheck) : '-'} s = ${x(r.floorCheckRatio)}; floor (one read + log + feed) ${sec(r.floor)} s = ${x(r.floorRatio)}; scdkit ${sec(r.scdkit)} s = ${x(r.overFloor)} the floor${
        r.check?.floor ? ` (in-order check: ${FLOORS.map(([kind]) => `${kind} ${fmtCheck(r.check[kind])}`).join(', ')})` : ''
      }`,
    );
}

function printSparkFloors(rows) {
  const sec = (x) => (x?.median == null ? 'ERROR' : x.median.toFixed(2));
  const x = (v) => (v == null ? 'n/a' : `${v.toFixed(2)}×`);
  for (const r of rows.filter((r) => r.sparkFloor)) {
    const checks = r.floorChecks
      ? ` (in-order check: ${Object.entries(r.floorChecks)
          .map(([kind, c]) => `${kind} ${fmtCheck(c)}`)
          .join(', ')})`
      : '';
    console.log(
      `${r.name}: baseline ${sec(r.baseline)} s; floor-log (baseline + narrowest log) ${sec(r.floorLog)} s = ${x(r.floorLogRatio)}; floor (lease + one MERGE + log + record) ${sec(r.floor)} s = ${x(r.floorRatio)}; floor-state (floor + each key's last sequence) ${sec(r.floorState)} s = ${x(r.floorStateRatio)}; floor-logread (floor + the keys' last sequences from the log) ${sec(r.floorLogRead)} s = ${x(r.floorLogReadRatio)}; scdkit ${sec(r.scdkit)} s = ${x(r.overFloor)} the floor${checks}`,
    );
  }
}

const fmtRun = (r) =>
  !r
    ? '-'
    : r.error
      ? `ERROR (${r.error.code ?? r.error.name ?? ''}${/killed after/.test(r.error.message) ? ' timeout' : ''})`
      : `${r.seconds.toFixed(2)} s / ${r.rssMb?.toFixed(0)} MB${r.serverRssMb != null ? ` + server ${r.serverRssMb.toFixed(0)} MB` : ''}`;
const fmtCheck = (c) =>
  !c ? '-' : c.error ? `ERROR ${c.error.message}` : c.only_scdkit === 0 && c.only_baseline === 0 ? `same ${c.rows_scdkit} rows` : `${c.only_scdkit + c.only_baseline} rows differ`;

// ---------- report ----------
function table(rows, { server = false } = {}) {
  const head = ['case', 'scdkit s', 'baseline s', 'ratio', server ? 'scdkit MB node/server' : 'scdkit MB', server ? 'baseline MB node/server' : 'baseline MB', 'in-order check'];
  const cells = rows.map((r) => {
    const s = r.scdkit;
    const b = r.baseline;
    const sec = (x) => (x.available === false ? 'n/a' : x.error ? 'ERROR' : x.median == null ? '-' : `${x.median.toFixed(2)} (+${x.closeMedian.toFixed(2)})`);
    const mb = (x) =>
      x.available === false || x.peakRssMb == null
        ? 'n/a'
        : server
          ? `${x.peakRssMb.toFixed(0)} / ${x.peakServerRssMb == null ? '?' : x.peakServerRssMb.toFixed(0)}`
          : x.peakRssMb.toFixed(0);
    const ratio = s.median != null && b.median ? `${(s.median / b.median).toFixed(2)}×` : 'n/a';
    return [r.name, sec(s), sec(b), ratio, mb(s), mb(b), r.check ? fmtCheck(r.check) : ''];
  });
  const w = head.map((h, i) => Math.max(h.length, ...cells.map((c) => c[i].length)));
  const line = (c) => '| ' + c.map((x, i) => (i === 0 || i === 6 ? x.padEnd(w[i]) : x.padStart(w[i]))).join(' | ') + ' |';
  return [line(head), '|' + w.map((n, i) => (i === 0 || i === 6 ? ':' : '-') + '-'.repeat(n) + (i === 0 || i === 6 ? '-' : ':')).join('|') + '|', ...cells.map(line)].join('\n');
}

/** The peers' figures: the whole process and the SQL alone of each, beside scdkit, with the ratios. */
function peerTable(rows) {
  const tools = Object.keys(rows[0].peers);
  const sec = (x) => (x == null ? '-' : x.toFixed(2));
  const rx = (x) => (x == null ? 'n/a' : `${x.toFixed(2)}×`);
  const head = ['case', 'scdkit s', 'baseline s', ...tools.flatMap((t) => [`${t} process s`, `${t} SQL s`, `${t} landing s`, `${t} MB`, `÷ ${t} process`, `÷ ${t} SQL`])];
  const cells = rows.map((r) => [
    r.name,
    sec(r.scdkit.median),
    sec(r.baseline.median),
    ...tools.flatMap((t) => {
      const p = r.peers[t];
      return [p.error ? 'ERROR' : sec(p.median), sec(p.sqlMedian), sec(p.landingMedian), p.peakRssMb == null ? '-' : p.peakRssMb.toFixed(0), rx(p.ratio), rx(p.sqlRatio)];
    }),
  ]);
  return markdown(head, cells);
}

function correctnessTable(rows) {
  const head = [
    'case',
    'side',
    'versions',
    'late events placed / made current / dropped',
    'deletes closed at the event',
    'deletes closed at run time',
    'deletes still current',
    'versions that change nothing',
    'rows ≠ scdkit (extra / missing)',
  ];
  const cells = rows.flatMap((r) =>
    Object.entries(r.correctness ?? {}).map(([side, c]) =>
      c.error
        ? [r.name, side, 'ERROR', '', '', '', '', '', '']
        : [
            r.name,
            side,
            String(c.versions),
            `${c.late_placed} / ${c.late_made_current} / ${c.late_events - c.late_placed - c.late_made_current}`,
            String(c.deletes_at_event_time),
            String(c.deletes_at_other_time),
            String(c.deletes_still_current),
            String(c.unchanged_versions),
            c.not_in_scdkit == null ? '-' : `${c.not_in_scdkit} / ${c.missing_from_scdkit}`,
          ],
    ),
  );
  return markdown(head, cells);
}

function markdown(head, cells) {
  const w = head.map((h, i) => Math.max(h.length, ...cells.map((c) => c[i].length)));
  const line = (c) => '| ' + c.map((x, i) => (i <= 1 ? x.padEnd(w[i]) : x.padStart(w[i]))).join(' | ') + ' |';
  return [line(head), '|' + w.map((n, i) => (i <= 1 ? ':' + '-'.repeat(n + 1) : '-'.repeat(n + 1) + ':')).join('|') + '|', ...cells.map(line)].join('\n');
}

/** Issue 19's speed targets, from the DuckDB rows of this run: small commits against the 1M-event commit, scdkit against the peers. */
function issue19Targets(rows) {
  const out = [];
  const x = (v) => `${v.toFixed(3)}×`;
  for (const r of rows.filter((r) => r.kind === 'batch' && (r.B === 10 || r.B === 1000))) {
    const big = rows.find((o) => o.kind === 'batch' && o.N === r.N && o.mode === r.mode && o.B === 1e6);
    if (!big || r.scdkit.median == null || big.scdkit.median == null) continue;
    const ratio = r.scdkit.median / big.scdkit.median;
    const target = r.B === 10 ? 0.02 : 0.05;
    out.push(
      `  ${r.name} ÷ ${big.name}: ${x(ratio)} (${r.scdkit.median.toFixed(2)} s ÷ ${big.scdkit.median.toFixed(2)} s; target ≤ ${target}×: ${ratio <= target ? 'met' : 'not met'})`,
    );
  }
  for (const r of rows.filter((r) => r.peers))
    for (const [t, p] of Object.entries(r.peers))
      if (p.ratio != null)
        out.push(
          `  ${r.name}: scdkit ÷ ${PEERS[t].label} ${x(p.ratio)} whole process, ${x(p.sqlRatio)} SQL alone (target ≤ 1.0×: ${p.ratio <= 1 ? 'met' : 'not met'} / ${p.sqlRatio <= 1 ? 'met' : 'not met'})`,
        );
  return out;
}

function machine() {
  const cpus = os.cpus();
  const git = (args) => spawnSync('git', args, { cwd: root, encoding: 'utf8' }).stdout?.trim();
  let duckdb;
  try {
    duckdb = JSON.parse(readFileSync(path.join(root, 'node_modules', '@duckdb', 'node-api', 'package.json'), 'utf8')).version;
  } catch {}
  return {
    date: new Date().toISOString(),
    host: os.hostname(),
    cpus: cpus.length,
    cpuModel: cpus[0]?.model,
    memGb: +(os.totalmem() / 2 ** 30).toFixed(1),
    loadavgAtStart: os.loadavg().map((x) => +x.toFixed(2)),
    platform: `${os.platform()} ${os.release()}`,
    node: process.version,
    duckdbNodeApi: duckdb,
    commit: git(['rev-parse', '--short', 'HEAD']),
    dirty: (git(['status', '--porcelain', '--', 'src']) ?? '').length > 0,
  };
}

// ---------- main ----------
async function main() {
  const opts = parseArgs(process.argv.slice(2));
  if (!existsSync(path.join(root, 'dist', 'index.js'))) throw new Error('dist/ is missing: run `npm run build` (npm run bench does)');
  mkdirSync(workDir, { recursive: true });
  mkdirSync(resultsDir, { recursive: true });
  mkdirSync(genDir, { recursive: true });
  const buildsDir = path.join(dataDir, 'builds');
  if (opts.build && !existsSync(path.join(buildsDir, opts.build, 'index.js'))) throw new Error(`--build: no snapshot ${path.join(buildsDir, opts.build)}`);
  const fp = opts.build ?? buildFingerprint();
  // Snapshot the build: children import this copy, so a rebuild of dist/ mid-run changes nothing.
  // (It sits under bench/ so that its imports still resolve to the project's node_modules.)
  // Snapshots of other builds are removed after a day (a later run may still want one: --build).
  for (const f of existsSync(buildsDir) ? readdirSync(buildsDir) : [])
    if (f !== fp && Date.now() - statSync(path.join(buildsDir, f)).mtimeMs > 864e5) rmSync(path.join(buildsDir, f), { recursive: true, force: true });
  opts.dist = path.join(buildsDir, fp);
  let m = machine();
  const buildInfo = path.join(opts.dist, 'BUILD.json');
  if (!existsSync(path.join(opts.dist, 'index.js'))) {
    cpSync(path.join(root, 'dist'), opts.dist, { recursive: true });
    // the commit the snapshot was built from (as far as git can tell: HEAD, and whether src/ differed)
    writeFileSync(buildInfo, JSON.stringify({ commit: m.commit, dirty: m.dirty, snapshotAt: m.date }));
  }
  if (existsSync(buildInfo)) {
    const b = JSON.parse(readFileSync(buildInfo, 'utf8'));
    m = { ...m, commit: b.commit, dirty: b.dirty, snapshotAt: b.snapshotAt };
  }
  log(`scdkit bench — ${m.cpus} × ${m.cpuModel}, ${m.memGb} GB, load ${m.loadavgAtStart.join(' ')}; scdkit build ${fp}${m.dirty ? ' (uncommitted src changes)' : ''}`);
  if (opts.engines.includes('duckdb'))
    log(`duckdb: sizes ${opts.sizes.map(sizeLabel).join(',') || '-'}; batches ${opts.batches.map(sizeLabel).join(',') || '-'}; modes ${opts.modes.join(',')}; reps ${opts.reps}`);

  const setups = new Map();
  const pgSetups = new Map();
  const peerSetups = [];
  /** @type {any[]} one object per case, of the case's kind and engine */
  const rows = [];
  const t0 = Date.now();
  const duck = opts.engines.includes('duckdb');

  for (const N of duck ? opts.sizes : []) {
    if (!opts.batches.length || !opts.modes.length) break;
    const base = await ensureBase(N, opts, fp, setups);
    const peerBases = {};
    if (opts.peers && opts.batches.some((B) => opts.peerBatches.includes(B))) {
      const initialFile = await ensureFile(dataDir, 'initial', { N }, log);
      for (const tool of Object.keys(PEERS)) {
        peerBases[tool] = await ensurePeerBase(tool, N, { ...peerContext(opts), initialFile });
        peerSetups.push(peerBases[tool].setup);
      }
    }
    for (const B of opts.batches) {
      for (const mode of opts.modes) {
        const file = await ensureFile(dataDir, 'batch', { N, B, mode }, log);
        const name = `${mode === 'in' ? 'in order' : 'out of order'}, ${sizeLabel(B)} onto ${sizeLabel(N)}`;
        log(`case: ${name}`);
        const load = os.loadavg()[0];
        const r = await batchCase({ file, mode }, base, opts, opts.peerBatches.includes(B) ? peerBases : {});
        rows.push({ engine: 'duckdb', name, kind: 'batch', N, B, mode, mix: batchMix(B, mode), file: path.relative(root, file), loadavg: [load, os.loadavg()[0]], ...r });
      }
    }
  }
  const landings = duck ? opts.landing.map((L) => ({ L, huge: false })) : [];
  if (duck && opts.huge) landings.push({ L: await landingLinesFor(opts.huge * 1e9, dataDir), huge: true });
  for (const { L, huge } of landings) {
    const file = await ensureFile(dataDir, 'landing', { L }, log);
    const gb = statSync(file).size / 1e9;
    const name = `landing ${sizeLabel(L)} lines${huge ? ` (${gb.toFixed(1)} GB)` : ''}, empty target`;
    log(`case: ${name}`);
    const load = os.loadavg()[0];
    const r = await landingCase({ file, huge }, opts);
    rows.push({ engine: 'duckdb', name, kind: 'landing', L, fileGb: gb, file: path.relative(root, file), loadavg: [load, os.loadavg()[0]], ...r });
  }
  for (const N of duck ? opts.rebuild : []) {
    const base = await ensureBase(N, opts, fp, setups);
    const name = `rebuild ${sizeLabel(N)}-key log (baseline = DuckDB sort)`;
    log(`case: ${name}`);
    const load = os.loadavg()[0];
    const r = await rebuildCase({}, base, opts);
    rows.push({ engine: 'duckdb', name, kind: 'rebuild', N, loadavg: [load, os.loadavg()[0]], ...r });
  }

  let pgServer;
  if (opts.engines.includes('postgres') && opts.pgSizes.length && opts.pgBatches.length && opts.pgModes.length) {
    pgServer = opts.pgUrl ? PG.existingServer(opts.pgUrl) : await PG.startServer({ conf: opts.pgConfig, log, keepLog: path.join(workDir, 'pg-server.log') });
    try {
      if (!pgServer.version) pgServer.version = await PG.admin(pgServer, async (c) => (await c.query('SELECT version() AS v')).rows[0].v.split(' on ')[0]);
      log(
        `postgres cases: sizes ${opts.pgSizes.map(sizeLabel).join(',')}; batches ${opts.pgBatches.map(sizeLabel).join(',')}; modes ${opts.pgModes.join(',')}; reps ${opts.pgReps}`,
      );
      for (const N of opts.pgSizes) {
        const template = await ensurePgBase(N, pgServer, opts, fp, pgSetups);
        for (const B of opts.pgBatches) {
          for (const mode of opts.pgModes) {
            const file = await ensureFile(dataDir, 'batch', { N, B, mode }, log);
            const name = `postgres: ${mode === 'in' ? 'in order' : 'out of order'}, ${sizeLabel(B)} onto ${sizeLabel(N)}`;
            log(`case: ${name}`);
            const load = os.loadavg()[0];
            const r = await pgBatchCase({ file, mode }, template, pgServer, opts);
            rows.push({ engine: 'postgres', name, kind: 'batch', N, B, mode, mix: batchMix(B, mode), file: path.relative(root, file), loadavg: [load, os.loadavg()[0]], ...r });
          }
        }
      }
    } finally {
      pgServer.stop();
    }
  }

  let spark;
  if (opts.engines.includes('spark') && opts.sparkSizes.length && opts.sparkBatches.length && opts.sparkModes.length) {
    const helpers = { root, dataDir, genDir, fp, log, ensureFile, runChild, sideSummary, pairedRatio, fmtRun, fmtCheck, sparkFloors: SPARK_FLOORS, sparkFloorCopies };
    const r = await SPARK.runSparkCases(opts, helpers);
    rows.push(...r.rows);
    spark = { ...r.spark, setups: r.setups };
  }

  const elapsed = (Date.now() - t0) / 1000;
  const results = {
    machine: { ...m, loadavgAtEnd: os.loadavg().map((x) => +x.toFixed(2)) },
    scdkitBuild: fp,
    options: { ...opts, settings: opts.settings, sparkUrl: opts.sparkUrl && SPARK.safeUrl(opts.sparkUrl) },
    setups: [
      ...[...setups.values()].map((x) => ({ engine: 'duckdb', ...x })),
      ...pgSetups.values(),
      ...(spark?.setups ?? []),
      ...peerSetups.map((x) => ({ engine: 'duckdb', peer: x.tool, ...x })),
    ],
    peers: opts.peers ? { source: opts.peerSource, versions: peerSetups[0]?.versionsOfTools } : undefined,
    spark: spark ? { url: spark.url, version: spark.version, delta: spark.delta, own: spark.own } : undefined,
    postgres: pgServer ? { version: pgServer.version, conf: pgServer.conf, own: pgServer.own, chunk: opts.pgChunk || 'all' } : undefined,
    cases: rows,
    elapsedSeconds: elapsed,
  };
  const out = path.join(resultsDir, `bench-${m.date.replace(/[:.]/g, '-')}.json`);
  writeFileSync(out, JSON.stringify(results, null, 2));

  console.log(
    `\nscdkit bench ${m.date.slice(0, 10)} — ${m.cpus} × ${m.cpuModel}, ${m.memGb} GB RAM, ${m.platform}, node ${m.node}, @duckdb/node-api ${m.duckdbNodeApi}, commit ${m.commit}${m.dirty ? '+changes' : ''}`,
  );
  console.log(`in seconds: the apply (scdkit: applyFiles; baseline: BEGIN … COMMIT), load of the input file included on both sides;`);
  console.log(`ratio = scdkit / baseline, apply only.`);
  const duckRows = rows.filter((r) => r.engine === 'duckdb');
  const pgRows = rows.filter((r) => r.engine === 'postgres');
  if (duckRows.length) {
    console.log(`\nDuckDB, median of ${opts.reps} runs. (+x) = closing the database afterwards (its checkpoint). MB = peak RSS of the process.\n`);
    console.log(table(duckRows));
  }
  for (const s of setups.values())
    console.log(
      `\nsetup ${sizeLabel(s.N)}: scdkit initial load of ${s.events ?? '?'} events → ${s.versions} versions (${s.current} current): ${s.seconds.toFixed(1)} s, ${s.rssMb.toFixed(0)} MB${s.cached ? ' (cached from an earlier run of this build)' : ''}`,
    );
  if (pgRows.length) {
    console.log(
      `\nPostgreSQL (${pgServer.version}${
        pgServer.own
          ? `, throwaway server: ${Object.entries(pgServer.conf)
              .map(([k, v]) => `${k}=${v}`)
              .join(' ')}`
          : ''
      }), median of ${opts.pgReps} runs.`,
    );
    console.log(`(+x) = CHECKPOINT + disconnect afterwards; MB = peak RSS of the node process / of the session's server backend (VmHWM, counts the shared buffers it touched).\n`);
    console.log(table(pgRows, { server: true }));
    for (const s of pgSetups.values())
      console.log(
        `\nsetup postgres ${sizeLabel(s.N)}: scdkit initial load of ${s.events ?? '?'} events in ${s.commits === 1 ? 'one commit' : `${s.commits} commits of ${sizeLabel(s.chunk)}`} → ${s.versions} versions (${s.current} current): ${s.seconds.toFixed(1)} s (slowest commit ${s.slowestCommitSeconds?.toFixed(1)} s)${s.cached ? ` (restored from the dump of an earlier run of this build in ${s.restoreSeconds.toFixed(1)} s)` : ''}`,
      );
  }
  const sparkRows = rows.filter((r) => r.engine === 'spark');
  if (sparkRows.length) {
    console.log(`\nSpark ${spark.version ?? '?'} with Delta Lake ${spark.delta ?? '?'} (Spark Connect, ${spark.url}), median of ${opts.sparkReps} runs.`);
    console.log(`(+x) = closing the Spark Connect session afterwards; MB = peak RSS of the node process (the server's memory is not counted).\n`);
    console.log(table(sparkRows));
    console.log(`\nThe issue's targets (reported, not asserted):`);
    for (const l of SPARK.targetLines(sparkRows)) console.log(l);
    if (opts.floor) {
      console.log(`\nThe floors on Spark (bench/spark-floor.mjs): the least the issue asks of a batch on Delta, hand-written; medians, ratios paired by repetition.\n`);
      printSparkFloors(sparkRows);
    }
    for (const s of spark.setups)
      console.log(
        `\nsetup spark ${sizeLabel(s.N)}: scdkit initial load of ${s.events ?? '?'} events → ${s.versions} versions (${s.current} current): ${s.seconds.toFixed(1)} s${s.cached ? ' (the database of an earlier run of this build)' : ''}`,
      );
  }
  const peerRows = duckRows.filter((r) => r.peers);
  if (peerRows.length) {
    const v = peerSetups[0]?.versionsOfTools ?? {};
    console.log(
      `\nThe peers (bench/peers/): dbt-core ${v['dbt-core']} + dbt-duckdb ${v['dbt-duckdb']}, SQLMesh ${v.sqlmesh}, on DuckDB ${v.duckdb} (Python); source: ${opts.peerSource === 'table' ? 'the source table each batch is landed into first' : 'the batch file'}.`,
    );
    console.log(`process = the tool's command as a whole process (dbt snapshot / sqlmesh run); SQL = its statements' own times; ratios = scdkit ÷ that, paired by repetition.\n`);
    console.log(peerTable(peerRows));
    console.log(`\nWhat each side made of the batch (first repetition):\n`);
    console.log(correctnessTable(peerRows));
    for (const s of peerSetups)
      console.log(
        `\nsetup ${PEERS[s.tool].label} ${sizeLabel(s.N)}: ${s.steps.map((x, i) => `run ${i + 1} ${x.seconds.toFixed(1)} s (SQL ${x.sqlSeconds.toFixed(1)} s)`).join(', ')} → ${s.versions} versions (${s.current} current)${s.cached ? ' (cached)' : ''}`,
      );
  }
  const targets = issue19Targets(duckRows);
  if (targets.length) {
    console.log(`\nIssue 19's targets (reported, not asserted):`);
    for (const l of targets) console.log(l);
  }
  if (opts.floor) {
    console.log(`\nThe floors (bench/floor.mjs): the least docs/SEMANTICS.md asks of a batch, hand-written; medians, ratios paired by repetition.\n`);
    printFloors(rows);
  }
  const errors = rows.flatMap((r) => [
    ...['scdkit', 'baseline', ...FLOORS.map(([, key]) => key), ...SPARK_FLOORS.map(([, key]) => key)].filter((k) => r[k]?.error).map((k) => [r.name, k, r[k].error]),
    ...Object.entries(r.peers ?? {})
      .filter(([, p]) => p.error)
      .map(([t, p]) => [r.name, t, p.error]),
  ]);
  for (const [name, side, e] of errors) console.log(`\nERROR ${name} — ${side}: ${e.code ? `[${e.code}] ` : ''}${e.message}${e.stderr ? `\n${e.stderr}` : ''}`);
  console.log(`\nresults: ${path.relative(process.cwd(), out)}  (${(elapsed / 60).toFixed(1)} min)`);
}

main().catch((e) => {
  console.error(`bench: ${e.message}`);
  process.exit(1);
});
