// Data generators for the benchmark: DuckDB writes NDJSON straight to disk (COPY ... TO (FORMAT json))
// from range(), so nothing is held in JavaScript and 10M rows take seconds, not minutes.
//
// Every value is a deterministic function of the key and a "generation" number, so the files are
// reproducible and the batch generator knows the current values of the initial dimension without
// reading it back:
//   gen 0 = an earlier, closed version (only keys with id % HISTORY_EVERY = 0)
//   gen 1 = the current version of the initial dimension (and of new keys)
//   gen 2 = a changed version (batch)
//   gen 3 = a late version, between gen 0 and gen 1 (out-of-order batch)
// city and score differ between any two generations of one key, so "changed" always means a
// tracked column differs.

import { once } from 'node:events';
import { createReadStream, createWriteStream, existsSync, mkdirSync, readdirSync, renameSync, rmSync, statSync } from 'node:fs';
import path from 'node:path';
import { createInterface } from 'node:readline';
import { DuckDBInstance } from '@duckdb/node-api';

/** Bump when the shape of the data changes: cached files with another version are regenerated. */
export const GEN_VERSION = 2;
/** Keys with id % HISTORY_EVERY = 0 have one closed version before their current one. */
export const HISTORY_EVERY = 4;

const P1 = 1000003; // primes coprime to every size used (powers of 10 times small factors)
const P2 = 999983;

/** Columns of every file, in order; the baseline reads them with these explicit types. */
export const COLUMNS = {
  id: 'BIGINT',
  name: 'VARCHAR',
  email: 'VARCHAR',
  city: 'VARCHAR',
  segment: 'VARCHAR',
  score: 'BIGINT',
  updated_at: 'TIMESTAMP',
  op: 'VARCHAR',
};
export const ATTRS = ['name', 'email', 'city', 'segment', 'score'];

// Attribute expressions for key expression k and generation expression g.
const attrs = (k, g) => `
  'customer ' || ${k} AS name,
  'c' || ${k} || '@example.com' AS email,
  'city_' || lpad(((hash(${k}, 'city') + ${g}) % 40)::VARCHAR, 2, '0') AS city,
  ['bronze','silver','gold','platinum','diamond'][1 + ((hash(${k}, 'seg') + ${g}) % 5)::INTEGER] AS segment,
  ((hash(${k}, 'score') + ${g} * 37) % 1000)::BIGINT AS score`;
const nullAttrs = `NULL::VARCHAR AS name, NULL::VARCHAR AS email, NULL::VARCHAR AS city, NULL::VARCHAR AS segment, NULL::BIGINT AS score`;
// Time of the current version (2024) and of the earlier version (2023) of key k.
const tCur = (k) => `(TIMESTAMP '2024-01-01' + to_seconds((hash(${k}, 'tc') % 31536000)::BIGINT))`;
const tPrev = (k) => `(TIMESTAMP '2023-01-01' + to_seconds((hash(${k}, 'tp') % 31536000)::BIGINT))`;
// Batch events are all newer than the initial dimension: 2025-01-01 + i seconds.
const tNew = (i) => `(TIMESTAMP '2025-01-01' + to_seconds(${i}::BIGINT))`;

export function parseSize(s) {
  const m = /^(\d+(?:\.\d+)?)([kmg]?)$/i.exec(String(s).trim());
  if (!m) throw new Error(`bad size "${s}" (use e.g. 1k, 100k, 1m, 10m)`);
  const mult = { '': 1, k: 1e3, m: 1e6, g: 1e9 }[m[2].toLowerCase()];
  return Math.round(Number(m[1]) * mult);
}

export function sizeLabel(n) {
  if (n >= 1e6 && n % 1e6 === 0) return `${n / 1e6}M`;
  if (n >= 1e3 && n % 1e3 === 0) return `${n / 1e3}k`;
  return String(n);
}

/** Event counts of a batch of B events. */
export function batchMix(B, mode) {
  if (mode === 'in') {
    const changed = Math.round(B * 0.5);
    const unchanged = Math.round(B * 0.25);
    return { changed, unchanged, fresh: B - changed - unchanged, late: 0, deletes: 0 };
  }
  // out of order: 10% late, 2% deletes, the other 88% split 2:1:1 as in order.
  const late = Math.round(B * 0.1);
  const deletes = Math.round(B * 0.02);
  const rest = B - late - deletes;
  const changed = Math.round(rest * 0.5);
  const unchanged = Math.round(rest * 0.25);
  return { changed, unchanged, fresh: rest - changed - unchanged, late, deletes };
}

