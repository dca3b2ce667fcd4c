// Peak RSS per statement of one apply of a file onto an empty database (a diagnostic, not a case):
//   /usr/bin/time -v node bench/memory.mjs <file.ndjson>
// A poller samples the process RSS every 100 ms and keeps the maximum per statement; statements
// over 2 s are listed with theirs, and the peak is named at the end.
import { mkdirSync, readFileSync, rmSync } from 'node:fs';
import path from 'node:path';

const here = path.dirname(new URL(import.meta.url).pathname);
const scdkit = await import(path.resolve(here, '../dist/index.js'));
const { benchFlow } = await import(path.resolve(here, './flow.mjs'));
const file = process.argv[2];
const db = path.join(here, 'data', 'work', 'memory.duckdb');
mkdirSync(path.dirname(db), { recursive: true });
for (const f of [db, db + '.wal', db + '.tmp']) rmSync(f, { force: true, recursive: true });
const rss = () => Number(/VmRSS:\s+(\d+)/.exec(readFileSync('/proc/self/status', 'utf8'))[1]) / 1024;
let current = 'start',
  peak = 0,
  peakAt = '';
const per = new Map();
setInterval(() => {
  const r = rss();
  if (r > peak) {
    peak = r;
    peakAt = current;
  }
  per.set(current, Math.max(per.get(current) ?? 0, r));
}, 100).unref();
const driver = await scdkit.openDriver(db);
for (const m of ['run', 'query']) {
  const orig = driver[m].bind(driver);
  driver[m] = async (sql, params) => {
    const prev = current;
    current = String(sql).replace(/\s+/g, ' ').slice(0, 90);
    const t = performance.now();
    try {
      return await orig(sql, params);
    } finally {
      const s = (performance.now() - t) / 1000;
      if (s > 2) console.log(`${s.toFixed(1)} s, max ${Math.round(per.get(current) ?? 0)} MB: ${current}`);
      current = prev;
    }
  };
}
const flow = benchFlow(scdkit, db);
const t = performance.now();
const r = await scdkit.applyFiles(driver, flow, scdkit.resolveInputs([file]));
console.log(`applied ${r.eventsApplied} in ${((performance.now() - t) / 1000).toFixed(1)} s; peak ${Math.round(peak)} MB during: ${peakAt}`);
await driver.close();
