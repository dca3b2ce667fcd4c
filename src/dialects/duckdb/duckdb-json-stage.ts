import path from 'node:path';
import { MAX_RECORD_BYTES } from '../../files/record-limit.js';
import { checkSourceKeys } from '../../files/source-keys.js';
import { checkText, normalizeJsonText } from '../../files/text-records.js';
import { sqlString } from '../dialect.js';
import type { ColumnInfo, InputFile, Row } from '../driver.js';
import { FILE_COLUMN, LARGE_STAGE, LINE_COLUMN, RAW_COLUMN } from '../driver.js';
import { duckdbDialect } from './duckdb-dialect.js';
import { lostNumbers, restoreLongNumbers } from './duckdb-exact-numbers.js';

const q = duckdbDialect.quote;
const REASON = '__scd_read_reason';
const EXTRA = '__scd_extra_keys';
/** Records whose keys name the columns (DuckDB's own JSON sample size). */
const KEY_SAMPLE = 20480;

/**
 * The lines of the file $1 as rows of one VARCHAR column `raw`, in order (row i is line i + 1 of a
 * freshly made table): DuckDB's CSV reader with no quote, no escape and U+0001 as the separator.
 * Only for a file that files/text-records.ts `checkText` passes (no U+0001, UTF-8, one line ending).
 */
export const LINES_SQL = `SELECT raw FROM read_csv($1, columns = {'raw': 'VARCHAR'}, header = false, delim = chr(1), quote = '', escape = '',
  auto_detect = false, strict_mode = false, max_line_size = ${MAX_RECORD_BYTES}, buffer_size = ${2 * MAX_RECORD_BYTES})`;

export interface SqlRunner {
  run(sql: string, params?: unknown[]): Promise<void>;
  query(sql: string, params?: unknown[]): Promise<Row[]>;
}

/**
 * Stage one JSON or JSON-lines file into `part`: one row per record with its file, line, raw text
 * as written (RAW_COLUMN) and each key's value as the JSON text of the record (lexical `json`:
 * scdkit types them, typing/infer.ts); records that cannot be read (not JSON, not an object, not
 * UTF-8, a text no engine can store) go to `rejects` with their raw text. Returns the columns, in
 * order of first appearance, and the number of records read (every non-blank line, or element).
 *
 * A JSON-lines file that checkText passes is split into lines by the engine (a line is a record;
 * row i of the freshly read table is line i + 1, as staging runs outside a transaction where
 * DuckDB keeps a read's order). Any other file, and one with a line that is not JSON (a
 * pretty-printed object, say), is normalized first (files/text-records.ts).
 */
export async function stageJsonFile(db: SqlRunner, file: InputFile, part: string, rejects: string, scratch: string, i: number): Promise<StagedJson> {
  const label = file.label ?? file.path;
  const plain = file.format === 'ndjson' ? checkText(file.path).plain : undefined;
  const lines = `_scd_lines_${i}`;
  if (plain) {
    // OR REPLACE: a small file's helper tables stay until the commit's end (duckdb-driver.ts
    // discardScratch), and a caller that stages twice before it finds them there.
    await db.run(`CREATE OR REPLACE TEMP TABLE ${q(lines)} AS ${LINES_SQL}`, [file.path]);
    const from = `SELECT CAST(rowid + 1 AS BIGINT) AS line, raw, CAST(NULL AS VARCHAR) AS reason FROM ${q(lines)}`;
    const staged = await stageRecords(db, from, label, part, !!file.numbered);
    if (staged.records >= LARGE_STAGE) await db.run(`DROP TABLE ${q(lines)}`);
    // A line that is not JSON may be part of a value that spans lines: the normalized form decides.
    if (!staged.malformed) return finish(db, part, rejects, staged, !!file.numbered);
    await db.run(`DROP TABLE ${q(part)}`);
  }
  const normalized = path.join(scratch, `records_${i}.ndjson`);
  const { oversized } = await normalizeJsonText(file.path, normalized);
  const from = `SELECT l AS line, r AS raw, e AS reason FROM read_json($1, columns = {'l': 'BIGINT', 'r': 'VARCHAR', 'e': 'VARCHAR'},
    format = 'newline_delimited', maximum_object_size = ${4 * MAX_RECORD_BYTES + 1024})`;
  const staged = await finish(db, part, rejects, await stageRecords(db, from, label, part, !!file.numbered, [normalized]), !!file.numbered);
  // A record over the limit is quarantined with its whole text, as a value (never read as JSON).
  for (const r of oversized) await db.run(`INSERT INTO ${q(rejects)} VALUES ($1, $2, $3, $4)`, [label, r.l, r.e, r.r]);
  return { ...staged, records: staged.records + oversized.length };
}

