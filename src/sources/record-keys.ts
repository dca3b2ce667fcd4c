/**
 * The keys of a staged JSON record in the order written: a new target's columns follow its first
 * applied record (plan/apply.ts orderByFirstApplied; docs/decisions/
 * 0008-a-new-targets-column-order.md). Only JSON records order their own keys: a CSV header or a Parquet schema gives one
 * order for a whole file, and a Debezium row's columns come from its envelope's `after`.
 */
import type { Driver, InputFile } from '../dialects/driver.js';
import { FILE_COLUMN, LINE_COLUMN, RAW_COLUMN } from '../dialects/driver.js';
import { JsonSyntaxError, scanDocument } from '../files/json-text.js';
import { TMP } from '../store/names.js';

/** The first (by file, then line) of `firsts` in `files`' order, as its keys; undefined if it is not a JSON record. */
export async function firstRecordKeys(driver: Driver, files: InputFile[], firsts: Array<{ file: string; line: number }>): Promise<string[] | undefined> {
  const order = files.map((f) => f.label ?? f.path);
  const rank = (file: string) => {
    const at = order.indexOf(file);
    return at < 0 ? order.length : at;
  };
  const first = [...firsts].sort((a, b) => rank(a.file) - rank(b.file) || a.line - b.line)[0];
  const format = files.find((f) => (f.label ?? f.path) === first?.file)?.format;
  if (!first || (format !== 'ndjson' && format !== 'json')) return undefined;
  const q = driver.dialect.quote;
  const rows = await driver.query(`SELECT ${q(RAW_COLUMN)} AS raw FROM ${q(TMP.stage)} WHERE ${q(FILE_COLUMN)} = $1 AND ${q(LINE_COLUMN)} = $2`, [first.file, first.line]);
  const raw = rows[0]?.raw;
  if (typeof raw !== 'string') return undefined;
  try {
    const doc = scanDocument(raw);
    return doc.members?.map((m) => m.name);
  } catch (e) {
    // A staged record was read as JSON by the engine: one this scanner refuses keeps the order.
    if (e instanceof JsonSyntaxError) return undefined;
    throw e;
  }
}
