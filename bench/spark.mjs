// Spark + Delta Lake for the benchmark (`--engines spark`): the server, the databases each case
// works in, and the baseline's SQL, all through one Spark Connect server.
//
// The server: --spark-url, else $SCD_BENCH_SPARK_URL, else the project's local one
// (scripts/spark.mjs, sc://127.0.0.1:$SCD_SPARK_PORT or 15002): used if SELECT 1 already answers
// there (whoever started it), else started, and then stopped at the end.
//
// Databases: the initial dimension of each size is set up once, by scdkit (timed as setup), in a
// database of its own, kept across runs of the same scdkit build (the Spark server keeps its
// tables). Each repetition of a case works on copies in databases of its own: every Delta table
// of the base is copied with SHALLOW CLONE (a new table whose log points at the base's files; its
// writes go to its own folder, so the base is never changed), each view re-created over them.
// A clone starts its own Delta history at version 0 with the base's data and table properties;
// nothing scdkit applies depends on the older history (it reads the latest versions, and looks in
// the history only for writes of a commit without a record, which a clone has none of).

import { spawnSync } from 'node:child_process';
import { cpSync, existsSync, readFileSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { TARGET } from './flow.mjs';
import { ATTRS, batchMix, COLUMNS, sizeLabel } from './generate.mjs';

export const BASE_TABLE = 'dim_base';

/** The URL as it may be printed and stored: host and port only (no token or other header). */
export const safeUrl = (url) => String(url).split('/;')[0].replace(/\/+$/, '');

/**
 * What the children get as `db`: the URL itself stays in the environment (SCD_BENCH_SPARK_URL),
 * so a token never shows on a command line (ps) or in a task's JSON.
 */
export const CHILD_DB = 'sc://$SCD_BENCH_SPARK_URL';
export const childUrl = (db) => (db === CHILD_DB ? process.env.SCD_BENCH_SPARK_URL : db);

const q = (name) => `\`${String(name).replace(/`/g, '``')}\``;
const sqlString = (s) => `'${String(s).replace(/\\/g, '\\\\').replace(/'/g, "\\'")}'`;

/** A name fit for a Spark database: lower case letters, digits, underscores. */
export const dbName = (...parts) =>
  parts
    .join('_')
    .toLowerCase()
    .replace(/[^a-z0-9_]/g, '_');

/**
 * The server of the Spark cases: { url, own, stop() }. `own` when this run started it (then
 * stop() stops it); a server given by URL, or one already running, is left alone.
 */
export async function startServer({ url, root, dist, log }) {
  const given = url ?? process.env.SCD_BENCH_SPARK_URL;
  if (given) return { url: given, own: false, stop: () => {} };
  const local = `sc://127.0.0.1:${Number(process.env.SCD_SPARK_PORT || 15002)}`;
  if (await answers(local, dist)) return { url: local, own: false, stop: () => {} };
  const script = path.join(root, 'scripts', 'spark.mjs');
  log('spark: no server answers; starting a local one with scripts/spark.mjs (stopped at the end) ...');
  const started = spawnSync(process.execPath, [script, 'start'], { cwd: root, encoding: 'utf8', stdio: ['ignore', 'pipe', 'inherit'] });
  if (started.status !== 0) throw new Error('scripts/spark.mjs start failed (see above)');
  let stopped = false;
  const stop = () => {
    if (stopped) return;
    stopped = true;
    spawnSync(process.execPath, [script, 'stop'], { cwd: root, stdio: 'inherit' });
  };
  process.on('exit', stop);
  for (const sig of ['SIGINT', 'SIGTERM', 'SIGHUP'])
    process.once(sig, () => {
      stop();
      process.exit(130);
    });
  return { url: started.stdout.trim(), own: true, stop };
}

/** Whether SELECT 1 answers at `url` within 20 s. */
async function answers(url, dist) {
  const timeout = new Promise((resolve) => setTimeout(() => resolve(false), 20_000).unref());
  const probe = admin(url, dist, async (c) => (await c.query('SELECT 1 AS one')).length === 1).catch(() => false);
  return Promise.race([probe, timeout]);
}

/** One admin session of the server (scdkit's own client, from the build under test). */
export async function admin(url, dist, fn) {
  const { SparkConnectClient } = await import(path.join(dist, 'dialects', 'spark', 'spark-connect-client.js'));
  const client = SparkConnectClient.connect(url);
  try {
    return await fn({
      run: (sql) => client.execute(sql),
      query: (sql) => client.query(sql),
    });
  } finally {
    await client.close();
  }
}