/** What a JSON file's staging read. */
export interface StagedJson {
  /** The keys, as the part's columns, in order of first appearance. */
  columns: string[];
  records: number;
  /** The part's columns that hold records (the keys' and scdkit's own), with their types. */
  table: ColumnInfo[];
  /**
   * The part still has its helper columns (a small file's: dropping them costs a statement each),
   * so it is copied into the staged table (its `table` columns), never renamed into it.
   */
  helpers: boolean;
}

interface Staged {
  columns: string[];
  records: number;
  rejected: number;
  malformed: number;
  /** Good records that may hold a number the JSON reader rounded (duckdb-exact-numbers.ts). */
  longNumbers: number;
}

/** The good records whose staged values lost a number's text (duckdb-exact-numbers.ts). */
const longCount = (columns: string[]) => `CAST(count(*) FILTER (WHERE ${REASON} IS NULL AND ${lostNumbers(columns)}) AS BIGINT) AS long`;

/** `from` gives (line, raw, reason); the part gets the good records' values, the rest is counted. */
async function stageRecords(db: SqlRunner, from: string, label: string, part: string, numbered: boolean, params: unknown[] = []): Promise<Staged> {
  const original = (key: string) => `json_extract_string(raw, ${sqlString(`$."${key}"`)})`;
  // A numbered copy's records carry where (and what) they were in the original file.
  const line = numbered ? `coalesce(TRY_CAST(${original(LINE_COLUMN)} AS BIGINT), line)` : 'line';
  const rawText = numbered ? `coalesce(${original(RAW_COLUMN)}, raw)` : 'raw';
  const checked = `SELECT line, raw, CASE WHEN reason IS NOT NULL THEN reason ${readReason('raw')} END AS ${REASON}
    FROM (${from}) r WHERE raw IS NOT NULL AND NOT ${BLANK('raw')}`;
  const columns = await sampleKeys(db, from, params, numbered);
  const known = columns.length ? `[${columns.map(sqlString).join(', ')}]` : `CAST([] AS VARCHAR[])`;
  const structure = sqlString(JSON.stringify(Object.fromEntries(columns.map((c) => [c, 'JSON']))));
  const values = columns.length ? columns.map((c) => `v.${q(c)} AS ${q(c)}`).join(', ') + ', ' : '';
  await db.run(
    `CREATE OR REPLACE TEMP TABLE ${q(part)} AS
     SELECT ${values}CAST($${params.length + 1} AS VARCHAR) AS ${q(FILE_COLUMN)}, line AS ${q(LINE_COLUMN)}, raw AS ${q(RAW_COLUMN)}, ${REASON}, ${EXTRA}
     FROM (SELECT ${line} AS line, ${rawText} AS raw, ${REASON},
             CASE WHEN ${REASON} IS NULL THEN ${columns.length ? `json_transform(${lastMembers('raw', 'keys', known)}, ${structure})` : 'NULL'} END AS v,
             CASE WHEN ${REASON} IS NULL THEN ${unknownKeys(numbered ? `list_filter(keys, k -> k NOT IN (${sqlString(LINE_COLUMN)}, ${sqlString(RAW_COLUMN)}))` : 'keys', known)} END AS ${EXTRA}
           FROM (SELECT *, CASE WHEN ${REASON} IS NULL THEN json_keys(raw) END AS keys FROM (${checked}) c) c) x`,
    [...params, label],
  );
  const counts = (
    await db.query(
      `SELECT CAST(count(*) AS BIGINT) AS records, CAST(count(${REASON}) AS BIGINT) AS rejected,
       CAST(count(*) FILTER (WHERE ${REASON} = 'malformed JSON') AS BIGINT) AS malformed, coalesce(bool_or(${EXTRA}), false) AS extra,
       ${longCount(columns)} FROM ${q(part)}`,
    )
  )[0]!;
  if (counts.extra) {
    // A key the sample did not see: the columns come from every record.
    await db.run(`DROP TABLE ${q(part)}`);
    const all = await allKeys(db, checked, params, numbered);
    return stageWithKeys(db, checked, all, label, part, params, line, rawText);
  }
  return { columns, records: Number(counts.records), rejected: Number(counts.rejected), malformed: Number(counts.malformed), longNumbers: Number(counts.long) };
}

