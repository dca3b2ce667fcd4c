// Where one apply's time goes, statement by statement, with the engine's plan of the slowest ones.
// Not timed for the tables: a diagnostic run on a copy of a setup database.
//
//   node bench/explain.mjs <db> <file> [--top N] [--explain PREFIX ...] [--dist DIR] [--out FILE]
//
// <db> is a DuckDB file (copied first to bench/data/work/explain.duckdb, so the setup database is
// untouched) or a postgres:// URL (applied in place: give it a copy). Every statement scdkit sends
// through the driver is timed; a statement whose text (whitespace collapsed) starts with one of
// the --explain prefixes runs as EXPLAIN ANALYZE instead (it still executes, so the apply goes on),
// and its plan is written to the output. Without --explain, the apply runs twice: once to find the
// --top (default 2) slowest statements, once more (on a fresh copy) explaining them.

import { spawnSync } from 'node:child_process';
import { copyFileSync, existsSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { benchFlow } from './flow.mjs';

const here = path.dirname(new URL(import.meta.url).pathname);
const args = process.argv.slice(2);
const opt = (name, dflt) => {
  const i = args.indexOf(name);
  if (i < 0) return dflt;
  const v = args[i + 1];
  args.splice(i, 2);
  return v;
};
const prefixes = [];
for (let i = args.indexOf('--explain'); i >= 0; i = args.indexOf('--explain')) prefixes.push(opt('--explain'));
const top = Number(opt('--top', 2));
const dist = opt('--dist', path.join(here, '..', 'dist'));
const out = opt('--out', path.join(here, 'data', 'work', 'explain.txt'));
const [db, file] = args;
if (!db || !file) {
  console.error('usage: node bench/explain.mjs <db> <file> [--top N] [--explain PREFIX ...] [--dist DIR] [--out FILE]');
  process.exit(2);
}
const scdkit = await import(path.join(path.resolve(dist), 'index.js'));
const isPg = /^postgres(ql)?:\/\//i.test(db);
const now = () => performance.now() / 1000;
const norm = (sql) => String(sql).replace(/\s+/g, ' ').trim();

async function once(explainPrefixes) {
  let target = db;
  if (!isPg) {
    target = path.join(here, 'data', 'work', 'explain.duckdb');
    for (const f of [target, `${target}.wal`]) rmSync(f, { force: true });
    copyFileSync(db, target);
    if (existsSync(`${db}.wal`)) copyFileSync(`${db}.wal`, `${target}.wal`);
    spawnSync('sync'); // the copy is on disk before the timed apply writes its own pages
  }
  const driver = await scdkit.openDriver(target);
  const stats = [];
  const plans = [];
  const rawQuery = driver.query.bind(driver);
  for (const m of ['run', 'query']) {
    const orig = driver[m].bind(driver);
    driver[m] = async (sql, params) => {
      const text = norm(sql);
      const explain = explainPrefixes.find((p) => text.startsWith(p));
      const t = now();
      try {
        if (!explain) return await orig(sql, params);
        const rows = await rawQuery(`EXPLAIN ANALYZE ${sql}`, params);
        plans.push({ sql: text, seconds: now() - t, plan: rows.map((r) => Object.values(r).join('\n')).join('\n') });
        // EXPLAIN ANALYZE ran a write; a query's rows are what the commit goes on with: it runs again.
        return m === 'query' ? await orig(sql, params) : undefined;
      } finally {
        stats.push({ sql: text, seconds: now() - t });
      }
    };
  }
  const flow = benchFlow(scdkit, target);
  const t0 = now();
  const result = await scdkit.applyFiles(driver, flow, scdkit.resolveInputs([file]));
  const seconds = now() - t0;
  await driver.close();
  if (!isPg) for (const f of [target, `${target}.wal`]) rmSync(f, { force: true });
  return { seconds, stats, plans, result };
}

let prefixesToExplain = prefixes;
let first;
if (!prefixesToExplain.length) {
  first = await once([]);
  prefixesToExplain = [...first.stats]
    .filter((s) => !/^(COMMIT|BEGIN|CHECKPOINT|ROLLBACK)\b/i.test(s.sql))
    .sort((a, b) => b.seconds - a.seconds)
    .slice(0, top)
    .map((s) => s.sql.slice(0, 120));
  if (isPg) console.error('note: on PostgreSQL the second run applies onto the database the first one changed: give a fresh copy and --explain');
}
const second = await once(prefixesToExplain);
const lines = [];
const runs = first ? [first, second] : [second];
const base = runs[0];
lines.push(`apply of ${file} onto ${db}: ${base.seconds.toFixed(2)} s, ${base.stats.length} statements, ${base.stats.reduce((a, s) => a + s.seconds, 0).toFixed(2)} s in them`);
lines.push('', 'slowest statements:');
for (const s of [...base.stats].sort((a, b) => b.seconds - a.seconds).slice(0, 15)) lines.push(`${s.seconds.toFixed(3).padStart(8)} s  ${s.sql.slice(0, 160)}`);
lines.push('', 'every statement, in order:');
for (const s of base.stats) lines.push(`${s.seconds.toFixed(3).padStart(8)} s  ${s.sql.slice(0, 160)}`);
for (const p of second.plans) lines.push('', '='.repeat(100), `EXPLAIN ANALYZE (${p.seconds.toFixed(2)} s): ${p.sql}`, '', p.plan);
writeFileSync(out, lines.join('\n') + '\n');
console.log(lines.slice(0, 20).join('\n'));
console.log(`\n(full output with plans: ${path.relative(process.cwd(), out)})`);