/** Spark's and Delta's versions: Spark's version(), Delta's from a Delta commit's engineInfo. */
export async function versions(c, deltaTable) {
  const [{ v }] = await c.query('SELECT version() AS v');
  let delta;
  if (deltaTable) {
    const [h] = await c.run(`DESCRIBE HISTORY ${deltaTable} LIMIT 1`);
    delta = /Delta-Lake\/(\S+)/.exec(String(h?.engineInfo ?? ''))?.[1];
  }
  return { spark: String(v).split(' ')[0], delta };
}

export async function databaseExists(c, db) {
  return (await c.run(`SHOW DATABASES LIKE ${sqlString(db)}`)).length > 0;
}

/** Databases whose names start with `prefix`. */
export async function databasesLike(c, prefix) {
  return (await c.run(`SHOW DATABASES LIKE ${sqlString(`${prefix}*`)}`)).map((r) => String(r.namespace ?? r.databaseName ?? Object.values(r)[0]));
}

export async function dropDatabase(c, db) {
  await c.run(`DROP DATABASE IF EXISTS ${q(db)} CASCADE`);
}

/**
 * `to` as a fresh copy of `from`: each Delta table SHALLOW CLONEd (those `tables` picks, default
 * all), each view re-created from its text (SHOW CREATE TABLE) in `to`, where its unqualified
 * names find the clones. Clones run two at a time (one session; Spark runs them side by side).
 * @param {(table: string) => boolean} [tables]
 */
export async function copyDatabase(c, from, to, tables = () => true) {
  await dropDatabase(c, to);
  await c.run(`CREATE DATABASE ${q(to)}`);
  const views = new Set((await c.run(`SHOW VIEWS IN ${q(from)}`)).filter((r) => r.isTemporary !== true).map((r) => String(r.viewName)));
  const all = (await c.run(`SHOW TABLES IN ${q(from)}`)).filter((r) => r.isTemporary !== true).map((r) => String(r.tableName));
  const clones = all.filter((t) => !views.has(t) && tables(t));
  for (let i = 0; i < clones.length; i += 2) await Promise.all(clones.slice(i, i + 2).map((t) => c.run(`CREATE TABLE ${q(to)}.${q(t)} SHALLOW CLONE ${q(from)}.${q(t)}`)));
  for (const v of [...views].filter(tables)) {
    const [{ createtab_stmt: text }] = await c.run(`SHOW CREATE TABLE ${q(from)}.${q(v)}`);
    const body = /\nAS ([\s\S]*)$/.exec(String(text))?.[1];
    if (!body) throw new Error(`cannot copy the view ${from}.${v}: no AS in ${text}`);
    await c.run(`USE ${q(to)}`);
    await c.run(`CREATE VIEW ${q(to)}.${q(v)} AS ${body}`);
  }
  return clones.length;
}

// ---------- the baseline ----------

/** The baseline table (the seed article's tracking columns), a Delta table. */
export function createBaseTableSql() {
  const cols = Object.entries(COLUMNS)
    .filter(([n]) => n !== 'updated_at' && n !== 'op')
    .map(([n, t]) => `${n} ${sparkType(t)}${n === 'id' ? ' NOT NULL' : ''}`);
  return `CREATE TABLE ${BASE_TABLE} (
    ${cols.join(',\n    ')},
    effective_from TIMESTAMP_NTZ NOT NULL,
    effective_to   TIMESTAMP_NTZ NOT NULL,
    is_current     BOOLEAN NOT NULL
  ) USING delta`;
}

/** The baseline table filled from scdkit's target (both sides start from the same versions). */
export function fillBaseTableSql() {
  return `INSERT INTO ${BASE_TABLE}
    SELECT id, ${ATTRS.join(', ')}, \`__START_AT\`, coalesce(\`__END_AT\`, TIMESTAMP_NTZ '9999-12-31'), \`__END_AT\` IS NULL FROM ${q(TARGET)}`;
}

const sparkType = (t) => ({ BIGINT: 'BIGINT', VARCHAR: 'STRING', TIMESTAMP: 'TIMESTAMP_NTZ' })[t] ?? t;

