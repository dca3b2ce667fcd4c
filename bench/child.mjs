// One timed task in its own process (so its peak RSS is its own). Usage:
//   node bench/child.mjs '<json task>'
// Prints one line "RESULT {json}" on stdout. Tasks:
//   setup    {db, file}          scdkit applies the initial file to a new database, then the
//                                baseline table is created in the same file from scdkit's target
//   scdkit   {db, file}          time applyFiles of file
//   baseline {db, file, create?} time the two-step SQL (create: make the empty table first, untimed)
//   floor    {db, file}          time the floor (bench/floor.mjs: the least docs/SEMANTICS.md asks, hand-written)
//   floor-log {db, file}         time the baseline plus the narrowest event log (bench/floor.mjs; both engines)
//   floor-check {db, file}       floor-log plus the narrowest check that every value fits (bench/floor.mjs; both engines)
//   floor-state {db, file}       Spark: the floor plus each key's last sequence (bench/spark-floor.mjs, which has
//                                Spark's floor and floor-log too)
//   floor-logread {db, file}     Spark: the floor plus the batch's keys' last sequences read from the log
//   sort     {db}               time a DuckDB sort of the flow's event log (rebuild reference)
//   rebuild  {db}               time scdkit's rebuild, if the library exports one (else available: false)
//   check    {scdDb, baseDb, floor?} compare scdkit's target (floor: a floor's table; DuckDB) with the baseline table (untimed)
//   peer-source {db, file, until} the peers' source table as of `until` (bench/peers/source.mjs; setup, untimed)
//   peer-landing {db, file, sourceMode} time the landing of the batch into the peers' source table
//   correctness {db, history, file, scdDb?} what a side made of the batch (bench/peers/correctness.mjs; untimed)
// `db` is a DuckDB file or a postgres:// URL (PostgreSQL cases). On PostgreSQL, setup takes
// `files` (the initial events in chunks, one commit each), "close" is a CHECKPOINT then the
// disconnect (the deferred writes, as DuckDB's checkpoint on close), and `serverRssMb` is the
// peak RSS of the session's server backend process (VmHWM; it counts the shared buffers it touched).
// Spark cases: `db` is the sc:// URL and `schema` the Spark database the task works in (check:
// `scdDb`/`baseDb` are the two databases); the baseline runs without a transaction (bench/spark.mjs).

import { readFileSync } from 'node:fs';
import path from 'node:path';
import { DuckDBInstance } from '@duckdb/node-api';
import { BASE_TABLE, baselineSteps, baselineStepsPostgres, createBaseTableSql } from './baseline.mjs';
import {
  floorCheckSteps,
  floorCheckStepsPostgres,
  floorLogSteps,
  floorLogStepsPostgres,
  floorSteps,
  floorStepsPostgres,
  floorTablesSql,
  floorTablesSqlPostgres,
} from './floor.mjs';
import { benchFlow, TARGET } from './flow.mjs';
import { ATTRS } from './generate.mjs';
import { correctnessSql, historyOf } from './peers/correctness.mjs';
import { landingSteps, SOURCE, sourceAtSql, sourceViewSql } from './peers/source.mjs';
import * as SPARK from './spark.mjs';
import { sparkFloorLogSteps, sparkFloorSteps, sparkFloorTablesSql } from './spark-floor.mjs';

const here = path.dirname(new URL(import.meta.url).pathname);
const task = JSON.parse(process.argv[2]);
// The build under test: run.mjs passes a snapshot of dist/ taken at its start, so a rebuild of
// dist/ during a long run cannot mix two builds in one table.
const scdkit = await import(path.join(task.dist ?? path.join(here, '..', 'dist'), 'index.js'));

const now = () => performance.now() / 1000;

/** Peak resident set of this process (kB → MB), from the kernel. */
function vmHwmMb() {
  try {
    const m = /VmHWM:\s+(\d+) kB/.exec(readFileSync('/proc/self/status', 'utf8'));
    return m ? Number(m[1]) / 1024 : null;
  } catch {
    return null;
  }
}

const isPg = (db) => /^postgres(ql)?:\/\//i.test(String(db));
/** Spark cases: `db` is an sc:// URL and `schema` the Spark database the task works in. */
const isSpark = (db) => /^sc:\/\//i.test(String(db));

