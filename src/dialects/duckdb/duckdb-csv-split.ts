import path from 'node:path';
import { splitCsv } from '../../files/csv-records.js';
import { MAX_RECORD_BYTES } from '../../files/record-limit.js';
import { checkSourceKeys } from '../../files/source-keys.js';
import { FILE_COLUMN, type InputFile, LINE_COLUMN, RAW_COLUMN } from '../driver.js';
import { duckdbDialect } from './duckdb-dialect.js';
import type { SqlRunner } from './duckdb-json-stage.js';

const q = duckdbDialect.quote;

/** What staging a split CSV needs of the driver: statements, and its rejects reader. */
export interface CsvSplitHost extends SqlRunner {
  appendRejects(file: string, label: string, rejects: string): Promise<void>;
}

/**
 * Stage a CSV that DuckDB's reader cannot place record by record on its lines (a quoted value over
 * several lines, a record it rejects, invalid UTF-8, a line ending it does not split on) the way
 * PostgreSQL stages it: split byte-wise in JavaScript (files/csv-records.ts), each good record
 * with its own first line and its own raw text, each bad one in `rejects` with its own line, raw
 * text (invalid bytes as \xHH) and reason. So a quarantined record never carries another record's
 * text or line, and both engines quarantine the same records alike. Returns false when the file
 * has no header (no part is made; its records are all in `rejects`).
 */
export async function stageSplitCsv(db: CsvSplitHost, file: InputFile, part: string, rejects: string, scratch: string, i: number): Promise<boolean> {
  const label = file.label ?? file.path;
  const good = path.join(scratch, `csv_good_${i}.csv`);
  const bad = path.join(scratch, `csv_bad_${i}.ndjson`);
  // Header names made unique as DuckDB's reader makes them (ignoring case).
  const split = await splitCsv(file.path, good, bad, duckdbDialect.nameKey);
  // The bad records go in last: a good file the engine refuses leaves none behind (the whole file
  // is then one rejected record, duckdb-driver.ts stageOne).
  if (!split.header.length) {
    if (split.bad) await db.appendRejects(bad, label, rejects);
    return false;
  }
  checkSourceKeys(split.header, duckdbDialect.nameKey, duckdbDialect.nameProblem);
  // The good file: the record's fields (all quoted, NULL an unquoted empty field), its line, its raw text.
  const fields = split.header.map((_, k) => `c${k}`);
  await db.run(
    `CREATE TEMP TABLE ${q(part)} (${[...split.header.map((h) => `${q(h)} VARCHAR`), `${q(FILE_COLUMN)} VARCHAR`, `${q(LINE_COLUMN)} BIGINT`, `${q(RAW_COLUMN)} VARCHAR`].join(', ')})`,
  );
  if (split.good) await insertGood(db, good, label, part, fields);
  if (split.bad) await db.appendRejects(bad, label, rejects);
  return true;
}

/**
 * The good records, as splitCsv wrote them: each ends at a LF (a value's own line breaks, CRLF or
 * CR among them, are inside its quotes, where the reader must not take them for a line ending).
 */
async function insertGood(db: SqlRunner, good: string, label: string, part: string, fields: string[]): Promise<void> {
  const columns = [...fields.map((f) => `'${f}': 'VARCHAR'`), `'l': 'BIGINT'`, `'r': 'VARCHAR'`].join(', ');
  await db.run(
    `INSERT INTO ${q(part)} SELECT ${[...fields.map((f) => q(f)), '$2::VARCHAR', 'l', 'r'].join(', ')}
     FROM read_csv($1, columns = {${columns}}, header = false, delim = ',', quote = '"', escape = '"', auto_detect = false,
       new_line = '\\n', max_line_size = ${3 * MAX_RECORD_BYTES}, buffer_size = ${4 * MAX_RECORD_BYTES})`,
    [good, label],
  );
}
