import { createWriteStream } from 'node:fs';
import path from 'node:path';
import type { ColumnInfo, Driver } from '../dialects/driver.js';
import { ScdError } from '../errors.js';
import { exactNumber, mayHoldInexactNumber } from '../files/json-number.js';
import { members, NON_FINITE, quoteNonFinite, scanDocument, textOf } from '../files/json-text.js';

export type OutputFormat = 'ndjson' | 'csv' | 'parquet';

export interface OutputOptions {
  format?: OutputFormat;
  /** A file path; stdout when absent (not for parquet). */
  out?: string;
  /** Where to write when `out` is absent (default: process.stdout). */
  stdout?: NodeJS.WritableStream;
}

/** Rows to read: columns of a table or subquery, filtered and ordered in the engine. */
export interface RowQuery {
  columns: ColumnInfo[];
  from: string;
  where?: string;
  orderBy?: string[];
  params?: unknown[];
}

export function selectOf(driver: Driver, query: RowQuery, projection?: string): string {
  const q = driver.dialect.quote;
  const proj = projection ?? query.columns.map((c) => q(c.name)).join(', ');
  return `SELECT ${proj} FROM ${query.from}${query.where ? ` WHERE ${query.where}` : ''}${query.orderBy?.length ? ` ORDER BY ${query.orderBy.join(', ')}` : ''}`;
}

function jsonSelect(driver: Driver, query: RowQuery): string {
  const d = driver.dialect;
  return selectOf(driver, query, d.jsonObject(query.columns.map((c) => [c.name, d.quote(c.name), c.type])));
}

/**
 * Stream rows as JavaScript objects, each value exactly what the engine holds (docs/QUERYING.md
 * "Values as read"): a number a JS number names exactly is that number (-0 included); any other
 * (an integer beyond 2^53, a decimal of more digits than a double keeps) is its exact text; a
 * double's ±Infinity and NaN are the JS numbers; dates and timestamps ISO-8601 text.
 */
export async function eachRow(driver: Driver, query: RowQuery, onRow: (row: Record<string, unknown>) => void | Promise<void>): Promise<void> {
  const doubles = query.columns.filter((c) => isDoubleType(c.type)).map((c) => c.name);
  await driver.streamText(jsonSelect(driver, query), query.params ?? [], (text) => onRow(parseRow(quoteNonFinite(text), doubles)));
}

/** A row's JSON object (valid JSON) as exact values; `doubles`: the columns whose "Infinity", "-Infinity", "NaN" are numbers. */
function parseRow(json: string, doubles: string[]): Record<string, unknown> {
  const row = mayHoldInexactNumber(json) ? exactObject(json) : (JSON.parse(json) as Record<string, unknown>);
  for (const name of doubles) {
    const v = row[name];
    if (typeof v === 'string' && (NON_FINITE as readonly string[]).includes(v)) row[name] = Number(v);
  }
  return row;
}

/**
 * A struct's JSON text as the engine wrote it, kept (not enumerable) on the object read from it:
 * an exact number inside it is a string in JavaScript, and would be written back quoted.
 */
const STRUCT_TEXT = Symbol('struct JSON text');

/** An object's members, each number read exactly (files/json-number.ts exactNumber). */
function exactObject(json: string): Record<string, unknown> {
  const doc = scanDocument(json);
  const row: Record<string, unknown> = {};
  for (const m of members(json, doc)) {
    const text = textOf(json, m.value);
    if (m.value.kind === 'object') {
      row[m.name] = exactObject(text);
      Object.defineProperty(row[m.name], STRUCT_TEXT, { value: text, enumerable: false });
    } else row[m.name] = m.value.kind === 'number' ? exactNumber(text) : JSON.parse(text);
  }
  return row;
}

/** Whether a column's type is a binary float (the one kind that holds ±Infinity and NaN). */
function isDoubleType(type: string): boolean {
  return /^\s*(double|double precision|float|float4|float8|real)\s*$/i.test(type);
}