/** Peak RSS of another process of this machine (the PostgreSQL backend of a session), MB. */
function procHwmMb(pid) {
  try {
    const m = /VmHWM:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
    return m ? Number(m[1]) / 1024 : null;
  } catch {
    return null;
  }
}

async function open(db) {
  const driver = await scdkit.openDriver(SPARK.childUrl(db), isSpark(db) ? { schema: task.schema } : {});
  if (isSpark(db)) return driver;
  if (isPg(db)) {
    // its server process, to read that process's peak memory at the end (same machine only)
    driver.backendPid = Number((await driver.query('SELECT pg_backend_pid() AS pid'))[0].pid);
  } else for (const s of task.settings ?? []) await driver.run(s);
  return driver;
}

/** Close, timed: on PostgreSQL a CHECKPOINT first (work the server deferred), on DuckDB the checkpoint on close. */
async function closeTimed(driver, out) {
  const t1 = now();
  if (driver.backendPid) {
    out.serverRssMb = procHwmMb(driver.backendPid);
    await driver.run('CHECKPOINT');
  }
  await driver.close();
  out.closeSeconds = now() - t1;
  return out;
}

async function eventsTable(driver) {
  const rows = await driver.query(`SELECT table_name FROM information_schema.tables WHERE table_name LIKE '%events%' ORDER BY table_name`);
  const names = rows.map((r) => String(r.table_name)).filter((n) => n.startsWith('_scd_') && n.includes(TARGET));
  if (!names.length) throw new Error(`no event log table of ${TARGET} found (tables: ${rows.map((r) => r.table_name).join(', ')})`);
  return names[0];
}

/**
 * Time every statement scdkit sends through the driver (run / query), grouped by the start of its
 * text: where the apply's time goes. Work the driver does without run/query (e.g. DuckDB's file
 * reader) shows up as the remainder.
 */
function profileStatements(driver) {
  const stats = new Map();
  for (const m of ['run', 'query']) {
    const orig = driver[m].bind(driver);
    driver[m] = async (sql, params) => {
      const t = now();
      try {
        return await orig(sql, params);
      } finally {
        const label = String(sql).replace(/\s+/g, ' ').trim().slice(0, 90);
        const e = stats.get(label) ?? [0, 0];
        e[0] += now() - t;
        e[1] += 1;
        stats.set(label, e);
      }
    };
  }
  return () => [...stats.entries()].sort((a, b) => b[1][0] - a[1][0]).map(([sql, [secs, n]]) => ({ sql, seconds: +secs.toFixed(3), n }));
}

async function runScdkit(db, file) {
  const flow = benchFlow(scdkit, SPARK.childUrl(db), isSpark(db) ? task.schema : undefined);
  const driver = await open(db);
  const statements = profileStatements(driver);
  const phases = [];
  const t0 = now();
  let last = t0;
  let lastName = 'start';
  const progress = (msg) => {
    const t = now();
    phases.push([lastName, +(t - last).toFixed(3)]);
    last = t;
    lastName = msg.replace(/\d+/g, 'N');
  };
  const result = await scdkit.applyFiles(driver, flow, scdkit.resolveInputs([file]), progress);
  const t1 = now();
  phases.push([lastName, +(t1 - last).toFixed(3)]);
  const all = statements();
  const top = all.slice(0, 15);
  const inStatements = all.reduce((a, s) => a + s.seconds, 0);
  return closeTimed(driver, { seconds: t1 - t0, phases, result, statements: top, statementSeconds: +inStatements.toFixed(3), statementCount: all.reduce((a, s) => a + s.n, 0) });
}

/** PostgreSQL setup: the initial events applied chunk after chunk (one commit each), timed as a whole. */
async function setupPostgres() {
  const flow = benchFlow(scdkit, task.db);
  const driver = await open(task.db);
  const t0 = now();
  let events = 0;
  let maxCommit = 0;
  for (const [i, file] of task.files.entries()) {
    const c0 = now();
    const r = await scdkit.applyFiles(driver, flow, scdkit.resolveInputs([file]));
    events += r.eventsApplied;
    maxCommit = Math.max(maxCommit, now() - c0);
    if (i % 25 === 0 || i === task.files.length - 1) process.stderr.write(`  setup commit ${i + 1}/${task.files.length}: ${events} events, ${(now() - t0).toFixed(0)} s\n`);
  }
  const seconds = now() - t0;
  await driver.run(createBaseTableSql());
  await driver.run(`INSERT INTO ${BASE_TABLE} SELECT id, ${ATTRS.join(', ')}, "__START_AT", coalesce("__END_AT", TIMESTAMP '9999-12-31'), "__END_AT" IS NULL FROM ${TARGET}`);
  const [counts] = await driver.query(`SELECT count(*)::BIGINT AS versions, count(*) FILTER (WHERE "__END_AT" IS NULL)::BIGINT AS current FROM ${TARGET}`);
  const out = { seconds, commits: task.files.length, slowestCommitSeconds: maxCommit, result: { eventsApplied: events } };
  await closeTimed(driver, out);
  return { ...out, versions: Number(counts.versions), current: Number(counts.current) };
}