async function stageWithKeys(db: SqlRunner, checked: string, columns: string[], label: string, part: string, params: unknown[], line: string, rawText: string): Promise<Staged> {
  const known = `[${columns.map(sqlString).join(', ')}]`;
  const structure = sqlString(JSON.stringify(Object.fromEntries(columns.map((c) => [c, 'JSON']))));
  const values = columns.map((c) => `v.${q(c)} AS ${q(c)}`).join(', ');
  await db.run(
    `CREATE OR REPLACE TEMP TABLE ${q(part)} AS
     SELECT ${values}, CAST($${params.length + 1} AS VARCHAR) AS ${q(FILE_COLUMN)}, line AS ${q(LINE_COLUMN)}, raw AS ${q(RAW_COLUMN)}, ${REASON}, false AS ${EXTRA}
     FROM (SELECT ${line} AS line, ${rawText} AS raw, ${REASON}, CASE WHEN ${REASON} IS NULL THEN json_transform(${lastMembers('raw', 'json_keys(raw)', known)}, ${structure}) END AS v
       FROM (${checked}) c) x`,
    [...params, label],
  );
  const counts = (
    await db.query(
      `SELECT CAST(count(*) AS BIGINT) AS records, CAST(count(${REASON}) AS BIGINT) AS rejected,
       CAST(count(*) FILTER (WHERE ${REASON} = 'malformed JSON') AS BIGINT) AS malformed, ${longCount(columns)} FROM ${q(part)}`,
    )
  )[0]!;
  return { columns, records: Number(counts.records), rejected: Number(counts.rejected), malformed: Number(counts.malformed), longNumbers: Number(counts.long) };
}

/**
 * A line of JSON whitespace only (space, tab, CR: a CRLF file's blank line keeps its CR) holds no
 * record. A regular expression, not `trim(raw, chars) = ''`: DuckDB's trim with a character list
 * copies every line, the match stops at a line's first other character
 * (docs/decisions/0027-duckdb-json-reading-takes-the-cheap-test-first.md).
 */
const BLANK = (raw: string) => `regexp_full_match(${raw}, '[ \\t\\r]*')`;

/**
 * A record's text for reading its values, where a member name that appears twice keeps its last
 * value, as JSON.parse does and PostgreSQL's jsonb and Spark's reader do (docs/TYPES.md; DuckDB's
 * reader keeps the first): such a record is written again with each name once, at its last place.
 * A record whose `keys` are the list `known` (distinct names) has no repeated name, which spares
 * the check for most records.
 */
function lastMembers(raw: string, keys: string, known: string): string {
  const once = `list_filter(list_zip(${keys}, json_extract(${raw}, '$.*')), (e, i) -> NOT list_contains(${keys}[i + 1:], e[1]))`;
  return `CASE WHEN ${keys} = ${known} OR len(list_distinct(${keys})) = len(${keys}) THEN ${raw}
    ELSE '{' || array_to_string(list_transform(${once}, e -> to_json(e[1]) || ':' || e[2]), ',') || '}' END`;
}

/**
 * Whether a record has a key the list `known` lacks. A file's writer puts the same keys in the same
 * order in every record, so most records' keys equal the list; list_has_all, which costs more
 * than the comparison, runs only for the others (docs/decisions/0027-duckdb-json-reading-takes-the-cheap-test-first.md).
 */
function unknownKeys(keys: string, known: string): string {
  return `CASE WHEN ${keys} = ${known} THEN false ELSE NOT list_has_all(${known}, ${keys}) END`;
}

/**
 * Move the part's unreadable records to `rejects`, leaving the good ones and their columns. A large
 * part's helper columns are dropped (DuckDB frees a dropped column at once, and the part becomes
 * the staged table by a rename); a small one keeps them (StagedJson.helpers).
 */
