import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { firstLine, QueryError } from '../../errors.js';
import { headerNames } from '../../files/csv-header.js';
import { splitCsv } from '../../files/csv-records.js';
import { JSON_NUMBER } from '../../files/json-number.js';
import { checkSourceKeys } from '../../files/source-keys.js';
import type { ColumnInfo, InputFile, Lexical, StagedFiles } from '../driver.js';
import { FILE_COLUMN, LINE_COLUMN, RAW_COLUMN } from '../driver.js';
import { postgresDialect as d } from './postgres-dialect.js';
import { DISK_FULL, sqlState } from './postgres-errors.js';
import { jsonNumberAsWritten } from './postgres-exponent-numbers.js';
import { keepNulVisible, type StageHost, stageJsonFile } from './postgres-json-stage.js';
import { copyLines, copyPlain } from './postgres-lines.js';
import { parquetToCsv } from './postgres-parquet.js';
import { systemColumnClash } from './postgres-system-columns.js';

export type { StageHost };

const q = d.quote;

/**
 * Load input files into a temporary table `table` and unreadable records into `rejects` (the
 * Driver's contract, as the DuckDB driver does it): every record with its file, line and raw text
 * as written; JSON values as jsonb and CSV values as text, typed afterwards by scdkit (typing/);
 * Parquet columns with their own types. Files are streamed into the engine with COPY; the work on
 * records is set-based SQL.
 */
export async function stageFiles(host: StageHost, files: InputFile[], table: string, rejects: string): Promise<StagedFiles> {
  await host.run(`CREATE TEMP TABLE ${q(rejects)} (${q(FILE_COLUMN)} text, ${q(LINE_COLUMN)} bigint, reason text, raw text)`);
  const scratch = mkdtempSync(path.join(tmpdir(), 'scdkit-pgstage-'));
  const parts: Part[] = [];
  const lexical = new Map<string, Lexical>();
  let records = 0;
  // One file's part is the staged table itself (no rename); several are unioned into it.
  const single = files.length === 1;
  try {
    for (const [i, file] of files.entries()) {
      if (statSync(file.path).size === 0) continue;
      const part = single ? table : `_scd_part_${i}`;
      let staged: { records: number; columns?: string[]; table?: ColumnInfo[] } | undefined;
      try {
        if (file.format === 'ndjson' || file.format === 'json') {
          staged = await stageJsonFile(host, file, part, rejects, scratch, i);
          for (const c of staged.columns!) lexical.set(c, 'json');
        } else {
          staged = file.format === 'csv' ? await stageCsv(host, file, part, rejects, scratch, i) : await stageParquet(host, file, part, rejects, scratch, i);
          if (file.format === 'csv' && staged.columns) for (const c of staged.columns) if (!lexical.has(c)) lexical.set(c, 'text');
        }
      } catch (e) {
        // A source column named like a system column (ctid, xmin, …) is the source's to rename.
        throw systemColumnClash(e, file.path) ?? e;
      }
      records += staged.records;
      if (!staged.columns) continue;
      // A JSON reader knows its part's columns and types; the others are looked up.
      const all = staged.table ?? (await host.columns(part)) ?? [];
      parts.push({
        name: part,
        all,
        columns: all.filter((c) => c.name !== FILE_COLUMN && c.name !== LINE_COLUMN && c.name !== RAW_COLUMN),
        text: file.format === 'csv',
        raw: all.some((c) => c.name === RAW_COLUMN),
      });
    }
    if (!single || !parts.length) {
      await host.run(`CREATE TEMP TABLE ${q(table)} AS ${unionByName(parts, lexical)}`);
      for (const p of parts) await host.run(`DROP TABLE ${q(p.name)}`);
    }
  } finally {
    rmSync(scratch, { recursive: true, force: true });
  }
  return { lexical, records, columns: single && parts.length ? parts[0]!.all : undefined };
}

/** One file's staged table. */
interface Part {
  name: string;
  /** Every column of the part, scdkit's own included. */
  all: ColumnInfo[];
  /** Its source columns. */
  columns: ColumnInfo[];
  /** A CSV's part: its values are text as written. */
  text: boolean;
  /** It has RAW_COLUMN. */
  raw: boolean;
}

/** JSON number syntax (no leading zeros, no sign but minus). */

/**
 * UNION ALL BY NAME: columns in order of first appearance. A column one part holds as JSON is JSON
 * in all (a CSV's text that spells a JSON number or boolean is that value, other text a JSON
 * string; a typed value its JSON); other differing types meet in a common one, else text.
 */