/**
 * The baseline's statements ([phase, sql]): the seed article "Implementing SCD Type 2 in PySpark
 * and Delta Lake" (close the changed current rows with a Delta MERGE, then append the new
 * versions), as Spark SQL through the same server. No transaction: each write is a Delta commit.
 *
 * As on DuckDB and PostgreSQL (bench/baseline.mjs), deliberate choices neutral or in its favour:
 * the file is read with explicit column types; the staging rows are deduplicated by key (latest
 * updated_at) and cached once (CACHE TABLE, eager), so both writes read them from memory (the
 * article's DataFrame of changes is recomputed by each action); effective_from/to take the
 * source's updated_at (not current_date), so the in-order result compares row by row with
 * scdkit's; deletes (op = 'D', not in the article) close the current row and insert nothing.
 * The change test compares every tracked column null-safely (<=>), not the article's one column.
 */
export function baselineSteps(file) {
  const schema = Object.entries(COLUMNS)
    .map(([n, t]) => `${n} ${sparkType(t)}`)
    .join(', ');
  const changed = ATTRS.map((c) => `NOT (d.${c} <=> s.${c})`).join('\n         OR ');
  return [
    ['load+dedupe', `CREATE OR REPLACE TEMPORARY VIEW bench_raw (${schema}) USING json OPTIONS (path ${sqlString(file)})`],
    [
      'load+dedupe',
      `CACHE TABLE bench_stg AS
       SELECT ${Object.keys(COLUMNS).join(', ')} FROM (
         SELECT *, row_number() OVER (PARTITION BY id ORDER BY updated_at DESC) AS rn FROM bench_raw
       ) WHERE rn = 1`,
    ],
    [
      'close',
      `MERGE INTO ${BASE_TABLE} d
       USING bench_stg s
       ON d.id = s.id AND d.is_current
       WHEN MATCHED AND (s.op = 'D'
         OR ${changed})
       THEN UPDATE SET effective_to = s.updated_at, is_current = false`,
    ],
    [
      'insert',
      `INSERT INTO ${BASE_TABLE} (id, ${ATTRS.join(', ')}, effective_from, effective_to, is_current)
       SELECT s.id, ${ATTRS.map((c) => `s.${c}`).join(', ')}, s.updated_at, TIMESTAMP_NTZ '9999-12-31', true
       FROM   bench_stg s
       LEFT ANTI JOIN (SELECT id FROM ${BASE_TABLE} WHERE is_current) d ON d.id = s.id
       WHERE  s.op <> 'D'`,
    ],
    ['drop staging', `UNCACHE TABLE bench_stg`],
    ['drop staging', `DROP VIEW bench_stg`],
    ['drop staging', `DROP VIEW bench_raw`],
  ];
}

/**
 * The in-order check: scdkit's target (database scdDb) against the baseline table (baseDb), both
 * ways; `floor`: the first database is a floor's, whose table is the baseline's (bench/spark-floor.mjs).
 */
export function checkSql(scdDb, baseDb, { floor = false } = {}) {
  const cols = `id, ${ATTRS.join(', ')}`;
  const mine = floor
    ? `SELECT ${cols}, effective_from AS f, effective_to AS t FROM ${q(scdDb)}.${BASE_TABLE}`
    : `SELECT ${cols}, \`__START_AT\` AS f, coalesce(\`__END_AT\`, TIMESTAMP_NTZ '9999-12-31') AS t FROM ${q(scdDb)}.${q(TARGET)}`;
  return `
    WITH s AS (${mine}),
         b AS (SELECT ${cols}, effective_from AS f, effective_to AS t FROM ${q(baseDb)}.${BASE_TABLE})
    SELECT (SELECT count(*) FROM s) AS rows_scdkit,
           (SELECT count(*) FROM b) AS rows_baseline,
           (SELECT count(*) FROM (SELECT * FROM s EXCEPT ALL SELECT * FROM b)) AS only_scdkit,
           (SELECT count(*) FROM (SELECT * FROM b EXCEPT ALL SELECT * FROM s)) AS only_baseline`;
}

/** The issue's targets, for the report (not asserted): lines under the Spark table. */
export function targetLines(rows) {
  const out = [];
  const med = (r, side) => r?.[side]?.median;
  for (const r of rows) {
    const s = med(r, 'scdkit');
    const b = med(r, 'baseline');
    if (s == null || !b) continue;
    const limit = r.mode === 'in' ? 2 : 3;
    out.push(`  ${r.name}: scdkit / baseline ${(s / b).toFixed(2)}× (target ≤ ${limit.toFixed(1)}×)`);
  }
  const byKey = new Map(rows.map((r) => [`${r.N}/${r.B}/${r.mode}`, r]));
  for (const r of rows) {
    if (r.B !== 1000) continue;
    const big = byKey.get(`${r.N}/100000/${r.mode}`);
    const s = med(r, 'scdkit');
    const sb = med(big, 'scdkit');
    if (s != null && sb)
      out.push(`  scdkit ${r.mode === 'in' ? 'in order' : 'out of order'} onto ${sizeLabel(r.N)}: 1k batch / 100k batch ${(s / sb).toFixed(2)}× (target ≤ 0.10×)`);
  }
  return out;
}