async function finish(db: SqlRunner, part: string, rejects: string, staged: Staged, numbered: boolean): Promise<StagedJson> {
  // A numbered copy's raw text is the original record's (a Debezium envelope), not the staged one.
  if (staged.longNumbers > 0 && !numbered) await restoreLongNumbers(db, part, staged.columns, REASON);
  if (staged.rejected > 0) {
    await db.run(`INSERT INTO ${q(rejects)} SELECT ${q(FILE_COLUMN)}, ${q(LINE_COLUMN)}, ${REASON}, ${q(RAW_COLUMN)} FROM ${q(part)} WHERE ${REASON} IS NOT NULL`);
    await db.run(`DELETE FROM ${q(part)} WHERE ${REASON} IS NOT NULL`);
  }
  const large = staged.records >= LARGE_STAGE;
  if (large) {
    await db.run(`ALTER TABLE ${q(part)} DROP COLUMN ${REASON}`);
    await db.run(`ALTER TABLE ${q(part)} DROP COLUMN ${EXTRA}`);
  }
  const table: ColumnInfo[] = [
    ...staged.columns.map((c) => ({ name: c, type: 'JSON' })),
    { name: FILE_COLUMN, type: 'VARCHAR' },
    { name: LINE_COLUMN, type: 'BIGINT' },
    { name: RAW_COLUMN, type: 'VARCHAR' },
  ];
  return { columns: staged.columns, records: staged.records, table, helpers: !large };
}

/**
 * Why a record's raw text cannot be a record, or nothing: malformed JSON, not an object, or a
 * string no engine stores as text (a NUL character, a UTF-16 surrogate without its pair). The
 * escapes are looked for with `contains` first: most records have no `\u` at all. Valid JSON
 * whose first character is `{` is an object: json_type (a second parse of the record) runs only
 * for the others (a record after blanks, an array, a scalar).
 */
function readReason(raw: string): string {
  return `WHEN NOT json_valid(${raw}) THEN 'malformed JSON'
    ELSE CASE WHEN ascii(${raw}) <> 123 AND json_type(${raw}) <> 'OBJECT' THEN 'not a JSON object'
      WHEN contains(${raw}, '\\u0000') AND regexp_matches(${raw}, '(^|[^\\\\])(\\\\\\\\)*\\\\u0000') THEN 'a NUL character (\\u0000) in a string'
      WHEN contains(${raw}, '\\u') AND regexp_matches(${raw}, '\\\\u[dD][89a-fA-F]')
        THEN CASE WHEN regexp_matches(regexp_replace(${raw}, '\\\\u[dD][89abAB][0-9a-fA-F]{2}\\\\u[dD][c-fC-F][0-9a-fA-F]{2}', '', 'g'), '\\\\u[dD][89a-fA-F][0-9a-fA-F]{2}')
          THEN 'a UTF-16 surrogate without its pair in a string' END
      END`;
}

/** The keys of the first records, in order of first appearance (line, then place in the record). */
/** The first lines' objects (any line the check would refuse is left out: it has no keys). */
async function sampleKeys(db: SqlRunner, from: string, params: unknown[], numbered: boolean): Promise<string[]> {
  const object = `CASE WHEN reason IS NULL AND json_valid(raw) THEN json_type(raw) = 'OBJECT' ELSE false END`;
  return keysOf(db, `SELECT line, raw FROM (${from}) f WHERE line <= ${KEY_SAMPLE} AND ${object}`, params, numbered);
}

async function allKeys(db: SqlRunner, checked: string, params: unknown[], numbered: boolean): Promise<string[]> {
  return keysOf(db, `SELECT line, raw FROM (${checked}) c WHERE ${REASON} IS NULL`, params, numbered);
}

async function keysOf(db: SqlRunner, records: string, params: unknown[], numbered: boolean): Promise<string[]> {
  const rows = await db.query(
    `SELECT k FROM (SELECT line, unnest(json_keys(raw)) AS k, generate_subscripts(json_keys(raw), 1) AS pos FROM (${records}) s)
     GROUP BY k ORDER BY min(line), arg_min(pos, line)`,
    params,
  );
  const keys = rows.map((r) => String(r.k)).filter((k) => !numbered || (k !== LINE_COLUMN && k !== RAW_COLUMN));
  checkSourceKeys(keys, duckdbDialect.nameKey, duckdbDialect.nameProblem);
  return keys;
}
