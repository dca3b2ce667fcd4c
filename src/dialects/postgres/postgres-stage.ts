import { closeSync, mkdtempSync, openSync, readSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { QueryError, ScdError, firstLine } from '../../errors.js';
import { scanLines } from '../../sources/line-scan.js';
import type { ColumnInfo, InputFile } from '../driver.js';
import { FILE_COLUMN, LINE_COLUMN } from '../driver.js';
import type { CopySource } from './postgres-client.js';
import { postgresDialect as d } from './postgres-dialect.js';
import { csvType, fitsJsonType, fromText, jsonStatsSql, jsonType, RE, textStatsSql, type TextStats } from './postgres-infer.js';
import { parquetToCsv } from './postgres-parquet.js';
import { splitCsv } from './postgres-csv.js';

const q = d.quote;
const lit = (s: string) => `'${s.replace(/'/g, "''")}'`;

/** What staging needs from the driver. */
export interface StageHost {
  run(sql: string, params?: unknown[]): Promise<void>;
  query(sql: string, params?: unknown[]): Promise<Array<Record<string, unknown>>>;
  copyFrom(sql: string, source: CopySource): Promise<void>;
  /** Run fn; if it fails, undo its statements (a savepoint inside a transaction) and return the error. */
  attempt(fn: () => Promise<void>): Promise<unknown | undefined>;
  columns(table: string): Promise<ColumnInfo[] | undefined>;
}

/**
 * Load input files into a temporary table `table` (the files' own columns, typed, plus __scd_file
 * and __scd_line) and unreadable records into `rejects` (DuckDB driver's contract). Every file is
 * streamed into the engine with COPY; types are inferred in SQL.
 */
export async function stageFiles(host: StageHost, files: InputFile[], table: string, rejects: string): Promise<void> {
  await host.run(`DROP TABLE IF EXISTS ${q(rejects)}`);
  await host.run(`CREATE TEMP TABLE ${q(rejects)} (${q(FILE_COLUMN)} text, ${q(LINE_COLUMN)} bigint, reason text, raw text)`);
  const scratch = mkdtempSync(path.join(tmpdir(), 'scdkit-pgstage-'));
  const parts: Array<{ name: string; cols: ColumnInfo[] }> = [];
  try {
    for (const [i, file] of files.entries()) {
      if (statSync(file.path).size === 0) continue;
      const part = `_scd_part_${i}`;
      await host.run(`DROP TABLE IF EXISTS ${q(part)}`);
      const ok = await stageOne(host, file, part, rejects, scratch, i);
      if (ok) parts.push({ name: part, cols: ((await host.columns(part)) ?? []).filter((c) => c.name !== FILE_COLUMN && c.name !== LINE_COLUMN) });
    }
    await host.run(`DROP TABLE IF EXISTS ${q(table)}`);
    await host.run(`CREATE TEMP TABLE ${q(table)} AS ${unionByName(parts)}`);
    for (const p of parts) await host.run(`DROP TABLE ${q(p.name)}`);
  } finally {
    rmSync(scratch, { recursive: true, force: true });
  }
}

/** UNION ALL BY NAME: columns in order of first appearance; differing types meet in a common one. */
function unionByName(parts: Array<{ name: string; cols: ColumnInfo[] }>): string {
  if (!parts.length) return `SELECT CAST(NULL AS text) AS ${q(FILE_COLUMN)}, CAST(NULL AS bigint) AS ${q(LINE_COLUMN)} WHERE false`;
  const all: ColumnInfo[] = [];
  for (const p of parts)
    for (const c of p.cols) {
      const had = all.find((a) => a.name === c.name);
      if (!had) all.push({ ...c });
      else if (!d.sameType(had.type, c.type)) {
        const json = d.sameType(had.type, 'jsonb') || d.sameType(c.type, 'jsonb');
        had.type = json ? 'jsonb' : (d.commonType(had.type, c.type) ?? 'text');
      }
    }
  return parts
    .map((p) => {
      const sel = all.map((c) => {
        const mine = p.cols.find((m) => m.name === c.name);
        if (!mine) return `CAST(NULL AS ${c.type}) AS ${q(c.name)}`;
        if (d.sameType(mine.type, c.type)) return q(c.name);
        if (d.sameType(c.type, 'jsonb')) return `to_jsonb(${q(c.name)}) AS ${q(c.name)}`;
        return `CAST(${q(c.name)} AS ${c.type}) AS ${q(c.name)}`;
      });
      return `SELECT ${[...sel, q(FILE_COLUMN), q(LINE_COLUMN)].join(', ')} FROM ${q(p.name)}`;
    })
    .join(' UNION ALL ');
}

/** Stage one file; false when it holds no readable record. */
async function stageOne(host: StageHost, file: InputFile, part: string, rejects: string, scratch: string, i: number): Promise<boolean> {
  const label = file.label ?? file.path;
  if (file.format === 'csv') return stageCsv(host, file, part, rejects, scratch, i);
  if (file.format === 'parquet') {
    const csv = path.join(scratch, `parquet_${i}.csv`);
    const cols = await parquetToCsv(file.path, csv).catch((e) => {
      throw unreadable(file, e);
    });
    const raw = `_scd_raw_${i}`;
    await host.run(`DROP TABLE IF EXISTS ${q(raw)}`);
    await host.run(`CREATE TEMP TABLE ${q(raw)} (${cols.map((c) => `${q(c.name)} text`).join(', ')}${cols.length ? ', ' : ''}"__scd_n" bigserial)`);
    await host.copyFrom(`COPY ${q(raw)} (${cols.map((c) => q(c.name)).join(', ')}) FROM STDIN WITH (FORMAT csv)`, { file: csv });
    await host.run(
      `CREATE TEMP TABLE ${q(part)} AS SELECT ${cols.map((c) => `${fromText(q(c.name), c.type)} AS ${q(c.name)}`).join(', ')}${cols.length ? ', ' : ''}
       CAST($1 AS text) AS ${q(FILE_COLUMN)}, "__scd_n" AS ${q(LINE_COLUMN)} FROM ${q(raw)}`,
      [label],
    );
    await host.run(`DROP TABLE ${q(raw)}`);
    return true;
  }
  const array = file.format === 'json' && startsWithBracket(file.path);
  const lines = `_scd_lines_${i}`;
  const records = `_scd_records_${i}`;
  for (const t of [lines, records]) await host.run(`DROP TABLE IF EXISTS ${q(t)}`);
  await host.run(`CREATE TEMP TABLE ${q(lines)} ("__scd_n" bigserial, line text)`);
  // Each line is one field: a delimiter and a quote that valid JSON text never holds unescaped.
  const copyLines = `COPY ${q(lines)} (line) FROM STDIN WITH (FORMAT csv, DELIMITER E'\\x01', QUOTE E'\\x02', ESCAPE E'\\x02')`;
  const loaded = await host.attempt(() => host.copyFrom(copyLines, { file: file.path }));
  // records: "__scd_n" (orders the records), src (the line its text is on), b (the parsed object).
  // Both are the line number: blank lines are no records, but numbering the records without them
  // (a window over the whole file) would only serve the sample, which takes the same records.
  const fromLines = () =>
    `CREATE TEMP TABLE ${q(records)} AS SELECT "__scd_n", "__scd_n" AS src,
       CAST(line AS jsonb) AS b FROM ${q(lines)} WHERE line IS NOT NULL AND btrim(line, E' \\t\\r') <> ''`;
  const lineText = `(SELECT "__scd_n" AS src, CAST(line AS json) AS j FROM ${q(lines)})`;
  if (array) {
    if (loaded) throw unreadable(file, loaded);
    const err = await host.attempt(() =>
      host.run(
        `CREATE TEMP TABLE ${q(records)} AS SELECT e.ord AS "__scd_n", e.ord AS src, e.j, CAST(e.j AS jsonb) AS b FROM
         (SELECT CAST(string_agg(line, E'\\n' ORDER BY "__scd_n") AS json) AS doc FROM ${q(lines)}) a,
         json_array_elements(a.doc) WITH ORDINALITY e(j, ord)`,
      ),
    );
    if (err) throw unreadable(file, err);
    const notObject = Number((await host.query(`SELECT count(*) AS n FROM ${q(records)} WHERE jsonb_typeof(b) <> 'object'`))[0]!.n);
    if (notObject) throw unreadable(file, new Error('a record of the array is not a JSON object'));
    await typedFromJson(host, records, `(SELECT src, j FROM ${q(records)})`, part, label, file);
    await host.run(`DROP TABLE ${q(lines)}`);
    return true;
  }
  if (!loaded) {
    const err = await host.attempt(() => host.run(fromLines()));
    const objects = !err && Number((await host.query(`SELECT count(*) AS n FROM ${q(records)} WHERE jsonb_typeof(b) <> 'object'`))[0]!.n) === 0;
    if (objects) {
      await typedFromJson(host, records, lineText, part, label, file);
      await host.run(`DROP TABLE ${q(lines)}`);
      return true;
    }
  }
  // The file has lines that cannot become records: find them, keep the rest (DuckDB driver's way).
  for (const t of [lines, records]) await host.run(`DROP TABLE IF EXISTS ${q(t)}`);
  const good = path.join(scratch, `good_${i}.ndjson`);
  const bad = path.join(scratch, `bad_${i}.ndjson`);
  const scan = await scanLines(file.path, good, bad);
  if (scan.bad) await rejectLines(host, bad, rejects, label, i);
  if (!scan.good) return false;
  await host.run(`CREATE TEMP TABLE ${q(lines)} ("__scd_n" bigserial, line text)`);
  await host.copyFrom(copyLines, { file: good });
  await host.run(fromLines());
  await typedFromJson(host, records, lineText, part, label, file);
  await host.run(`DROP TABLE ${q(lines)}`);
  return true;
}

/** DuckDB's default sample for JSON types; the PostgreSQL reader samples the same. */
const JSON_SAMPLE = 20480;

function textStats(row: Record<string, unknown>): TextStats {
  const s = Object.fromEntries(Object.entries(row).filter(([n]) => n !== 'key' && n !== 'shape').map(([n, v]) => [n, Number(v)]));
  return { ...(s as unknown as TextStats), shape: row.shape === null || row.shape === undefined ? undefined : String(row.shape) };
}

/**
 * The type statistics of the first JSON_SAMPLE records, when every record agrees with the types
 * they give (one pass of plain per-column checks instead of expanding every record); undefined
 * when the file is no longer than the sample, a key appears only later, or a value would change a
 * type: then every record is counted (docs/DECISIONS.md "typed from a sample, then checked").
 */
async function sampledStats(host: StageHost, records: string): Promise<Array<Record<string, unknown>> | undefined> {
  const total = Number((await host.query(`SELECT count(*) AS n FROM ${q(records)}`))[0]!.n);
  if (total <= JSON_SAMPLE) return undefined;
  const rows = await host.query(jsonStatsSql(`(SELECT * FROM ${q(records)} ORDER BY "__scd_n" LIMIT ${JSON_SAMPLE})`, 'b'));
  if (!rows.length) return undefined;
  const checks: string[] = [];
  for (const row of rows) {
    const s = textStats(row);
    const cond = fitsJsonType(`b->${lit(String(row.key))}`, jsonType(s), s.shapes === 1 ? s.shape : undefined, `(b->>${lit(String(row.key))})`);
    if (cond === undefined) return undefined;
    checks.push(`bool_and(${cond}) AS "c${checks.length}"`);
  }
  const known = `ARRAY[${rows.map((r) => lit(String(r.key))).join(', ')}]::text[]`;
  const r = (await host.query(`SELECT ${checks.join(', ')}, bool_and((b - ${known}) = '{}'::jsonb) AS "known" FROM ${q(records)}`))[0]!;
  return Object.values(r).every((v) => v !== false) ? rows : undefined;
}

/**
 * records ("__scd_n", src, b jsonb objects) → part: one typed column per key, in order of first
 * appearance (read from the records' JSON text `texts` (src, j json): jsonb does not keep key order).
 */
async function typedFromJson(host: StageHost, records: string, texts: string, part: string, label: string, file: InputFile): Promise<void> {
  const stats = (await sampledStats(host, records)) ?? (await host.query(jsonStatsSql(q(records), 'b')));
  const types = new Map<string, string>();
  const firstIn = new Map<string, number>();
  for (const row of stats) {
    types.set(String(row.key), jsonType(textStats(row)));
    firstIn.set(String(row.key), Number(row.src));
  }
  // Key order: by the first record that has the key, then by its place in that record's text.
  const srcs = [...new Set(firstIn.values())];
  const place = new Map<string, number>();
  if (srcs.length)
    for (const r of await host.query(
      `SELECT t.src, e.key, e.ord FROM ${texts} t CROSS JOIN LATERAL json_object_keys(t.j) WITH ORDINALITY e(key, ord)
       WHERE t.src IN (${srcs.map((n) => String(Math.trunc(n))).join(', ')})`,
    ))
      if (firstIn.get(String(r.key)) === Number(r.src) && !place.has(String(r.key))) place.set(String(r.key), Number(r.ord));
  const keys = [...firstIn.keys()].sort((a, b) => firstIn.get(a)! - firstIn.get(b)! || (place.get(a) ?? 0) - (place.get(b) ?? 0));
  const dataKeys = keys.filter((k) => k !== LINE_COLUMN);
  // A record's line is where its text is (src): blank lines are not records but are lines.
  const line = keys.includes(LINE_COLUMN) ? `CAST(b->>${lit(LINE_COLUMN)} AS bigint)` : `CAST(src AS bigint)`;
  const create = (typeOf: (k: string) => string) =>
    `CREATE TEMP TABLE ${q(part)} AS SELECT ${dataKeys
      .map((k) => {
        const t = typeOf(k);
        const value = t === 'jsonb' ? `CASE WHEN jsonb_typeof(b->${lit(k)}) = 'null' THEN NULL ELSE b->${lit(k)} END` : fromText(`(b->>${lit(k)})`, t);
        return `${value} AS ${q(k)}`;
      })
      .concat([`CAST($1 AS text) AS ${q(FILE_COLUMN)}`, `${line} AS ${q(LINE_COLUMN)}`])
      .join(', ')} FROM ${q(records)}`;
  const typeOf = (k: string) => types.get(k) ?? 'jsonb';
  let err = await host.attempt(() => host.run(create(typeOf), [label]));
  // A value that looks like a date but is none (2024-02-30): such columns stay text.
  if (err) err = await host.attempt(() => host.run(create((k) => (/^(date|timestamp)/.test(typeOf(k)) ? 'text' : typeOf(k))), [label]));
  if (err) throw unreadable(file, err);
  await host.run(`DROP TABLE ${q(records)}`);
}

/**
 * CSV: COPY into text columns (header from the file), then types from the values. Records COPY
 * refuses (wrong field count, unclosed quote) go to `rejects` at their physical line.
 */
async function stageCsv(host: StageHost, file: InputFile, part: string, rejects: string, scratch: string, i: number): Promise<boolean> {
  const label = file.label ?? file.path;
  const header = readCsvHeader(file.path);
  if (!header.length) return false;
  const raw = `${part}_raw`;
  const cols = header.map((_, k) => `c${k}`);
  const create = () => host.run(`CREATE TEMP TABLE ${q(raw)} (${cols.map((c) => `${q(c)} text`).join(', ')}, "__scd_l" bigint, "__scd_n" bigserial)`);
  const nulls = `FORCE_NULL (${cols.map(q).join(', ')})`;
  await host.run(`DROP TABLE IF EXISTS ${q(raw)}`);
  await create();
  const err = await host.attempt(() =>
    host.copyFrom(`COPY ${q(raw)} (${cols.map(q).join(', ')}) FROM STDIN WITH (FORMAT csv, HEADER true, ${nulls})`, { file: file.path }),
  );
  if (err) {
    const good = path.join(scratch, `good_${i}.csv`);
    const bad = path.join(scratch, `bad_${i}.ndjson`);
    const split = await splitCsv(file.path, cols.length, good, bad).catch(() => undefined);
    // COPY also refuses a blank line, which is no record (DuckDB's reader skips it): the split
    // drops it, and its good records keep their physical lines.
    if (!split) throw unreadable(file, err);
    await rejectLines(host, bad, rejects, label, i);
    await host.run(`DROP TABLE IF EXISTS ${q(raw)}`);
    await create();
    const failed = await host.attempt(() =>
      host.copyFrom(`COPY ${q(raw)} (${[...cols.map(q), '"__scd_l"'].join(', ')}) FROM STDIN WITH (FORMAT csv, ${nulls})`, { file: good }),
    );
    if (failed) throw unreadable(file, failed);
  }
  const stats = cols.flatMap((c) => textStatsSql(q(c), c));
  const row = (await host.query(`SELECT ${stats.join(', ')} FROM ${q(raw)}`))[0]!;
  const typeOf = (c: string) =>
    csvType(Object.fromEntries(Object.entries(row).filter(([n]) => n.startsWith(`${c}_`)).map(([n, v]) => [n.slice(c.length + 1), Number(v)])) as unknown as TextStats);
  const typed = (fallback: boolean) =>
    `CREATE TEMP TABLE ${q(part)} AS SELECT ${cols
      .map((c, k) => {
        const t = typeOf(c);
        return `${fromText(q(c), fallback && /^(date|timestamp)/.test(t) ? 'text' : t)} AS ${q(header[k]!)}`;
      })
      .join(', ')}, CAST($1 AS text) AS ${q(FILE_COLUMN)}, coalesce("__scd_l", "__scd_n" + 1) AS ${q(LINE_COLUMN)} FROM ${q(raw)}`;
  let failed = await host.attempt(() => host.run(typed(false), [label]));
  if (failed) failed = await host.attempt(() => host.run(typed(true), [label]));
  if (failed) throw unreadable(file, failed);
  await host.run(`DROP TABLE ${q(raw)}`);
  return true;
}

/** Rejected records written as NDJSON {line, reason, raw} → the rejects table. */
async function rejectLines(host: StageHost, bad: string, rejects: string, label: string, i: number): Promise<void> {
  if (statSync(bad).size === 0) return;
  const badLines = `_scd_bad_${i}`;
  await host.run(`DROP TABLE IF EXISTS ${q(badLines)}`);
  await host.run(`CREATE TEMP TABLE ${q(badLines)} (line text)`);
  await host.copyFrom(`COPY ${q(badLines)} (line) FROM STDIN WITH (FORMAT csv, DELIMITER E'\\x01', QUOTE E'\\x02', ESCAPE E'\\x02')`, { file: bad });
  await host.run(
    `INSERT INTO ${q(rejects)} SELECT $1, CAST(j->>'line' AS bigint), j->>'reason', j->>'raw' FROM (SELECT CAST(line AS json) AS j FROM ${q(badLines)} WHERE line IS NOT NULL) b`,
    [label],
  );
  await host.run(`DROP TABLE ${q(badLines)}`);
}

/** The column names of a CSV file's first record (RFC 4180 quoting), duplicates numbered like DuckDB. */
export function readCsvHeader(file: string): string[] {
  const fd = openSync(file, 'r');
  let text = '';
  try {
    const buf = Buffer.alloc(1 << 16);
    for (let pos = 0; ; ) {
      const n = readSync(fd, buf, 0, buf.length, pos);
      if (n <= 0) break;
      text += buf.subarray(0, n).toString('utf8');
      pos += n;
      if (headerEnd(text) >= 0) break;
    }
  } finally {
    closeSync(fd);
  }
  const end = headerEnd(text);
  const line = text.slice(0, end < 0 ? text.length : end).replace(/^\uFEFF/, '');
  if (line.trim() === '') return [];
  const names: string[] = [];
  let cur = '';
  let quoted = false;
  for (let i = 0; i < line.length; i++) {
    const ch = line[i]!;
    if (quoted) {
      if (ch === '"' && line[i + 1] === '"') (cur += '"'), i++;
      else if (ch === '"') quoted = false;
      else cur += ch;
    } else if (ch === '"') quoted = true;
    else if (ch === ',') names.push(cur), (cur = '');
    else cur += ch;
  }
  names.push(cur.replace(/\r$/, ''));
  const seen = new Map<string, number>();
  return names.map((n, i) => {
    const name = n.trim() === '' ? `column${i}` : n;
    const k = seen.get(name) ?? 0;
    seen.set(name, k + 1);
    return k ? `${name}_${k}` : name;
  });
}

/** Index of the newline that ends the first CSV record, or -1 when not seen yet. */
function headerEnd(text: string): number {
  let quoted = false;
  for (let i = 0; i < text.length; i++) {
    const ch = text[i];
    if (ch === '"') quoted = !quoted;
    else if (ch === '\n' && !quoted) return i;
  }
  return -1;
}

function startsWithBracket(file: string): boolean {
  const fd = openSync(file, 'r');
  try {
    const buf = Buffer.alloc(4096);
    const n = readSync(fd, buf, 0, buf.length, 0);
    return buf.subarray(0, n).toString('utf8').replace(/^\uFEFF/, '').trimStart().startsWith('[');
  } finally {
    closeSync(fd);
  }
}

function unreadable(file: InputFile, e: unknown): ScdError {
  const msg = e instanceof QueryError ? e.reason : e instanceof Error ? firstLine(e.message) : String(e);
  const detail = e instanceof QueryError && e.cause && typeof e.cause === 'object' ? (e.cause as { detail?: string; where?: string }) : {};
  const extra = [detail.detail, detail.where].filter(Boolean).map((s) => firstLine(String(s))).join('; ');
  return new ScdError('INPUT_UNREADABLE', `cannot read as ${file.format}: ${msg}${extra ? ` (${extra})` : ''}`, {
    file: file.path,
    fix: 'check the file and its format; nothing was applied',
  });
}

export { RE };
