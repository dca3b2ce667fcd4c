// Where a Spark commit's time goes, round trip by round trip (diagnostic, not a case):
//   node bench/profile-spark.mjs <base database> <batch file> [--url sc://…] [--dist DIR]
//   (PROFILE_CONF="key=value;…" sets those Spark settings in the commit's session first)
// The base database (a bench setup's, e.g. scdbench_base_n1m_<build>) is copied first with SHALLOW
// CLONE into scdprof_work (bench/spark.mjs copyDatabase), so the setup stays untouched. Each line
// is one plan the client sent (a SQL script counts once), in the order sent, with its start.
import path from 'node:path';
import { benchFlow } from './flow.mjs';
import { admin, copyDatabase, dropDatabase } from './spark.mjs';

const here = path.dirname(new URL(import.meta.url).pathname);
const args = process.argv.slice(2);
const option = (name, fallback) => {
  const i = args.indexOf(name);
  return i >= 0 ? args.splice(i, 2)[1] : fallback;
};
const dist = path.resolve(option('--dist', path.join(here, '..', 'dist')));
const url = option('--url', 'sc://127.0.0.1:15002');
const [base, file] = args;
if (!base || !file) throw new Error('usage: node bench/profile-spark.mjs <base database> <batch file> [--url sc://…] [--dist DIR]');
const work = 'scdprof_work';
const scdkit = await import(path.join(dist, 'index.js'));
await admin(url, dist, async (c) => {
  await copyDatabase(c, base, work);
  // PROFILE_WARM=1: every table of the copy read once first, as a server that served the last
  // commit has them (each Delta table's log, read once per server, is then known).
  if (process.env.PROFILE_WARM)
    for (const r of await c.run(`SHOW TABLES IN \`${work}\``)) if (r.isTemporary !== true) await c.run(`SELECT count(*) FROM \`${work}\`.\`${r.tableName}\``);
});
const driver = await scdkit.openDriver(url, { schema: work });
// PROFILE_CONF="key=value;key=value": session settings to try on the commit (a measurement aid).
for (const kv of (process.env.PROFILE_CONF ?? '').split(';').filter(Boolean)) await driver.client.execute(`SET ${kv}`);
const stats = [];
let started = performance.now();
for (const m of ['execute', 'query']) {
  const send = driver.client[m].bind(driver.client);
  driver.client[m] = async (sql, ...rest) => {
    const t = performance.now();
    try {
      return await send(sql, ...rest);
    } finally {
      stats.push([
        (performance.now() - t) / 1000,
        (t - started) / 1000,
        String(sql)
          .replace(/\s+/g, ' ')
          .trim()
          .slice(0, Number(process.env.PROFILE_CHARS ?? 160)),
      ]);
    }
  };
}
try {
  const t0 = performance.now();
  started = t0;
  const r = await scdkit.applyFiles(driver, benchFlow(scdkit, url, work), scdkit.resolveInputs([file]));
  const total = (performance.now() - t0) / 1000;
  console.log(`apply: ${total.toFixed(2)} s, ${stats.length} round trips (${stats.reduce((n, [s]) => n + s, 0).toFixed(2)} s in them); events ${r.eventsApplied}`);
  // In the order they were sent: when each started (s after the apply began) and how long it took.
  for (const [s, at, sql] of stats) console.log(`${at.toFixed(2).padStart(7)} +${s.toFixed(2).padStart(6)} s  ${sql}`);
} finally {
  await driver.close();
  await admin(url, dist, (c) => dropDatabase(c, work));
}
