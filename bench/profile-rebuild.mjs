// Where a rebuild's time goes, statement by statement (diagnostic, not a case):
//   node bench/profile-rebuild.mjs <db.duckdb> [--dist DIR]
// EXPLAIN=<statement prefix> prints the engine's profile of the statements that start with it.
// The database is copied first (bench/data/work/profile.duckdb), so the setup database is untouched.
import { copyFileSync, rmSync } from 'node:fs';
import path from 'node:path';
import { benchFlow } from './flow.mjs';

const here = path.dirname(new URL(import.meta.url).pathname);
const args = process.argv.slice(2);
const di = args.indexOf('--dist');
const dist = di >= 0 ? args.splice(di, 2)[1] : path.join(here, '..', 'dist');
const [db] = args;
const scdkit = await import(path.join(path.resolve(dist), 'index.js'));
const target = path.join(here, 'data', 'work', 'profile.duckdb');
rmSync(target, { force: true });
copyFileSync(db, target);
const driver = await scdkit.openDriver(target);
const stats = [];
for (const m of ['run', 'query']) {
  const orig = driver[m].bind(driver);
  driver[m] = async (sql, params) => {
    const t = performance.now();
    const text = String(sql).replace(/\s+/g, ' ').trim();
    if (process.env.EXPLAIN && text.startsWith(process.env.EXPLAIN)) {
      const rows = await driver.query(`EXPLAIN ANALYZE ${sql}`, params);
      console.log(rows.map((r) => Object.values(r).join('\n')).join('\n'));
      if (/^CREATE/i.test(text)) await orig(`DROP TABLE IF EXISTS ${/TABLE ("[^"]+")/.exec(text)[1]}`);
    }
    try {
      return await orig(sql, params);
    } finally {
      stats.push([(performance.now() - t) / 1000, String(sql).replace(/\s+/g, ' ').trim().slice(0, 150)]);
    }
  };
}
const t0 = performance.now();
const r = await scdkit.rebuild(driver, benchFlow(scdkit, target));
console.log(`rebuild: ${((performance.now() - t0) / 1000).toFixed(2)} s, ${stats.length} statements; changes: +${r.versionsAdded} ~${r.versionsChanged} -${r.versionsRemoved}`);
for (const [s, sql] of stats) if (s > 0.05) console.log(`${s.toFixed(3).padStart(8)} s  ${sql}`);
await driver.close();
rmSync(target, { force: true });