/** Time `steps` ([phase, sql | [sql, …] | {copy, file}]) in one transaction, after the untimed `before`. */
async function runSteps(steps, before) {
  const driver = await open(task.db);
  for (const sql of before) await driver.run(sql);
  const phases = [];
  const phase = (name, secs) => {
    const last = phases.at(-1);
    if (last && last[0] === name) last[1] = +(last[1] + secs).toFixed(3);
    else phases.push([name, +secs.toFixed(3)]);
  };
  const t0 = now();
  const tx = !isSpark(task.db); // Spark: no transaction, each write is a Delta commit of its own
  if (tx) await driver.run('BEGIN');
  for (const [name, step] of steps) {
    const t = now();
    if (typeof step === 'string') await driver.run(step);
    else if (Array.isArray(step)) {
      // Sent at once (Spark floors): the driver's deferred scratch first (a query sends it), then
      // each statement straight through the client, so that none waits for another's script.
      await driver.query('SELECT 1');
      await Promise.all(step.map((sql) => driver.client.execute(sql)));
    } else await driver.copyFrom(step.copy, { file: step.file }); // COPY ... FROM STDIN through the same pg client
    phase(name, now() - t);
  }
  const t = now();
  if (tx) await driver.run('COMMIT');
  if (tx) phase('commit', now() - t);
  const t1 = now();
  return closeTimed(driver, { seconds: t1 - t0, phases });
}