// ---------- the cases (called by run.mjs with its helpers) ----------

/**
 * The base database of size N: scdkit applies the initial file (timed, as setup), then the
 * baseline table is filled from its target. Kept across runs of the same build (its setup figures
 * in a JSON file beside the data); bases of other builds of that size are dropped.
 */
async function ensureBase(N, server, opts, h) {
  const prefix = dbName('scdbench_base', `n${sizeLabel(N)}`) + '_';
  const base = `${prefix}${h.fp}`;
  const meta = path.join(h.genDir, `spark_${base}.json`);
  const ready = await admin(server.url, opts.dist, async (c) => {
    for (const db of await databasesLike(c, prefix)) if (db !== base || opts.fresh) await dropDatabase(c, db);
    if ((await databaseExists(c, base)) && existsSync(meta)) return true;
    await dropDatabase(c, base); // a setup that did not finish
    return false;
  });
  if (ready) {
    h.log(`setup (spark) ${sizeLabel(N)}: the database ${base} of an earlier run of this build`);
    return { base, info: { ...JSON.parse(readFileSync(meta, 'utf8')), cached: true } };
  }
  const file = await h.ensureFile(h.dataDir, 'initial', { N }, h.log);
  h.log(`setup (spark) ${sizeLabel(N)}: scdkit applies ${path.basename(file)} into ${base} (timed separately, not part of the cases) ...`);
  const r = await h.runChild({ kind: 'setup', db: server.db, schema: base, file }, { ...opts, timeout: Math.max(opts.timeout, 4 * 3600) });
  if (r.error) throw new Error(`spark setup of the ${sizeLabel(N)} dimension failed: ${JSON.stringify(r.error)}`);
  const info = { N, engine: 'spark', seconds: r.seconds, rssMb: r.rssMb, versions: r.versions, current: r.current, events: r.result?.eventsApplied };
  h.log(`  ${r.seconds.toFixed(1)} s, ${r.versions} versions (${r.current} current)`);
  writeFileSync(meta, JSON.stringify(info));
  return { base, info };
}

async function batchCase(c, base, server, opts, h) {
  const tag = dbName('scdbench', process.pid.toString(36));
  const sDb = `${tag}_scdkit`;
  const bDb = `${tag}_baseline`;
  const sRuns = [];
  const bRuns = [];
  let check;
  const copySeconds = [];
  const floorKinds = opts.floor ? h.sparkFloors : [];
  const fl = Object.fromEntries(floorKinds.map(([kind]) => [kind, []]));
  let floorChecks;
  for (let rep = 0; rep < opts.sparkReps; rep++) {
    const t = Date.now();
    await admin(server.url, opts.dist, async (a) => {
      await copyDatabase(a, base, sDb, (t) => t !== BASE_TABLE);
      await copyDatabase(a, base, bDb, (t) => t === BASE_TABLE);
    });
    copySeconds.push((Date.now() - t) / 1000);
    const runS = async () => sRuns.push(await h.runChild({ kind: 'scdkit', db: server.db, schema: sDb, file: c.file }, opts));
    const runB = async () => bRuns.push(await h.runChild({ kind: 'baseline', db: server.db, schema: bDb, file: c.file }, opts));
    // --floor: each floor in a copy of the baseline's table of its own (untimed), checked in order
    // against the baseline's rows once, then dropped.
    const floorSide = (kind) => async () => {
      const fDb = dbName(tag, kind);
      await admin(server.url, opts.dist, (a) => copyDatabase(a, base, fDb, h.sparkFloorCopies(kind)));
      fl[kind].push(await h.runChild({ kind, db: server.db, schema: fDb, file: c.file }, opts));
      if (rep === 0 && c.mode === 'in' && opts.check && !fl[kind][0].error && !bRuns[0]?.error) {
        floorChecks ??= {};
        floorChecks[kind] = await h.runChild({ kind: 'check', db: server.db, schema: fDb, scdDb: fDb, baseDb: bDb, floor: true }, opts);
        h.log(`  check ${kind}: ${h.fmtCheck(floorChecks[kind])}`);
      }
      await admin(server.url, opts.dist, (a) => dropDatabase(a, fDb));
    };
    // alternate which side runs first, so slow drift of a shared server hits each alike (the
    // floors after both, so that their checks find the baseline's rows)
    const sides = [runS, runB];
    for (let k = 0; k < sides.length; k++) await sides[(k + rep) % sides.length]();
    for (const [kind] of floorKinds) await floorSide(kind)();
    h.log(
      `  rep ${rep + 1}: scdkit ${h.fmtRun(sRuns.at(-1))}, baseline ${h.fmtRun(bRuns.at(-1))}${floorKinds.map(([kind]) => `, ${kind} ${h.fmtRun(fl[kind].at(-1))}`).join('')} (copies ${copySeconds.at(-1).toFixed(0)} s, untimed)`,
    );
    if (rep === 0 && c.mode === 'in' && opts.check && !sRuns[0].error && !bRuns[0].error) {
      check = await h.runChild({ kind: 'check', db: server.db, schema: sDb, scdDb: sDb, baseDb: bDb }, opts);
      h.log(`  check: ${h.fmtCheck(check)}`);
    }
    if (!(opts.keepWork && rep === opts.sparkReps - 1)) await admin(server.url, opts.dist, async (a) => Promise.all([sDb, bDb].map((db) => dropDatabase(a, db))));
    if (sRuns.at(-1).error && bRuns.at(-1).error) break;
  }
  const floors = {};
  for (const [kind, key] of floorKinds) Object.assign(floors, { [key]: h.sideSummary(fl[kind]), [`${key}Ratio`]: h.pairedRatio(fl[kind], bRuns) });
  if (floorKinds.length) Object.assign(floors, { sparkFloor: true, overFloor: h.pairedRatio(sRuns, fl.floor), floorChecks });
  return { scdkit: h.sideSummary(sRuns), baseline: h.sideSummary(bRuns), pairedRatio: h.pairedRatio(sRuns, bRuns), check, copySeconds, ...floors };
}