/**
 * A value as read (eachRow) as the text a person reads (CSV, the table, the web pages), naming
 * exactly what the engine holds: a number as JavaScript prints it (`-0` keeps its sign), an exact
 * number's text as it is, `Infinity`, `-Infinity`, `NaN`; a struct or JSON value as JSON.
 */
export function valueText(v: unknown): string {
  if (v === null || v === undefined) return '';
  if (typeof v === 'number') return Object.is(v, -0) ? '-0' : String(v);
  if (typeof v === 'object') return (v as { [STRUCT_TEXT]?: string })[STRUCT_TEXT] ?? JSON.stringify(v);
  return String(v);
}

export async function readRows(driver: Driver, query: RowQuery): Promise<Array<Record<string, unknown>>> {
  const rows: Array<Record<string, unknown>> = [];
  await eachRow(driver, query, (r) => {
    rows.push(r);
  });
  return rows;
}

/**
 * Write rows in one of the output formats. NDJSON: numbers as JSON numbers as the engine writes
 * them (exact), a double's ±Infinity and NaN as the strings "Infinity", "-Infinity", "NaN", text
 * as strings, dates and timestamps as ISO-8601, nulls as null (SEMANTICS §7). CSV: each value's
 * valueText. Returns the number of rows written
 * (-1 when the engine wrote the file itself).
 */
export async function writeRows(driver: Driver, query: RowQuery, options: OutputOptions): Promise<number> {
  const format = options.format ?? 'ndjson';
  if (format === 'parquet' && !options.out)
    throw new ScdError('USAGE', 'parquet is written to a file, not to a pipe or a terminal', { fix: 'add --out FILE.parquet, or use --format csv or ndjson for a pipe' });
  // Parquet only is written by the engine: CSV, to a file or stdout, is the same text (ISO-8601
  // dates and timestamps, as NDJSON), never the engine's own CSV spelling of a value.
  if (format === 'parquet') {
    // The engine writes the file; a parameterised query is materialised first (COPY takes none).
    let select = selectOf(driver, query);
    if (query.params?.length) {
      const q = driver.dialect.quote;
      await driver.run(`DROP TABLE IF EXISTS ${q('_scd_out')}`);
      await driver.run(driver.dialect.scratch('_scd_out', `${select}`), query.params);
      select = `SELECT * FROM ${q('_scd_out')}`;
    }
    await driver.copyToFile(select, 'parquet', path.resolve(options.out!));
    return -1;
  }
  const file = options.out ? createWriteStream(path.resolve(options.out)) : undefined;
  const out: NodeJS.WritableStream = file ?? options.stdout ?? process.stdout;
  const write = (text: string) =>
    new Promise<void>((resolve, reject) => {
      if (out.write(text, (err) => (err ? reject(err) : undefined))) resolve();
      else out.once('drain', () => resolve());
    });
  let n = 0;
  try {
    if (format === 'csv') await write(query.columns.map((c) => csvField(c.name)).join(',') + '\n');
    await driver.streamText(jsonSelect(driver, query), query.params ?? [], async (text) => {
      n++;
      if (format === 'csv') {
        const obj = parseRow(quoteNonFinite(text), []);
        await write(query.columns.map((c) => csvField(obj[c.name])).join(',') + '\n');
      } else await write(quoteNonFinite(text) + '\n');
    });
  } catch (e) {
    // The file cut short is ended and closed before the error goes on: nothing opens or writes it
    // afterwards (a write in flight finishes first; an error of its own is the lesser one).
    if (file && !file.closed)
      await new Promise<void>((resolve) => {
        file.on('error', () => undefined).once('close', () => resolve());
        file.end();
      });
    throw e;
  }
  if (file) await new Promise<void>((resolve, reject) => file.end((err?: Error | null) => (err ? reject(err) : resolve())));
  return n;
}

/** A CSV field: null is an empty field, the empty string a quoted one (`""`), as COPY writes them. */
function csvField(v: unknown): string {
  if (v === '') return '""';
  const s = valueText(v);
  return /[",\n\r]/.test(s) ? `"${s.replace(/"/g, '""')}"` : s;
}