function unionByName(parts: Part[], lexical: Map<string, Lexical>): string {
  if (!parts.length) return `SELECT CAST(NULL AS text) AS ${q(FILE_COLUMN)}, CAST(NULL AS bigint) AS ${q(LINE_COLUMN)}, CAST(NULL AS text) AS ${q(RAW_COLUMN)} WHERE false`;
  const all: ColumnInfo[] = [];
  for (const p of parts)
    for (const c of p.columns) {
      const had = all.find((a) => a.name === c.name);
      if (!had) all.push({ name: c.name, type: lexical.get(c.name) === 'json' ? 'jsonb' : c.type });
      else if (!d.sameType(had.type, c.type)) had.type = lexical.get(c.name) === 'json' ? 'jsonb' : (d.commonType(had.type, c.type) ?? 'text');
    }
  return parts
    .map((p) => {
      const sel = all.map((c) => {
        const mine = p.columns.find((m) => m.name === c.name);
        const v = q(c.name);
        if (!mine) return `CAST(NULL AS ${c.type}) AS ${v}`;
        if (d.sameType(mine.type, c.type)) return v;
        if (d.sameType(c.type, 'jsonb'))
          return p.text
            ? `CASE WHEN ${v} ~ '^${JSON_NUMBER}$' THEN ${jsonNumberAsWritten(v)} WHEN ${v} IN ('true', 'false') THEN CAST(${v} AS jsonb) ELSE to_jsonb(${v}) END AS ${v}`
            : `to_jsonb(${v}) AS ${v}`;
        return `CAST(${v} AS ${c.type}) AS ${v}`;
      });
      return `SELECT ${[...sel, q(FILE_COLUMN), q(LINE_COLUMN), p.raw ? q(RAW_COLUMN) : `CAST(NULL AS text) AS ${q(RAW_COLUMN)}`].join(', ')} FROM ${q(p.name)}`;
    })
    .join(' UNION ALL ');
}

/**
 * CSV: every value the text as written (an empty field is NULL), each record with its line and its
 * raw text. A file COPY reads as written (copyPlain) whose records are each one line is read by
 * COPY twice — as CSV and as lines — and the two joined by line; any other file is split in
 * JavaScript first (files/csv-records.ts), its bad records set apart (wrong field count, unclosed
 * quote, invalid UTF-8, a NUL).
 */
async function stageCsv(host: StageHost, file: InputFile, part: string, rejects: string, scratch: string, i: number): Promise<{ records: number; columns?: string[] }> {
  const label = file.label ?? file.path;
  const rows = `${part}_csv`;
  const lines = `${part}_lines`;
  const sourceCols = (header: string[]) => header.map((_, k) => q(`c${k}`));
  const create = async (header: string[], extra: string) => {
    await host.run(`DROP TABLE IF EXISTS ${q(rows)}`);
    await host.run(`CREATE TEMP TABLE ${q(rows)} (${[...sourceCols(header).map((c) => `${c} text`), extra].join(', ')})`);
  };
  const nulls = (header: string[]) => (header.length ? `, FORCE_NULL (${sourceCols(header).join(', ')})` : '');
  if (copyPlain(file.path)) {
    await copyLines(host, file.path, lines);
    const first = (await host.query(`SELECT raw FROM ${q(lines)} WHERE n = 1`))[0]?.raw;
    const header = first === undefined || first === null ? [] : headerOf(String(first));
    if (header.length) {
      await create(header, `n bigserial`);
      const failed = await host.attempt(() =>
        host.copyFrom(`COPY ${q(rows)} (${sourceCols(header).join(', ')}) FROM STDIN WITH (FORMAT csv, HEADER true${nulls(header)})`, { file: file.path }),
      );
      // Each record on its own line, no blank line: record n is line n + 1.
      const placed =
        !failed &&
        Number(
          (
            await host.query(`SELECT (SELECT count(*) FROM ${q(rows)}) - (SELECT count(*) FROM ${q(lines)} WHERE n > 1 AND raw IS NOT NULL) AS d,
          (SELECT count(*) FROM ${q(lines)} WHERE n > 1 AND raw IS NULL) AS blank`)
          ).map((r) => Math.abs(Number(r.d)) + Number(r.blank))[0],
        ) === 0;
      if (placed) {
        checkSourceKeys(header, d.nameKey, d.nameProblem);
        await host.run(
          `CREATE TEMP TABLE ${q(part)} AS SELECT ${[
            ...header.map((h, k) => `r.${q(`c${k}`)} AS ${q(h)}`),
            `CAST($1 AS text) AS ${q(FILE_COLUMN)}`,
            `l.n AS ${q(LINE_COLUMN)}`,
            `l.raw AS ${q(RAW_COLUMN)}`,
          ].join(', ')} FROM ${q(rows)} r JOIN ${q(lines)} l ON l.n = r.n + 1`,
          [label],
        );
        const n = Number((await host.query(`SELECT count(*) AS n FROM ${q(rows)}`))[0]!.n);
        await host.run(`DROP TABLE ${q(rows)}`);
        await host.run(`DROP TABLE ${q(lines)}`);
        return { records: n, columns: header };
      }
    }
    await host.run(`DROP TABLE IF EXISTS ${q(lines)}`);
  }
  const good = path.join(scratch, `good_${i}.csv`);
  const bad = path.join(scratch, `bad_${i}.ndjson`);
  const split = await splitCsv(file.path, good, bad);
  await rejectLines(host, bad, rejects, label);
  if (!split.header.length) return { records: split.bad };
  checkSourceKeys(split.header, d.nameKey, d.nameProblem);
  await create(split.header, `"__scd_l" bigint, "__scd_r" text`);
  await host.copyFrom(`COPY ${q(rows)} FROM STDIN WITH (FORMAT csv${nulls(split.header)})`, { file: good });
  await host.run(
    `CREATE TEMP TABLE ${q(part)} AS SELECT ${[
      ...split.header.map((h, k) => `${q(`c${k}`)} AS ${q(h)}`),
      `CAST($1 AS text) AS ${q(FILE_COLUMN)}`,
      `"__scd_l" AS ${q(LINE_COLUMN)}`,
      `"__scd_r" AS ${q(RAW_COLUMN)}`,
    ].join(', ')} FROM ${q(rows)}`,
    [label],
  );
  await host.run(`DROP TABLE ${q(rows)}`);
  return { records: split.good + split.bad, columns: split.header };
}

