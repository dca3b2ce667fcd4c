#!/usr/bin/env node
// A local Spark Connect server with Delta Lake, for scdkit's Spark engine and its tests.
//
//   node scripts/spark.mjs start   set up (once) and start it; prints its URL when SELECT 1 answers
//   node scripts/spark.mjs stop    stop it
//   node scripts/spark.mjs status  print the URL if it answers, exit 1 otherwise
//
// Everything lives in one git-ignored folder (.spark/ of the project, or $SCD_SPARK_DIR):
//   venv/        Python virtual environment with pyspark (the Spark distribution: spark-submit, jars)
//   ivy/         Ivy cache of the Delta jars (--packages), kept across runs
//   warehouse/   the tables' files;  metastore_db/  the Hive metastore (Derby): tables persist
//   server.pid, server.log
// Set-up uses the registries only: PyPI (pyspark), Maven Central (Delta, through Ivy), Debian
// (a Java runtime, only when `java` is missing). The first set-up downloads about 400 MB.
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, openSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const DIR = resolve(process.env.SCD_SPARK_DIR || join(ROOT, '.spark'));
const PORT = Number(process.env.SCD_SPARK_PORT || 15002);
const URL_TEXT = `sc://127.0.0.1:${PORT}`;
const PYSPARK = 'pyspark==4.2.0';
// Delta's jar for Spark 4.2 (artifact name with the Spark version, as delta-spark's own pip helper
// names it); 4.4.0 is the newest on Maven Central for it.
const DELTA = 'io.delta:delta-spark_4.2_2.13:4.4.0';
const VENV = join(DIR, 'venv');
const PID_FILE = join(DIR, 'server.pid');
const LOG_FILE = join(DIR, 'server.log');
const READY_TIMEOUT_MS = 15 * 60_000;

const say = (line) => process.stderr.write(`spark: ${line}\n`);
const fail = (line) => {
  say(line);
  process.exit(1);
};

function run(cmd, args, options = {}) {
  const r = spawnSync(cmd, args, { stdio: 'inherit', ...options });
  if (r.status !== 0) fail(`${cmd} ${args.join(' ')} failed (exit ${r.status ?? r.signal})`);
}

function has(cmd, args) {
  return spawnSync(cmd, args, { stdio: 'ignore' }).status === 0;
}

const isRoot = process.getuid?.() === 0;
let aptUpdated = false;
function aptInstall(packages) {
  if (!isRoot) fail(`install ${packages.join(' ')} (as root: apt-get install -y ${packages.join(' ')}) and run this again`);
  if (!aptUpdated) run('apt-get', ['update', '-q']);
  aptUpdated = true;
  run('apt-get', ['install', '-y', '-q', ...packages], { env: { ...process.env, DEBIAN_FRONTEND: 'noninteractive' } });
}

function ensureJava() {
  if (!has('java', ['-version'])) aptInstall(['default-jre-headless']);
}

function ensureSpark() {
  const marker = join(VENV, '.scdkit-installed');
  if (existsSync(marker) && readFileSync(marker, 'utf8').trim() === PYSPARK) return;
  if (!has('python3', ['--version'])) aptInstall(['python3', 'python3-venv']);
  rmSync(VENV, { recursive: true, force: true });
  if (!has('python3', ['-m', 'venv', VENV])) {
    aptInstall(['python3-venv']);
    rmSync(VENV, { recursive: true, force: true });
    run('python3', ['-m', 'venv', VENV]);
  }
  say(`installing ${PYSPARK} into ${VENV} (about 400 MB, once)`);
  run(join(VENV, 'bin', 'pip'), ['install', '-q', '--disable-pip-version-check', PYSPARK]);
  writeFileSync(marker, `${PYSPARK}\n`);
}

/** The pip-installed Spark distribution (site-packages/pyspark: bin/, jars/). */
function sparkHome() {
  const lib = join(VENV, 'lib');
  const python = readdirSync(lib).find((d) => d.startsWith('python3'));
  const home = python && join(lib, python, 'site-packages', 'pyspark');
  if (!home || !existsSync(join(home, 'bin', 'spark-submit'))) fail(`no Spark in ${VENV}: remove ${DIR}/venv and run this again`);
  return home;
}

function runningPid() {
  if (!existsSync(PID_FILE)) return undefined;
  const pid = Number(readFileSync(PID_FILE, 'utf8').trim());
  if (!Number.isInteger(pid) || pid <= 0) return undefined;
  try {
    process.kill(pid, 0);
  } catch {
    return undefined;
  }
  // A pid file outlives a reboot: the number may now be another program's.
  const cmdline = `/proc/${pid}/cmdline`;
  if (existsSync('/proc/self') && (!existsSync(cmdline) || !readFileSync(cmdline, 'utf8').includes('SparkConnectServer'))) return undefined;
  return pid;
}

/** Whether SELECT 1 answers over Spark Connect (an open port is not enough: the session must work). */
async function answers() {
  const { SparkConnectClient } = await import(join(ROOT, 'dist', 'dialects', 'spark', 'spark-connect-client.js'));
  const client = SparkConnectClient.connect(URL_TEXT);
  const timer = new AbortController();
  const t = setTimeout(() => timer.abort(), 20_000);
  try {
    const rows = await client.query('SELECT 1 AS one', { signal: timer.signal });
    return rows.length === 1 && rows[0].one === 1;
  } catch {
    return false;
  } finally {
    clearTimeout(t);
    await client.close();
  }
}

