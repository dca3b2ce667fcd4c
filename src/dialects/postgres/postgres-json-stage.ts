import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { checkSourceKeys } from '../../files/source-keys.js';
import { normalizeJsonText } from '../../files/text-records.js';
import type { ColumnInfo, InputFile } from '../driver.js';
import { FILE_COLUMN, LARGE_STAGE, LINE_COLUMN, RAW_COLUMN } from '../driver.js';
import type { CopySource } from './postgres-client.js';
import { postgresDialect as d, sqlString } from './postgres-dialect.js';
import { EXPONENT_SHAPE, exponentNumbersSql } from './postgres-exponent-numbers.js';
import { copyLines, copyPlain } from './postgres-lines.js';

const q = d.quote;

/** What staging needs from the driver. */
export interface StageHost {
  run(sql: string, params?: unknown[]): Promise<void>;
  query(sql: string, params?: unknown[]): Promise<Array<Record<string, unknown>>>;
  copyFrom(sql: string, source: CopySource): Promise<void>;
  /** Run fn; if it fails, undo its statements (a savepoint inside a transaction) and return the error. */
  attempt(fn: () => Promise<void>): Promise<unknown | undefined>;
  columns(table: string): Promise<ColumnInfo[] | undefined>;
  /** Staging makes the helper table `table` (postgres-lines.ts CopyHost). */
  stagingTable(table: string): string;
}

export const NUL_REASON = 'a NUL character (\\u0000) in a string';
export const SURROGATE_REASON = 'a UTF-16 surrogate without its pair in a string';

/**
 * Stage one JSON or JSON-lines file into `part`, the way DuckDB's reader does
 * (dialects/duckdb/duckdb-json-stage.ts): one row per record with its file, line, raw text as
 * written (RAW_COLUMN) and each key's value as jsonb (lexical `json`: scdkit types them,
 * typing/infer.ts); records that cannot be read (not JSON, not an object, not UTF-8, a string
 * PostgreSQL cannot store: a NUL character, a lone surrogate) go to `rejects` with their raw text.
 * Returns the columns, in order of first appearance, and the records read (every non-blank line,
 * or array element).
 *
 * A JSON-lines file that COPY can split into lines as written (postgres-lines.ts `copyPlain`) is
 * read by COPY, a line a row; any other file, and one with a line that is not JSON (a value may
 * span lines), is normalized first (files/text-records.ts). Values keep their exact numbers: jsonb
 * holds a JSON number as a numeric (no value passes through a double or a JavaScript number).
 */
export async function stageJsonFile(host: StageHost, file: InputFile, part: string, rejects: string, scratch: string, i: number): Promise<StagedJson> {
  const label = file.label ?? file.path;
  const lines = `_scd_lines_${i}`;
  const records = `_scd_records_${i}`;
  const numbered = !!file.numbered;
  if (file.format === 'ndjson' && copyPlain(file.path)) {
    await copyLines(host, file.path, lines);
    const read = await checkRecords(host, `SELECT n AS line, raw, CAST(NULL AS text) AS reason FROM ${q(lines)}`, records, numbered, true);
    // A line that is not JSON may be part of a value that spans lines: the normalized form decides.
    if (!read.malformed) {
      if (read.records >= LARGE_STAGE) await host.run(`DROP TABLE ${q(lines)}`);
      return finish(host, records, part, rejects, label, numbered, read);
    }
    await host.run(`DROP TABLE ${q(lines)}, ${q(records)}`);
  }
  const normalized = path.join(scratch, `records_${i}.ndjson`);
  const { oversized } = await normalizeJsonText(file.path, normalized);
  keepNulVisible(normalized);
  await copyLines(host, normalized, lines);
  const read = await checkRecords(
    host,
    `SELECT CAST(j->>'l' AS bigint) AS line, j->>'r' AS raw, j->>'e' AS reason FROM (SELECT CAST(raw AS json) AS j FROM ${q(lines)} WHERE raw IS NOT NULL) w`,
    records,
    numbered,
    false,
  );
  if (read.records >= LARGE_STAGE) await host.run(`DROP TABLE ${q(lines)}`);
  const staged = await finish(host, records, part, rejects, label, numbered, read);
  // A record over the limit is quarantined with its whole text, as a value (never read as JSON);
  // a NUL in it is shown as \x00, as keepNulVisible shows it (text cannot hold one).
  for (const r of oversized) await host.run(`INSERT INTO ${q(rejects)} VALUES ($1, $2, $3, $4)`, [label, r.l, r.e, r.r.replaceAll('\0', '\\x00')]);
  return { ...staged, records: staged.records + oversized.length };
}