/** The column names of a CSV header line (RFC 4180 quoting), duplicates numbered like DuckDB. */
function headerOf(line: string): string[] {
  const text = line.replace(/^\uFEFF/, '');
  if (text.trim() === '') return [];
  const names: string[] = [];
  let cur = '';
  let quoted = false;
  for (let i = 0; i < text.length; i++) {
    const ch = text[i]!;
    if (quoted) {
      if (ch === '"' && text[i + 1] === '"') {
        cur += '"';
        i++;
      } else if (ch === '"') quoted = false;
      else cur += ch;
    } else if (ch === '"') quoted = true;
    else if (ch === ',') {
      names.push(cur);
      cur = '';
    } else cur += ch;
  }
  // An unclosed quote: the header spans lines, which only the JavaScript reader places.
  if (quoted) return [];
  names.push(cur);
  return headerNames(names);
}

/**
 * Parquet has no reader in PostgreSQL: DuckDB writes its rows as CSV (postgres-parquet.ts), COPY
 * loads them as text and each column is cast to its Parquet type. A file that is not Parquet is one
 * rejected record (its path and the reason); the other files apply.
 */
async function stageParquet(host: StageHost, file: InputFile, part: string, rejects: string, scratch: string, i: number): Promise<{ records: number; columns?: string[] }> {
  const label = file.label ?? file.path;
  const csv = path.join(scratch, `parquet_${i}.csv`);
  let cols: ColumnInfo[];
  try {
    cols = await parquetToCsv(file.path, csv);
  } catch (e) {
    await host.run(`INSERT INTO ${q(rejects)} VALUES ($1, NULL, $2, $3)`, [label, unreadableReason(file, e), label]);
    return { records: 1 };
  }
  const raw = `_scd_raw_${i}`;
  await host.run(`DROP TABLE IF EXISTS ${q(raw)}`);
  await host.run(`CREATE TEMP TABLE ${q(raw)} (${cols.map((c) => `${q(c.name)} text`).join(', ')}${cols.length ? ', ' : ''}"__scd_n" bigserial)`);
  await host.copyFrom(`COPY ${q(raw)} (${cols.map((c) => q(c.name)).join(', ')}) FROM STDIN WITH (FORMAT csv)`, { file: csv });
  await host.run(
    `CREATE TEMP TABLE ${q(part)} AS SELECT ${cols.map((c) => `${c.type === 'text' ? q(c.name) : `CAST(${q(c.name)} AS ${c.type})`} AS ${q(c.name)}`).join(', ')}${cols.length ? ', ' : ''}
     CAST($1 AS text) AS ${q(FILE_COLUMN)}, "__scd_n" AS ${q(LINE_COLUMN)} FROM ${q(raw)}`,
    [label],
  );
  await host.run(`DROP TABLE ${q(raw)}`);
  return { records: Number((await host.query(`SELECT count(*) AS n FROM ${q(part)}`))[0]!.n), columns: cols.map((c) => c.name) };
}

/**
 * Why a reader refused a whole file, in a line (that file becomes one quarantined record). A full
 * disk is no fault of the file and a source column PostgreSQL reserves is the source's: both are
 * thrown as they are (plan/disk-full.ts, postgres-system-columns.ts).
 */
function unreadableReason(file: InputFile, e: unknown): string {
  if (sqlState(e) === DISK_FULL) throw e;
  const clash = systemColumnClash(e, file.path);
  if (clash) throw clash;
  const msg = e instanceof QueryError ? e.reason : e instanceof Error ? firstLine(e.message) : String(e);
  return `the file cannot be read as ${file.format}: ${msg.replace(/^[A-Za-z ]+Error: /, '')}`;
}

/** Rejected records written as NDJSON {line, reason, raw} → the rejects table, every field as text. */
export async function rejectLines(host: StageHost, bad: string, rejects: string, label: string): Promise<void> {
  if (statSync(bad).size === 0) return;
  const badLines = '_scd_bad_lines';
  keepNulVisible(bad);
  await copyLines(host, bad, badLines);
  await host.run(
    `INSERT INTO ${q(rejects)} SELECT $1, CAST(j->>'line' AS bigint), j->>'reason', j->>'raw' FROM (SELECT CAST(raw AS json) AS j FROM ${q(badLines)} WHERE raw IS NOT NULL) b`,
    [label],
  );
  await host.run(`DROP TABLE ${q(badLines)}`);
}