const projection = `id, name, email, city, segment, score, updated_at, op`;

/** Initial dimension: N keys with a current version, plus an earlier version for every 4th key. */
export function initialSql(N) {
  return `
    SELECT id, ${attrs('id', 1)}, ${tCur('id')} AS updated_at, 'U' AS op FROM range(${N}) t(id)
    UNION ALL
    SELECT id, ${attrs('id', 0)}, ${tPrev('id')} AS updated_at, 'U' AS op FROM range(0, ${N}, ${HISTORY_EVERY}) t(id)`;
}

/** A batch of B events onto the initial dimension of N keys ('in' order or 'out' of order). */
export function batchSql(N, B, mode) {
  const m = batchMix(B, mode);
  const existing = (i) => `((${i})::BIGINT * ${P1} + 7) % ${N}`;
  const withHistory = Math.max(1, Math.floor((N - 1) / HISTORY_EVERY) + 1);
  let o = 0; // running index: distinct existing keys for changed / unchanged / deletes
  const parts = [];
  parts.push(`SELECT ${existing(`i + ${o}`)} AS id, ${attrs(existing(`i + ${o}`), 2)}, ${tNew(`i + ${o}`)} AS updated_at, 'U' AS op FROM range(${m.changed}) t(i)`);
  o += m.changed;
  parts.push(`SELECT ${existing(`i + ${o}`)} AS id, ${attrs(existing(`i + ${o}`), 1)}, ${tNew(`i + ${o}`)} AS updated_at, 'U' AS op FROM range(${m.unchanged}) t(i)`);
  o += m.unchanged;
  if (m.deletes) parts.push(`SELECT ${existing(`i + ${o}`)} AS id, ${nullAttrs}, ${tNew(`i + ${o}`)} AS updated_at, 'D' AS op FROM range(${m.deletes}) t(i)`);
  o += m.deletes;
  parts.push(`SELECT ${N} + i AS id, ${attrs(`(${N} + i)`, 1)}, ${tNew(`i + ${o}`)} AS updated_at, 'U' AS op FROM range(${m.fresh}) t(i)`);
  if (m.late) {
    // keys with history; the event lands strictly between their closed and current versions
    const hk = `(((i::BIGINT * ${P2} + 3) % ${withHistory}) * ${HISTORY_EVERY})`;
    parts.push(`SELECT ${hk} AS id, ${attrs(hk, 3)},
        ${tPrev(hk)} + to_seconds((epoch_us(${tCur(hk)}) - epoch_us(${tPrev(hk)})) // 2000000) AS updated_at, 'U' AS op FROM range(${m.late}) t(i)`);
  }
  // shuffle: the order of lines in a file never matters, and real files are not sorted by key
  return `SELECT ${projection} FROM (${parts.join('\nUNION ALL\n')}) ORDER BY hash(id, updated_at, op)`;
}

/** A landing file of L events over L/4 keys, in random order, 2% deletes (applied onto an empty target). */
export function landingSql(L) {
  const K = Math.max(1, Math.floor(L / 4));
  const k = `(hash(i, 'k') % ${K})`;
  return `
    SELECT ${k} AS id, ${attrs(k, `(hash(i, 'g') % 1000)`)},
      (TIMESTAMP '2024-01-01' + to_seconds((hash(i, 't') % 31536000)::BIGINT)) AS updated_at,
      CASE WHEN hash(i, 'd') % 50 = 0 THEN 'D' ELSE 'U' END AS op
    FROM range(${L}) t(i)`;
}

/**
 * Write the rows of a SELECT as NDJSON, atomically (tmp file, then rename). Returns the size in bytes.
 * @param {string} select
 * @param {string} file
 * @param {{ threads?: number }} [options]
 */
export async function writeNdjson(select, file, { threads } = {}) {
  mkdirSync(path.dirname(file), { recursive: true });
  const tmp = `${file}.tmp`;
  rmSync(tmp, { force: true });
  const instance = await DuckDBInstance.create(':memory:');
  const con = await instance.connect();
  try {
    if (threads) await con.run(`SET threads = ${Number(threads)}`);
    await con.run(`SET preserve_insertion_order = false`);
    await con.run(`COPY (${select}) TO '${tmp.replace(/'/g, "''")}' (FORMAT json)`);
  } finally {
    con.closeSync();
    instance.closeSync();
  }
  renameSync(tmp, file);
  return statSync(file).size;
}