function launch() {
  const home = sparkHome();
  for (const d of ['ivy', 'warehouse']) mkdirSync(join(DIR, d), { recursive: true });
  const conf = {
    'spark.jars.ivy': join(DIR, 'ivy'),
    'spark.sql.extensions': 'io.delta.sql.DeltaSparkSessionExtension',
    'spark.sql.catalog.spark_catalog': 'org.apache.spark.sql.delta.catalog.DeltaCatalog',
    'spark.connect.grpc.binding.address': '127.0.0.1',
    'spark.connect.grpc.binding.port': String(PORT),
    'spark.driver.host': '127.0.0.1',
    'spark.driver.bindAddress': '127.0.0.1',
    // Tables persist across restarts: a Hive metastore (Derby) and the warehouse in the folder.
    'spark.sql.catalogImplementation': 'hive',
    'spark.sql.warehouse.dir': join(DIR, 'warehouse'),
    'spark.hadoop.javax.jdo.option.ConnectionURL': `jdbc:derby:;databaseName=${join(DIR, 'metastore_db')};create=true`,
    // Delta keeps each table's log, with its state cached, for an hour after its last use, however
    // many tables there are (a test run makes hundreds and drops them): keep the 64 latest used.
    'spark.driver.extraJavaOptions': `-Dderby.system.home=${DIR} -Ddelta.log.cacheSize=64`,
    'spark.sql.session.timeZone': 'UTC',
    // A 2-core machine: few shuffle partitions, no web UI (SCD_SPARK_UI=1 turns it on, on
    // 127.0.0.1:4040, to profile: its REST API times each query's stages).
    'spark.sql.shuffle.partitions': '4',
    // Delta rebuilds a table's state from its log in 50 tasks by default: 2 suffice here.
    'spark.databricks.delta.snapshotPartitions': '2',
    'spark.ui.enabled': process.env.SCD_SPARK_UI === '1' ? 'true' : 'false',
    // A hash table built for a broadcast join takes at least one memory page, 64 MB by default
    // however few its rows, and a commit's cached scratch keeps its broadcasts: 1 MB pages.
    'spark.buffer.pageSize': '1m',
    // Even without the web UI, Spark keeps the plans and metrics of its last 1,000 queries, jobs and
    // stages in memory; a commit runs tens of queries, each plan a deep tree: keep a few.
    'spark.sql.ui.retainedExecutions': '50',
    'spark.ui.retainedJobs': '100',
    'spark.ui.retainedStages': '100',
    'spark.ui.retainedTasks': '10000',
    'spark.sql.connect.ui.retainedStatements': '50',
    'spark.sql.connect.ui.retainedSessions': '20',
  };
  const args = [
    '--class',
    'org.apache.spark.sql.connect.service.SparkConnectServer',
    '--name',
    'scdkit-spark-connect',
    '--master',
    'local[*]',
    '--driver-memory',
    process.env.SCD_SPARK_DRIVER_MEMORY || '3g',
    '--packages',
    DELTA,
    ...Object.entries(conf).flatMap(([k, v]) => ['--conf', `${k}=${v}`]),
  ];
  const log = openSync(LOG_FILE, 'w');
  const child = spawn(join(home, 'bin', 'spark-submit'), args, {
    cwd: DIR,
    detached: true, // its own process group: `stop` ends the server and whatever it started
    stdio: ['ignore', log, log],
    env: { ...process.env, SPARK_HOME: home, SPARK_LOCAL_IP: '127.0.0.1' },
  });
  child.unref();
  writeFileSync(PID_FILE, `${child.pid}\n`);
  return child.pid;
}

function logTail() {
  if (!existsSync(LOG_FILE)) return '';
  const lines = readFileSync(LOG_FILE, 'utf8')
    .split('\n')
    .filter((l) => !/^\s+at /.test(l) && l.trim());
  return lines.slice(-15).join('\n');
}

async function start() {
  mkdirSync(DIR, { recursive: true });
  let pid = runningPid();
  if (pid === undefined) {
    ensureJava();
    ensureSpark();
    pid = launch();
    say(`starting (pid ${pid}, log ${LOG_FILE})`);
  }
  const deadline = Date.now() + READY_TIMEOUT_MS;
  while (!(await answers())) {
    if (runningPid() === undefined) fail(`the server stopped before it answered; the end of ${LOG_FILE}:\n${logTail()}`);
    if (Date.now() > deadline) fail(`no answer to SELECT 1 after ${READY_TIMEOUT_MS / 60_000} minutes; see ${LOG_FILE}`);
    await new Promise((r) => setTimeout(r, 2000));
  }
  process.stdout.write(`${URL_TEXT}\n`);
}

async function stop() {
  const pid = runningPid();
  if (pid === undefined) {
    rmSync(PID_FILE, { force: true });
    say('not running');
    return;
  }
  const signal = (s) => {
    try {
      process.kill(-pid, s); // the whole process group started by `start`
    } catch {
      try {
        process.kill(pid, s);
      } catch {
        /* gone */
      }
    }
  };
  signal('SIGTERM');
  const deadline = Date.now() + 60_000;
  while (runningPid() !== undefined && Date.now() < deadline) await new Promise((r) => setTimeout(r, 500));
  if (runningPid() !== undefined) signal('SIGKILL');
  rmSync(PID_FILE, { force: true });
  say(`stopped (pid ${pid})`);
}

async function status() {
  if (runningPid() !== undefined && (await answers())) process.stdout.write(`${URL_TEXT}\n`);
  else fail('not answering');
}

const command = process.argv[2];
if (command === 'start') await start();
else if (command === 'stop') await stop();
else if (command === 'status') await status();
else fail('usage: node scripts/spark.mjs start|stop|status');