/** What a JSON file's staging read: its columns (in order of first appearance) and records. */
export interface StagedJson {
  /** The keys, as the staged part's columns. */
  columns: string[];
  records: number;
  /** The staged part's columns with their types (the keys' and scdkit's own). */
  table: ColumnInfo[];
}

/**
 * A NUL byte in a line (normalized as the JSON escape \u0000 of its raw text) becomes the visible
 * \x00: PostgreSQL text cannot hold a NUL. Only a file that has one is rewritten (rare).
 */
export function keepNulVisible(normalized: string): void {
  const text = readFileSync(normalized, 'utf8');
  // A NUL escape is \u0000 after an even number of backslashes (an odd one escapes the backslash).
  const nul = /(?<!\\)((?:\\\\)*)\\u0000/g;
  if (!nul.test(text)) return;
  writeFileSync(normalized, text.replace(nul, '$1\\\\x00'));
}

/** A file's records, counted once they are checked, and their keys in order. */
interface CheckedRecords {
  records: number;
  rejected: number;
  malformed: number;
  /** Good records with a number's exponent in their raw text, maybe (postgres-exponent-numbers.ts). */
  exponents: number;
  keys: string[];
}

/**
 * `from` gives (line, raw, reason) → `records` (line, raw, reason, b jsonb): blank lines are no
 * records; each record parsed once, straight (one statement) or, when a record does not parse,
 * each alone. Then one query counts them (all, rejected, malformed JSON) and finds their keys in
 * order (keysInOrderSql); `plain`: the lines as written, which are read again normalized when one
 * is malformed JSON, so their keys are not looked for then.
 */
async function checkRecords(host: StageHost, from: string, records: string, numbered: boolean, plain: boolean): Promise<CheckedRecords> {
  // The parse is computed once (OFFSET 0: not copied into both of its uses); valid JSON that is
  // not an object is no record.
  const make = (parse: string) =>
    host.run(
      `CREATE TEMP TABLE ${q(host.stagingTable(records))} AS SELECT line, raw, CASE WHEN reason IS NULL AND jsonb_typeof(b) <> 'object' THEN 'not a JSON object' ELSE reason END AS reason, b
       FROM (SELECT line, raw, reason, CASE WHEN reason IS NULL THEN ${parse} END AS b FROM (${from}) f WHERE raw IS NOT NULL AND btrim(raw, E' \\t\\r') <> ''${d.computeOnce}) p`,
    );
  if (await host.attempt(() => make(`CAST(raw AS jsonb)`))) {
    await host.run(`DROP TABLE IF EXISTS ${q(records)}`);
    await make(d.tryCast('raw', 'jsonb'));
    // json keeps a string as written, so it reads what jsonb refuses to store.
    const nul = `raw ~ '(^|[^\\\\])(\\\\\\\\)*\\\\u0000'`;
    await host.run(
      `UPDATE ${q(records)} SET reason = CASE WHEN ${d.tryCast('raw', 'json')} IS NULL THEN 'malformed JSON'
         WHEN ${nul} THEN ${sqlString(NUL_REASON)} ELSE ${sqlString(SURROGATE_REASON)} END
       WHERE reason IS NULL AND b IS NULL`,
    );
  }
  // The keys: those of the first good record, unless a record has another (then every record's).
  const when = plain ? `(SELECT malformed FROM c) = 0` : 'true';
  const firstRecord = `k0 AS (SELECT b, line FROM ${q(records)} WHERE reason IS NULL ORDER BY line LIMIT 1)`;
  const rows = await host.query(
    `WITH ${firstRecord}, c AS (SELECT count(*) AS records, count(reason) AS rejected, count(*) FILTER (WHERE reason = 'malformed JSON') AS malformed,
       count(*) FILTER (WHERE reason IS NULL AND ${EXPONENT_SHAPE('raw')}) AS exponents,
       count(*) FILTER (WHERE reason IS NULL AND (b - ARRAY(SELECT jsonb_object_keys(k0.b) FROM k0)) <> '{}'::jsonb) AS others FROM ${q(records)}),
     ${keysInOrderSql(records, when, 'k0')}
     SELECT c.records, c.rejected, c.malformed, c.exponents, c.others, k.key, k.line, k.ord FROM c LEFT JOIN keyed k ON true`,
  );
  const first = rows[0]!;
  const everyRecord = Number(first.others) > 0 && !(plain && Number(first.malformed) > 0);
  const keyed = everyRecord ? await host.query(`WITH ${keysInOrderSql(records, 'true')} SELECT key, line, ord FROM keyed`) : rows;
  const own = numbered ? [LINE_COLUMN, RAW_COLUMN] : [];
  return {
    records: Number(first.records),
    rejected: Number(first.rejected),
    malformed: Number(first.malformed),
    exponents: Number(first.exponents),
    keys: keysInOrder(keyed.filter((r) => r.key !== null && r.key !== undefined)).filter((k) => !own.includes(k)),
  };
}