/**
 * Every Spark case of the options (--spark-sizes × --spark-batches × --spark-modes), against the
 * server of --spark-url (or started). `h`: run.mjs's helpers. Returns { rows, setups, spark }.
 */
export async function runSparkCases(opts, h) {
  // The Spark client reads package.json and proto/ beside dist/ (three folders above its file,
  // dist/dialects/spark/): for the build snapshot (bench/data/builds/ID/), that is builds/.
  for (const f of ['package.json', 'proto']) {
    const to = path.join(opts.dist, '..', f);
    if (!existsSync(to)) cpSync(path.join(h.root, f), to, { recursive: true });
  }
  const started = await startServer({ url: opts.sparkUrl, root: h.root, dist: opts.dist, log: h.log });
  process.env.SCD_BENCH_SPARK_URL = started.url; // inherited by the children (CHILD_DB)
  const server = { ...started, db: CHILD_DB };
  const rows = [];
  const setups = [];
  /** @type {{ url: string, own: boolean, version?: string, delta?: string }} */
  const spark = { url: safeUrl(server.url), own: server.own };
  try {
    h.log(
      `spark cases on ${safeUrl(server.url)}: sizes ${opts.sparkSizes.map(sizeLabel).join(',')}; batches ${opts.sparkBatches.map(sizeLabel).join(',')}; modes ${opts.sparkModes.join(',')}; reps ${opts.sparkReps}`,
    );
    for (const N of opts.sparkSizes) {
      const { base, info } = await ensureBase(N, server, opts, h);
      setups.push(info);
      if (!spark.version)
        Object.assign(spark, await admin(server.url, opts.dist, async (c) => versions(c, `${q(base)}.${q(TARGET)}`)).then((v) => ({ version: v.spark, delta: v.delta })));
      for (const B of opts.sparkBatches) {
        for (const mode of opts.sparkModes) {
          const file = await h.ensureFile(h.dataDir, 'batch', { N, B, mode }, h.log);
          const name = `spark: ${mode === 'in' ? 'in order' : 'out of order'}, ${sizeLabel(B)} onto ${sizeLabel(N)}`;
          h.log(`case: ${name}`);
          const load = os.loadavg()[0];
          const r = await batchCase({ file, mode }, base, server, opts, h);
          rows.push({ engine: 'spark', name, kind: 'batch', N, B, mode, mix: batchMix(B, mode), file: path.relative(h.root, file), loadavg: [load, os.loadavg()[0]], ...r });
        }
      }
    }
  } finally {
    server.stop();
  }
  return { rows, setups, spark };
}