const tasks = {
  async setup() {
    if (isPg(task.db)) return setupPostgres();
    if (isSpark(task.db)) return setupSpark();
    const r = await runScdkit(task.db, task.file);
    // The baseline table, in the same file, from scdkit's target: both sides start from the same data.
    const driver = await open(task.db);
    await driver.run(createBaseTableSql());
    await driver.run(`INSERT INTO ${BASE_TABLE} SELECT id, ${ATTRS.join(', ')}, "__START_AT", coalesce("__END_AT", TIMESTAMP '9999-12-31'), "__END_AT" IS NULL FROM ${TARGET}`);
    const [counts] = await driver.query(`SELECT count(*)::BIGINT AS versions, count(*) FILTER (WHERE "__END_AT" IS NULL)::BIGINT AS current FROM ${TARGET}`);
    await driver.run('CHECKPOINT');
    await driver.close();
    return { ...r, versions: Number(counts.versions), current: Number(counts.current) };
  },

  async scdkit() {
    return runScdkit(task.db, task.file);
  },

  async baseline() {
    if (isSpark(task.db)) return runSteps(SPARK.baselineSteps(task.file), []);
    return runSteps(isPg(task.db) ? baselineStepsPostgres(task.file) : baselineSteps(task.file), task.create ? [createBaseTableSql()] : []);
  },

  async floor() {
    if (isSpark(task.db)) return runSteps(sparkFloorSteps(task.file), sparkFloorTablesSql('floor'));
    if (isPg(task.db)) return runSteps(floorStepsPostgres(task.file), floorTablesSqlPostgres());
    return runSteps(floorSteps(task.file), floorTablesSql());
  },

  async 'floor-log'() {
    if (isSpark(task.db)) return runSteps(sparkFloorLogSteps(task.file), sparkFloorTablesSql('floor-log'));
    if (isPg(task.db)) return runSteps(floorLogStepsPostgres(task.file), floorTablesSqlPostgres());
    return runSteps(floorLogSteps(task.file), floorTablesSql());
  },

  async 'floor-state'() {
    return runSteps(sparkFloorSteps(task.file, 2, { state: true }), sparkFloorTablesSql('floor-state'));
  },

  async 'floor-logread'() {
    return runSteps(sparkFloorSteps(task.file, 2, { logRead: true }), sparkFloorTablesSql('floor-logread'));
  },

  async 'floor-check'() {
    if (isPg(task.db)) return runSteps(floorCheckStepsPostgres(task.file), floorTablesSqlPostgres());
    return runSteps(floorCheckSteps(task.file), floorTablesSql());
  },

  async 'peer-source'() {
    const driver = await open(task.db);
    // Setup, untimed: each key's latest of 12.5M events does not fit the 1 GB that every timed
    // task runs with (DuckDB refused it at 10M).
    await driver.run(`SET memory_limit = '6GB'`);
    await driver.run(sourceAtSql(task.file, task.until));
    const [{ n }] = await driver.query(`SELECT count(*)::BIGINT AS n FROM ${SOURCE}`);
    await driver.run('CHECKPOINT');
    await driver.close();
    return { rows: Number(n) };
  },

  async 'peer-landing'() {
    if (task.sourceMode === 'batch')
      return runSteps(
        [
          ['source view', `DROP TABLE IF EXISTS ${SOURCE}`],
          ['source view', sourceViewSql(task.file)],
        ],
        [],
      );
    return runSteps(landingSteps(task.file), []);
  },

  async correctness() {
    const instance = await DuckDBInstance.create(task.db);
    const con = await instance.connect();
    let scdkitHistory = null;
    if (task.scdDb) {
      await con.run(`ATTACH '${task.scdDb.replace(/'/g, "''")}' AS scd (READ_ONLY)`);
      scdkitHistory = historyOf({ table: `scd.${TARGET}`, from: '"__START_AT"', to: '"__END_AT"' });
    }
    const reader = await con.runAndReadAll(correctnessSql(historyOf(task.history), task.file, scdkitHistory));
    const row = reader.getRowObjectsJson()[0];
    con.closeSync();
    instance.closeSync();
    return Object.fromEntries(Object.entries(row).map(([k, v]) => [k, Number(v)]));
  },

  async sort() {
    const driver = await open(task.db);
    const events = await eventsTable(driver);
    const [{ n }] = await driver.query(`SELECT count(*)::BIGINT AS n FROM "${events}"`);
    const t0 = now();
    await driver.run(`CREATE TABLE _bench_sorted AS SELECT * FROM "${events}" ORDER BY id, updated_at`);
    const t1 = now();
    await driver.close();
    return { seconds: t1 - t0, closeSeconds: now() - t1, events: Number(n), table: events };
  },

  // Hook for scdkit's rebuild: the first of these exports that exists is timed, called as
  // fn(driver, flow) (the driver-level signature, like applyFiles). None → "n/a" in the table.
  async rebuild() {
    const name = ['rebuildWith', 'rebuild'].find((n) => typeof scdkit[n] === 'function');
    if (!name) return { available: false };
    const flow = benchFlow(scdkit, task.db);
    const driver = await open(task.db);
    const t0 = now();
    const result = await scdkit[name](driver, flow);
    const t1 = now();
    await driver.close();
    return { available: true, via: name, seconds: t1 - t0, closeSeconds: now() - t1, result };
  },

  async check() {
    if (isPg(task.scdDb)) return checkPostgres();
    if (isSpark(task.db)) return checkSpark();
    const instance = await DuckDBInstance.create(task.scdDb);
    const con = await instance.connect();
    await con.run(`ATTACH '${task.baseDb.replace(/'/g, "''")}' AS b (READ_ONLY)`);
    const cols = `id, ${ATTRS.join(', ')}`;
    // floor: the first database is a floor's, whose table is the baseline's (bench/floor.mjs).
    const mine = task.floor
      ? `SELECT ${cols}, effective_from AS f, effective_to AS t FROM ${BASE_TABLE}`
      : `SELECT ${cols}, "__START_AT" AS f, coalesce("__END_AT", TIMESTAMP '9999-12-31') AS t FROM ${TARGET}`;
    const reader = await con.runAndReadAll(`
      WITH s AS (${mine}),
           bb AS (SELECT ${cols}, effective_from, effective_to FROM b.${BASE_TABLE})
      SELECT (SELECT count(*) FROM s)::BIGINT AS rows_scdkit,
             (SELECT count(*) FROM bb)::BIGINT AS rows_baseline,
             (SELECT count(*) FROM (SELECT * FROM s EXCEPT ALL SELECT * FROM bb))::BIGINT AS only_scdkit,
             (SELECT count(*) FROM (SELECT * FROM bb EXCEPT ALL SELECT * FROM s))::BIGINT AS only_baseline`);
    const row = reader.getRowObjectsJson()[0];
    con.closeSync();
    instance.closeSync();
    return Object.fromEntries(Object.entries(row).map(([k, v]) => [k, Number(v)]));
  },
};

