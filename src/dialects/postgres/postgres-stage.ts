import { closeSync, createReadStream, mkdtempSync, openSync, readSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { QueryError, ScdError, firstLine } from '../../errors.js';
import { systemColumnClash } from './postgres-system-columns.js';
import { DISK_FULL, sqlState } from './postgres-errors.js';
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
  const parts: Array<{ name: string; cols: ColumnInfo[]; last: boolean }> = [];
  try {
    for (const [i, file] of files.entries()) {
      if (statSync(file.path).size === 0) continue;
      const part = `_scd_part_${i}`;
      await host.run(`DROP TABLE IF EXISTS ${q(part)}`);
      const ok = await stageOne(host, file, part, rejects, scratch, i);
      if (!ok) continue;
      const all = (await host.columns(part)) ?? [];
      const cols = all.filter((c) => c.name !== FILE_COLUMN && c.name !== LINE_COLUMN);
      parts.push({ name: part, cols, last: all.slice(-2).map((c) => c.name).join() === [FILE_COLUMN, LINE_COLUMN].join() });
    }
    await host.run(`DROP TABLE IF EXISTS ${q(table)}`);
    // One file's part is the staged table already (its columns end with the file and the line).
    if (parts.length === 1 && parts[0]!.last) await host.run(`ALTER TABLE ${q(parts[0]!.name)} RENAME TO ${q(table)}`);
    else {
      await host.run(`CREATE TEMP TABLE ${q(table)} AS ${unionByName(parts)}`);
      for (const p of parts) await host.run(`DROP TABLE ${q(p.name)}`);
    }
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
  // Each line is one field: a delimiter and a quote that valid JSON text never holds unescaped.
  const asLines = `WITH (FORMAT csv, DELIMITER E'\\x01', QUOTE E'\\x02', ESCAPE E'\\x02')`;
  const copyLines = `COPY ${q(lines)} (line) FROM STDIN ${asLines}`;
  // records: "__scd_n" (orders the records, and is the line their text is on), b (the parsed object).
  if (!array && lineBreaks(file.path) === 'lf') {
    // NDJSON straight into jsonb, one line a row (a blank line is a null); the key order comes
    // from the text of the few lines that first have each key.
    await host.run(`CREATE TEMP TABLE ${q(records)} ("__scd_n" bigserial, b jsonb)`);
    const failed = await host.attempt(() => host.copyFrom(`COPY ${q(records)} (b) FROM STDIN ${asLines}`, { file: file.path }));
    if (!failed) {
      await host.run(`DELETE FROM ${q(records)} WHERE b IS NULL`);
      if (Number((await host.query(`SELECT count(*) AS n FROM ${q(records)} WHERE jsonb_typeof(b) <> 'object'`))[0]!.n) === 0) {
        await typedFromJson(host, records, keysInLines(host, file.path), part, label, file);
        return true;
      }
    }
    await host.run(`DROP TABLE IF EXISTS ${q(records)}`);
  } else {
    await host.run(`CREATE TEMP TABLE ${q(lines)} ("__scd_n" bigserial, line text)`);
    const loaded = await host.attempt(() => host.copyFrom(copyLines, { file: file.path }));
    if (array) {
      if (loaded) throw unreadable(file, loaded);
      const err = await host.attempt(() =>
        host.run(
          `CREATE TEMP TABLE ${q(records)} AS SELECT e.ord AS "__scd_n", e.j, CAST(e.j AS jsonb) AS b FROM
           (SELECT CAST(string_agg(line, E'\\n' ORDER BY "__scd_n") AS json) AS doc FROM ${q(lines)}) a,
           json_array_elements(a.doc) WITH ORDINALITY e(j, ord)`,
        ),
      );
      if (err) throw unreadable(file, err);
      const notObject = Number((await host.query(`SELECT count(*) AS n FROM ${q(records)} WHERE jsonb_typeof(b) <> 'object'`))[0]!.n);
      if (notObject) throw unreadable(file, new Error('a record of the array is not a JSON object'));
      await typedFromJson(host, records, keysInTexts(host, `(SELECT "__scd_n" AS src, j FROM ${q(records)})`), part, label, file);
      await host.run(`DROP TABLE ${q(lines)}`);
      return true;
    }
    if (!loaded) {
      const err = await host.attempt(() => host.run(fromLines(records, lines)));
      const objects = !err && Number((await host.query(`SELECT count(*) AS n FROM ${q(records)} WHERE jsonb_typeof(b) <> 'object'`))[0]!.n) === 0;
      if (objects) {
        await typedFromJson(host, records, keysInTexts(host, lineTexts(lines)), part, label, file);
        await host.run(`DROP TABLE ${q(lines)}`);
        return true;
      }
    }
  }
  // The file has lines that cannot become records: find them, keep the rest (DuckDB driver's way).
  for (const t of [lines, records]) await host.run(`DROP TABLE IF EXISTS ${q(t)}`);
  const good = path.join(scratch, `good_${i}.ndjson`);
  const bad = path.join(scratch, `bad_${i}.ndjson`);
  const scan = await scanLines(file.path, good, bad);
  if (scan.bad) await rejectLines(host, bad, rejects, label);
  if (!scan.good) return false;
  await host.run(`CREATE TEMP TABLE ${q(lines)} ("__scd_n" bigserial, line text)`);
  await host.copyFrom(copyLines, { file: good });
  await host.run(fromLines(records, lines));
  await typedFromJson(host, records, keysInTexts(host, lineTexts(lines)), part, label, file);
  await host.run(`DROP TABLE ${q(lines)}`);
  return true;
}

/** Lines (a text table) → records: blank lines are no records, but keep their numbers. */
const fromLines = (records: string, lines: string) =>
  `CREATE TEMP TABLE ${q(records)} AS SELECT "__scd_n", CAST(line AS jsonb) AS b FROM ${q(lines)}
   WHERE line IS NOT NULL AND btrim(line, E' \\t\\r') <> ''`;
const lineTexts = (lines: string) => `(SELECT "__scd_n" AS src, CAST(line AS json) AS j FROM ${q(lines)})`;

/** The keys of some records in the order of their text: (src, key, ord) rows for the records numbered srcs. */
type KeysInOrder = (srcs: number[]) => Promise<Array<Record<string, unknown>>>;

/** From a relation of the records' JSON text (src, j json). */
const keysInTexts =
  (host: StageHost, texts: string): KeysInOrder =>
  (srcs) =>
    host.query(
      `SELECT t.src, e.key, e.ord FROM ${texts} t CROSS JOIN LATERAL json_object_keys(t.j) WITH ORDINALITY e(key, ord)
       WHERE t.src IN (${srcs.map((n) => String(Math.trunc(n))).join(', ')})`,
    );

/** From the file's own lines (numbered as COPY numbered its rows), read until the last one wanted. */
const keysInLines =
  (host: StageHost, file: string): KeysInOrder =>
  async (srcs) => {
    const texts = await linesAt(file, new Set(srcs));
    // One parameter, a JSON array of [line, text] pairs (array parameters differ between clients).
    return host.query(
      `SELECT CAST(t.p->>0 AS bigint) AS src, e.key, e.ord FROM json_array_elements(CAST($1 AS json)) AS t(p)
       CROSS JOIN LATERAL json_object_keys(CAST(t.p->>1 AS json)) WITH ORDINALITY e(key, ord)`,
      [JSON.stringify([...texts])],
    );
  };

/** The text of the lines numbered `wanted` (1-based, split at LF, a CR before it dropped). */
async function linesAt(file: string, wanted: Set<number>): Promise<Map<number, string>> {
  const found = new Map<number, string>();
  const last = Math.max(0, ...wanted);
  let line = 1;
  let pending: Buffer[] = [];
  const keep = (bytes: Buffer) => {
    if (wanted.has(line)) found.set(line, bytes.toString('utf8').replace(/\r$/, ''));
    line++;
  };
  const stream = createReadStream(file);
  try {
    for await (const chunk of stream as AsyncIterable<Buffer>) {
      let start = 0;
      for (let n = chunk.indexOf(0x0a); n >= 0 && line <= last; n = chunk.indexOf(0x0a, start)) {
        keep(pending.length ? Buffer.concat([...pending, chunk.subarray(start, n)]) : chunk.subarray(start, n));
        pending = [];
        start = n + 1;
      }
      if (line > last) break;
      if (wanted.has(line)) pending.push(chunk.subarray(start));
    }
    if (line <= last && pending.length) keep(Buffer.concat(pending));
  } finally {
    stream.destroy();
  }
  return found;
}

/**
 * How the file's lines end, as COPY decides it from the first line break: 'lf' (LF, or CR LF)
 * or 'cr' (a lone CR, or none seen in the first megabyte: then the lines go through a text table).
 */
function lineBreaks(file: string): 'lf' | 'cr' {
  const fd = openSync(file, 'r');
  try {
    const buf = Buffer.alloc(1 << 20);
    const n = readSync(fd, buf, 0, buf.length, 0);
    for (let i = 0; i < n; i++) {
      if (buf[i] === 0x0a) return 'lf';
      if (buf[i] === 0x0d) return i + 1 < n && buf[i + 1] === 0x0a ? 'lf' : 'cr';
    }
    return 'cr';
  } finally {
    closeSync(fd);
  }
}

/**
 * The records PostgreSQL types JSON from before checking every record against those types. Its
 * size decides only how often a file is counted whole, never the types (docs/DECISIONS.md "typed
 * from a sample, then checked"): smaller than DuckDB's 20,480, as counting costs more here.
 */
export const JSON_SAMPLE = 4096;

function textStats(row: Record<string, unknown>): TextStats {
  const s = Object.fromEntries(Object.entries(row).filter(([n]) => n !== 'key' && n !== 'shape').map(([n, v]) => [n, Number(v)]));
  return { ...(s as unknown as TextStats), shape: row.shape === null || row.shape === undefined ? undefined : String(row.shape) };
}

/** The one shape of a column's date-like strings, when it has one. */
const oneShape = (s: TextStats) => (s.shapes === 1 ? s.shape : undefined);

/**
 * The type statistics of the first JSON_SAMPLE records; undefined when the file is no longer than
 * the sample, or the sample gives a column a type that more values may change (jsonb, or no value
 * yet): then every record is counted.
 */
async function sampledStats(host: StageHost, records: string): Promise<Array<Record<string, unknown>> | undefined> {
  const total = Number((await host.query(`SELECT count(*) AS n FROM ${q(records)}`))[0]!.n);
  if (total <= JSON_SAMPLE) return undefined;
  const rows = await host.query(jsonStatsSql(`(SELECT * FROM ${q(records)} ORDER BY "__scd_n" LIMIT ${JSON_SAMPLE})`, 'b'));
  if (!rows.length) return undefined;
  for (const row of rows) {
    const s = textStats(row);
    if (fitsJsonType('k', 'v', jsonType(s), oneShape(s)) === undefined) return undefined;
  }
  return rows;
}

/** The columns the statistics give: their types, and the keys in order of first appearance. */
interface JsonColumns {
  types: Map<string, string>;
  /** Every key, in order. */
  keys: string[];
}

async function jsonColumns(stats: Array<Record<string, unknown>>, keysInOrder: KeysInOrder): Promise<JsonColumns> {
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
    for (const r of await keysInOrder(srcs))
      if (firstIn.get(String(r.key)) === Number(r.src) && !place.has(String(r.key))) place.set(String(r.key), Number(r.ord));
  const keys = [...firstIn.keys()].sort((a, b) => firstIn.get(a)! - firstIn.get(b)! || (place.get(a) ?? 0) - (place.get(b) ?? 0));
  return { types, keys };
}

/** A record's line is where its text is ("__scd_n"): blank lines are not records but are lines. */
const lineOf = (keys: string[], b: string, n: string) =>
  keys.includes(LINE_COLUMN) ? `CAST(${b}->>${lit(LINE_COLUMN)} AS bigint)` : `CAST(${n} AS bigint)`;

/**
 * records ("__scd_n", b jsonb objects) → part: one typed column per key, in order of first
 * appearance (in the records' JSON text: jsonb does not keep key order). Typed from the sample when
 * every record fits its types (fromSample), else from counting every record.
 */
async function typedFromJson(host: StageHost, records: string, keysInOrder: KeysInOrder, part: string, label: string, file: InputFile): Promise<void> {
  const sample = await sampledStats(host, records);
  if (!sample || !(await fromSample(host, records, part, label, sample, await jsonColumns(sample, keysInOrder)))) {
    const { types, keys } = await jsonColumns(await host.query(jsonStatsSql(q(records), 'b')), keysInOrder);
    const dataKeys = keys.filter((k) => k !== LINE_COLUMN);
    const create = (typeOf: (k: string) => string) =>
      `CREATE TEMP TABLE ${q(part)} AS SELECT ${dataKeys
        .map((k) => {
          const t = typeOf(k);
          const value = t === 'jsonb' ? `CASE WHEN jsonb_typeof(b->${lit(k)}) = 'null' THEN NULL ELSE b->${lit(k)} END` : fromText(`(b->>${lit(k)})`, t);
          return `${value} AS ${q(k)}`;
        })
        .concat([`CAST($1 AS text) AS ${q(FILE_COLUMN)}`, `${lineOf(keys, 'b', '"__scd_n"')} AS ${q(LINE_COLUMN)}`])
        .join(', ')} FROM ${q(records)}`;
    const typeOf = (k: string) => types.get(k) ?? 'jsonb';
    let err = await host.attempt(() => host.run(create(typeOf), [label]));
    // A value that looks like a date but is none (2024-02-30): such columns stay text.
    if (err) err = await host.attempt(() => host.run(create((k) => (/^(date|timestamp)/.test(typeOf(k)) ? 'text' : typeOf(k))), [label]));
    if (err) throw unreadable(file, err);
  }
  await host.run(`DROP TABLE ${q(records)}`);
}

const FITS = '__scd_fits';

/**
 * One pass typing every record by the sample's types and telling whether each fits them (its
 * values' kinds, integer range, date pattern and shape: fitsJsonType) and has no key the sample
 * lacks; then the full count would give the same types. False, with no part left, when a record
 * does not fit, or a value does not convert (a fraction or a 65-bit integer in a bigint column, a
 * date that is none, like 2024-02-30): the full count decides those.
 */
async function fromSample(host: StageHost, records: string, part: string, label: string, stats: Array<Record<string, unknown>>, cols: JsonColumns): Promise<boolean> {
  const { keys } = cols;
  const shapes = new Map(stats.map((r) => [String(r.key), oneShape(textStats(r))]));
  const typeOf = (k: string) => cols.types.get(k)!;
  // Each key's kind and text computed once (OFFSET 0 keeps the planner from inlining them back).
  const inner = `SELECT "__scd_n", b, ${keys.map((k, i) => `jsonb_typeof(b->${lit(k)}) AS "k${i}", b->>${lit(k)} AS "v${i}"`).join(', ')} FROM ${q(records)} OFFSET 0`;
  const fits = keys.map((k, i) => `(${fitsJsonType(`x."k${i}"`, `x."v${i}"`, typeOf(k), shapes.get(k))!})`);
  fits.push(`(x.b - ARRAY[${keys.map(lit).join(', ')}]::text[]) = '{}'::jsonb`);
  const values = keys.flatMap((k, i) => (k === LINE_COLUMN ? [] : [`${fromText(`x."v${i}"`, typeOf(k))} AS ${q(k)}`]));
  const create = `CREATE TEMP TABLE ${q(part)} AS SELECT ${[
    ...values,
    `CAST($1 AS text) AS ${q(FILE_COLUMN)}`,
    `${lineOf(keys, 'x.b', 'x."__scd_n"')} AS ${q(LINE_COLUMN)}`,
    `(${fits.join(' AND ')}) AS ${q(FITS)}`,
  ].join(', ')} FROM (${inner}) x`;
  if (await host.attempt(() => host.run(create, [label]))) return false;
  if ((await host.query(`SELECT 1 AS misfit FROM ${q(part)} WHERE ${q(FITS)} IS NOT TRUE LIMIT 1`)).length) {
    await host.run(`DROP TABLE ${q(part)}`);
    return false;
  }
  await host.run(`ALTER TABLE ${q(part)} DROP COLUMN ${q(FITS)}`);
  return true;
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
    await rejectLines(host, bad, rejects, label);
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

/** Rejected records written as NDJSON {line, reason, raw} → the rejects table, every field as text. */
export async function rejectLines(host: StageHost, bad: string, rejects: string, label: string): Promise<void> {
  if (statSync(bad).size === 0) return;
  const badLines = '_scd_bad_lines';
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

/** Why a file cannot be staged, for a person; a full disk is no fault of the file and passes as it is (plan/disk-full.ts). */
function unreadable(file: InputFile, e: unknown): unknown {
  if (sqlState(e) === DISK_FULL) return e;
  const clash = systemColumnClash(e, file.path);
  if (clash) return clash;
  const msg = e instanceof QueryError ? e.reason : e instanceof Error ? firstLine(e.message) : String(e);
  const detail = e instanceof QueryError && e.cause && typeof e.cause === 'object' ? (e.cause as { detail?: string; where?: string }) : {};
  const extra = [detail.detail, detail.where].filter(Boolean).map((s) => firstLine(String(s))).join('; ');
  return new ScdError('INPUT_UNREADABLE', `cannot read as ${file.format}: ${msg}${extra ? ` (${extra})` : ''}`, {
    file: file.path,
    fix: 'check the file and its format; nothing was applied',
  });
}

export { RE };
