// One timed task in its own process (so its peak RSS is its own). Usage:
//   node bench/child.mjs '<json task>'
// Prints one line "RESULT {json}" on stdout. Tasks:
//   setup    {db, file}          scdkit applies the initial file to a new database, then the
//                                baseline table is created in the same file from scdkit's target
//   scdkit   {db, file}          time applyFiles of file
//   baseline {db, file, create?} time the two-step SQL (create: make the empty table first, untimed)
//   sort     {db}               time a DuckDB sort of the flow's event log (rebuild reference)
//   rebuild  {db}               time scdkit's rebuild, if the library exports one (else available: false)
//   check    {scdDb, baseDb}    compare scdkit's target with the baseline table (untimed)

import { readFileSync } from 'node:fs';
import path from 'node:path';
import { DuckDBInstance } from '@duckdb/node-api';
import { BASE_TABLE, baselineSteps, createBaseTableSql } from './baseline.mjs';
import { ATTRS } from './generate.mjs';
import { benchFlow, TARGET } from './flow.mjs';

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

async function open(db) {
  const driver = await scdkit.openDriver(db);
  for (const s of task.settings ?? []) await driver.run(s);
  return driver;
}

async function eventsTable(driver) {
  const rows = await driver.query(`SELECT table_name FROM information_schema.tables WHERE table_name LIKE '%events%' ORDER BY table_name`);
  const names = rows.map((r) => String(r.table_name)).filter((n) => n.startsWith('_scd_') && n.includes(TARGET));
  if (!names.length) throw new Error(`no event log table of ${TARGET} found (tables: ${rows.map((r) => r.table_name).join(', ')})`);
  return names[0];
}

async function runScdkit(db, file) {
  const flow = benchFlow(scdkit, db);
  const driver = await open(db);
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
  await driver.close();
  const t2 = now();
  return { seconds: t1 - t0, closeSeconds: t2 - t1, phases, result };
}

const tasks = {
  async setup() {
    const r = await runScdkit(task.db, task.file);
    // The baseline table, in the same file, from scdkit's target: both sides start from the same data.
    const driver = await open(task.db);
    await driver.run(createBaseTableSql());
    await driver.run(
      `INSERT INTO ${BASE_TABLE} SELECT id, ${ATTRS.join(', ')}, "__START_AT", coalesce("__END_AT", TIMESTAMP '9999-12-31'), "__END_AT" IS NULL FROM ${TARGET}`,
    );
    const [counts] = await driver.query(
      `SELECT count(*)::BIGINT AS versions, count(*) FILTER (WHERE "__END_AT" IS NULL)::BIGINT AS current FROM ${TARGET}`,
    );
    await driver.run('CHECKPOINT');
    await driver.close();
    return { ...r, versions: Number(counts.versions), current: Number(counts.current) };
  },

  async scdkit() {
    return runScdkit(task.db, task.file);
  },

  async baseline() {
    const driver = await open(task.db);
    if (task.create) await driver.run(createBaseTableSql());
    const phases = [];
    const t0 = now();
    await driver.run('BEGIN TRANSACTION');
    for (const [name, sql] of baselineSteps(task.file)) {
      const t = now();
      await driver.run(sql);
      phases.push([name, +(now() - t).toFixed(3)]);
    }
    let t = now();
    await driver.run('COMMIT');
    phases.push(['commit', +(now() - t).toFixed(3)]);
    const t1 = now();
    await driver.close();
    return { seconds: t1 - t0, closeSeconds: now() - t1, phases };
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
    const instance = await DuckDBInstance.create(task.scdDb);
    const con = await instance.connect();
    await con.run(`ATTACH '${task.baseDb.replace(/'/g, "''")}' AS b (READ_ONLY)`);
    const cols = `id, ${ATTRS.join(', ')}`;
    const reader = await con.runAndReadAll(`
      WITH s AS (SELECT ${cols}, "__START_AT" AS f, coalesce("__END_AT", TIMESTAMP '9999-12-31') AS t FROM ${TARGET}),
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