/** Where a numbered copy's own line waits while its exponent numbers are staged (finish). */
const COPY_LINE = '__scd_copy_line';

/** records → part (the good ones, a column per key) and rejects (the others). */
async function finish(host: StageHost, records: string, part: string, rejects: string, label: string, numbered: boolean, read: CheckedRecords): Promise<StagedJson> {
  const keys = read.keys;
  checkSourceKeys(keys, d.nameKey, d.nameProblem);
  // A numbered copy's records carry where (and what) they were in the original file.
  const line = numbered ? `coalesce(CAST(b->>${sqlString(LINE_COLUMN)} AS bigint), line)` : 'line';
  const raw = numbered ? `coalesce(b->>${sqlString(RAW_COLUMN)}, raw)` : 'raw';
  const values = keys.map((k) => `NULLIF(b->${sqlString(k)}, 'null'::jsonb) AS ${q(k)}`);
  // A numbered copy's raw text is the original record's (a Debezium envelope), not the staged
  // one: its exponents are read from the copy's own line, held in a column of its own meanwhile.
  const copyLine = numbered && read.exponents ? [`raw AS ${q(COPY_LINE)}`] : [];
  await host.run(
    `CREATE TEMP TABLE ${q(host.stagingTable(part))} AS SELECT ${[...values, `CAST($1 AS text) AS ${q(FILE_COLUMN)}`, `${line} AS ${q(LINE_COLUMN)}`, `${raw} AS ${q(RAW_COLUMN)}`, ...copyLine].join(', ')}
     FROM ${q(records)} WHERE reason IS NULL`,
    [label],
  );
  const exponents = read.exponents ? exponentNumbersSql(part, keys, numbered ? COPY_LINE : RAW_COLUMN) : undefined;
  if (exponents) await host.run(exponents);
  if (copyLine.length) await host.run(`ALTER TABLE ${q(part)} DROP COLUMN ${q(COPY_LINE)}`);
  if (read.rejected > 0) await host.run(`INSERT INTO ${q(rejects)} SELECT $1, line, reason, raw FROM ${q(records)} WHERE reason IS NOT NULL`, [label]);
  if (read.records >= LARGE_STAGE) await host.run(`DROP TABLE ${q(records)}`);
  const table: ColumnInfo[] = [
    ...keys.map((k) => ({ name: k, type: 'jsonb' })),
    { name: FILE_COLUMN, type: 'text' },
    { name: LINE_COLUMN, type: 'bigint' },
    { name: RAW_COLUMN, type: 'text' },
  ];
  return { columns: keys, records: read.records, table };
}

/**
 * The CTEs (the last named `keyed`: key, line, ord) that find the good records' keys in order of
 * first appearance: by the first record that has the key, then by its place in that record's text
 * (jsonb does not keep the order of keys; json does, so only those first records are read as
 * json). Nothing is read where `when` is false (a one-time filter). `firstRecord`: a CTE holding
 * the first good record alone (b, line), whose keys are all the file's when no record has another
 * (every record's keys are read otherwise: checkRecords counts the others).
 */
function keysInOrderSql(records: string, when: string, firstRecord?: string): string {
  const f = firstRecord
    ? `f AS (SELECT k AS key, r.line FROM ${firstRecord} r CROSS JOIN LATERAL jsonb_object_keys(r.b) k WHERE ${when}),`
    : `f AS (SELECT k AS key, min(line) AS line FROM ${q(records)} r CROSS JOIN LATERAL jsonb_object_keys(r.b) k WHERE ${when} AND r.reason IS NULL GROUP BY k),`;
  return `${f}
     p AS (SELECT r.line, e.key, min(e.ord) AS ord FROM (SELECT line, raw FROM ${q(records)} WHERE reason IS NULL AND line IN (SELECT line FROM f)${d.computeOnce}) r
       CROSS JOIN LATERAL json_object_keys(CAST(r.raw AS json)) WITH ORDINALITY e(key, ord) GROUP BY r.line, e.key),
     keyed AS (SELECT f.key, f.line, p.ord FROM f LEFT JOIN p ON p.line = f.line AND p.key = f.key)`;
}

/** keysInOrderSql's rows, in order. */
function keysInOrder(rows: Array<Record<string, unknown>>): string[] {
  return rows
    .map((r) => ({ key: String(r.key), line: BigInt(String(r.line)), ord: r.ord === null || r.ord === undefined ? 0 : Number(r.ord) }))
    .sort((a, b) => (a.line < b.line ? -1 : a.line > b.line ? 1 : a.ord - b.ord))
    .map((r) => r.key);
}