/** Spark setup: scdkit's first apply of the initial file (timed), then the baseline table from its target. */
async function setupSpark() {
  const r = await runScdkit(task.db, task.file);
  const driver = await open(task.db);
  try {
    await driver.run(SPARK.createBaseTableSql());
    await driver.run(SPARK.fillBaseTableSql());
    const [counts] = await driver.query(`SELECT count(*) AS versions, count_if(\`__END_AT\` IS NULL) AS current FROM ${TARGET}`);
    return { ...r, versions: Number(counts.versions), current: Number(counts.current) };
  } finally {
    await driver.close();
  }
}

/** Spark check: both databases on the one server, compared in one query. */
async function checkSpark() {
  const driver = await open(task.db);
  try {
    const [row] = await driver.query(SPARK.checkSql(task.scdDb, task.baseDb, { floor: task.floor }));
    return Object.fromEntries(Object.entries(row).map(([k, v]) => [k, Number(v)]));
  } finally {
    await driver.close();
  }
}

/**
 * PostgreSQL check: the baseline's rows are copied (COPY TO STDOUT → COPY FROM STDIN, streamed)
 * from its database into a table of scdkit's database, then compared with EXCEPT ALL both ways.
 */
async function checkPostgres() {
  const { default: pg } = await import('pg');
  const copy = await import('pg-copy-streams');
  const { pipeline } = await import('node:stream/promises');
  const connect = async (url) => {
    const c = new pg.Client({ connectionString: url });
    c.on('error', () => undefined);
    await c.connect();
    await c.query(`SET TimeZone = 'UTC'`);
    return c;
  };
  const s = await connect(task.scdDb);
  const b = await connect(task.baseDb);
  try {
    const cols = `id, ${ATTRS.join(', ')}`;
    await s.query(`CREATE TEMP TABLE _bench_b (id BIGINT, name TEXT, email TEXT, city TEXT, segment TEXT, score BIGINT, f TIMESTAMP, t TIMESTAMP)`);
    await pipeline(b.query(copy.to(`COPY (SELECT ${cols}, effective_from, effective_to FROM ${BASE_TABLE}) TO STDOUT`)), s.query(copy.from(`COPY _bench_b FROM STDIN`)));
    const { rows } = await s.query(`
      WITH ss AS (SELECT ${cols}, CAST("__START_AT" AS TIMESTAMP) AS f, coalesce(CAST("__END_AT" AS TIMESTAMP), TIMESTAMP '9999-12-31') AS t FROM ${TARGET}),
           bb AS (SELECT ${cols}, f, t FROM _bench_b)
      SELECT (SELECT count(*) FROM ss)::BIGINT AS rows_scdkit,
             (SELECT count(*) FROM bb)::BIGINT AS rows_baseline,
             (SELECT count(*) FROM (SELECT * FROM ss EXCEPT ALL SELECT * FROM bb) x)::BIGINT AS only_scdkit,
             (SELECT count(*) FROM (SELECT * FROM bb EXCEPT ALL SELECT * FROM ss) x)::BIGINT AS only_baseline`);
    return Object.fromEntries(Object.entries(rows[0]).map(([k, v]) => [k, Number(v)]));
  } finally {
    await s.end();
    await b.end();
  }
}

try {
  const fn = tasks[task.kind];
  if (!fn) throw new Error(`unknown task ${task.kind}`);
  const out = await fn();
  out.vmHwmMb = vmHwmMb();
  process.stdout.write(`RESULT ${JSON.stringify(out)}\n`);
} catch (e) {
  const err = { name: e?.name, code: e?.code, message: e?.message ?? String(e) };
  if (e?.sql) err.sql = String(e.sql).slice(0, 2000);
  process.stdout.write(`RESULT ${JSON.stringify({ error: err, vmHwmMb: vmHwmMb() })}\n`);
  process.exitCode = 1;
}