/**
 * The file of a data set, generated if missing (files are named by their parameters and GEN_VERSION).
 * @param {(line: string) => void} [log]
 */
export async function ensureFile(dataDir, kind, params, log = () => {}) {
  let name, sql;
  if (kind === 'initial') {
    name = `initial_n${sizeLabel(params.N)}`;
    sql = initialSql(params.N);
  } else if (kind === 'batch') {
    name = `batch_n${sizeLabel(params.N)}_b${sizeLabel(params.B)}_${params.mode}`;
    sql = batchSql(params.N, params.B, params.mode);
  } else if (kind === 'landing') {
    name = `landing_${sizeLabel(params.L)}`;
    sql = landingSql(params.L);
  } else throw new Error(`unknown data kind ${kind}`);
  const file = path.join(dataDir, `v${GEN_VERSION}`, `${name}.ndjson`);
  if (existsSync(file)) return file;
  const t = Date.now();
  log(`generating ${path.relative(process.cwd(), file)} ...`);
  const size = await writeNdjson(sql, file);
  log(`  ${(size / 1e6).toFixed(0)} MB in ${((Date.now() - t) / 1000).toFixed(1)} s`);
  return file;
}

/**
 * The initial file split into files of `chunk` lines, in sequence order (every 2023 event before
 * every 2024 event), for an engine that sets up the initial dimension in several commits: each
 * key's events then arrive in order, one commit after the other. Returns the files, in order.
 * @param {(line: string) => void} [log]
 */
export async function ensureInitialChunks(dataDir, N, chunk, log = () => {}) {
  const dir = path.join(dataDir, `v${GEN_VERSION}`, `initial_n${sizeLabel(N)}_chunks_${sizeLabel(chunk)}`);
  const list = () =>
    readdirSync(dir)
      .filter((f) => f.endsWith('.ndjson'))
      .sort()
      .map((f) => path.join(dir, f));
  if (existsSync(path.join(dir, 'DONE'))) return list();
  rmSync(dir, { recursive: true, force: true });
  mkdirSync(dir, { recursive: true });
  const t = Date.now();
  log(`generating ${path.relative(process.cwd(), dir)}/ (${sizeLabel(chunk)} events per file) ...`);
  const sorted = path.join(dir, '_sorted.ndjson');
  await writeNdjson(`SELECT ${projection} FROM (${initialSql(N)}) ORDER BY updated_at, id`, sorted);
  const lines = createInterface({ input: createReadStream(sorted), crlfDelay: Infinity });
  let out;
  let n = 0;
  for await (const line of lines) {
    if (n % chunk === 0) {
      if (out) {
        out.end();
        await once(out, 'finish');
      }
      out = createWriteStream(path.join(dir, `part_${String(n / chunk).padStart(5, '0')}.ndjson`));
    }
    if (!out.write(line + '\n')) await once(out, 'drain');
    n++;
  }
  if (out) {
    out.end();
    await once(out, 'finish');
  }
  rmSync(sorted);
  const { writeFileSync } = await import('node:fs');
  writeFileSync(path.join(dir, 'DONE'), `${n}\n`);
  log(`  ${n} events in ${Math.ceil(n / chunk)} files in ${((Date.now() - t) / 1000).toFixed(1)} s`);
  return list();
}

/** Lines of a landing file of about `bytes` bytes, from the average line length of a sample. */
export async function landingLinesFor(bytes, dataDir) {
  const sample = path.join(dataDir, `v${GEN_VERSION}`, `_sample_landing.ndjson`);
  const size = existsSync(sample) ? statSync(sample).size : await writeNdjson(landingSql(100000), sample);
  return Math.ceil(bytes / (size / 100000));
}

// Standalone: node bench/generate.mjs initial 100k | batch 100k 1k in | landing 1m
if (import.meta.url === `file://${process.argv[1]}`) {
  const [kind, a, b, mode] = process.argv.slice(2);
  const dataDir = path.join(path.dirname(new URL(import.meta.url).pathname), 'data');
  const params = kind === 'initial' ? { N: parseSize(a) } : kind === 'batch' ? { N: parseSize(a), B: parseSize(b), mode: mode ?? 'in' } : { L: parseSize(a) };
  ensureFile(dataDir, kind, params, console.log).then((f) => console.log(f));
}
