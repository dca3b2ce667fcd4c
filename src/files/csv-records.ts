import { isUtf8 } from 'node:buffer';
import { createWriteStream, readFileSync } from 'node:fs';
import { headerNames } from './csv-header.js';
import { end, write } from './streams.js';
import { visible } from './text-records.js';

/**
 * A CSV file (header first) read record by record in JavaScript, for the files an engine's reader
 * cannot read as written (invalid UTF-8, NUL bytes, lone-CR line endings; on PostgreSQL a line
 * `\.`) or whose records it cannot place on their lines (a quoted newline, a record with too many
 * or too few fields; on PostgreSQL a blank line). DuckDB and PostgreSQL both stage such a file
 * from it, so their quarantines agree. RFC 4180 quoting; a record ends at LF, CRLF or a lone CR
 * outside quotes; a blank line is no record.
 */
export interface CsvSplit {
  /** The header's column names (duplicates numbered like DuckDB's reader). */
  header: string[];
  good: number;
  bad: number;
}

/**
 * Split `file` into `goodOut` (headerless CSV, every field quoted, an unquoted empty field for
 * NULL, then two more fields: the record's first physical line and its raw text as written) and
 * `badOut` (NDJSON lines {line, reason, raw}: wrong number of fields, unclosed quote, invalid
 * UTF-8 — raw with its bytes shown as \xHH —, a NUL character). `nameKey` tells the engine's
 * equal column names (headerNames).
 */
export async function splitCsv(file: string, goodOut: string, badOut: string, nameKey?: (name: string) => string): Promise<CsvSplit> {
  const bytes = readFileSync(file);
  const good = createWriteStream(goodOut);
  const bad = createWriteStream(badOut);
  const out: CsvSplit = { header: [], good: 0, bad: 0 };
  let fields = -1;
  const reject = (line: number, reason: string, raw: string) => {
    out.bad++;
    return write(bad, JSON.stringify({ line, reason, raw }) + '\n');
  };
  for (const rec of records(bytes)) {
    const rawBytes = bytes.subarray(rec.start, rec.end);
    if (rawBytes.length === 0) continue;
    if (!isUtf8(rawBytes)) {
      if (fields < 0) fields = 0;
      await reject(rec.line, 'invalid UTF-8', visible(rawBytes).replaceAll('\0', '\\x00'));
      continue;
    }
    const raw = rawBytes.toString('utf8');
    if (fields < 0) {
      out.header = headerNames(
        rec.values.map((v) => (v === null ? '' : v.toString('utf8'))),
        nameKey,
      );
      fields = out.header.length;
      continue;
    }
    if (rawBytes.includes(0)) await reject(rec.line, 'a NUL character in a field', raw.replaceAll('\0', '\\x00'));
    else if (!rec.closed) await reject(rec.line, 'unterminated quoted field', raw);
    else if (rec.values.length !== fields) await reject(rec.line, `expected ${fields} fields, found ${rec.values.length}`, raw);
    else {
      out.good++;
      const cells = rec.values.map((v) => (v === null ? '' : quote(v.toString('utf8'))));
      await write(good, `${[...cells, String(rec.line), quote(raw)].join(',')}\n`);
    }
  }
  await Promise.all([end(good), end(bad)]);
  return out;
}

const quote = (s: string) => `"${s.replace(/"/g, '""')}"`;

interface CsvRecord {
  /** The physical line it starts on, from 1. */
  line: number;
  start: number;
  /** Where it ends (before its line ending). */
  end: number;
  /** Its fields: bytes, or null for an unquoted empty field. */
  values: Array<Buffer | null>;
  /** False when a quote opened in it is never closed. */
  closed: boolean;
}

function* records(bytes: Buffer): Generator<CsvRecord> {
  let start = bytes[0] === 0xef && bytes[1] === 0xbb && bytes[2] === 0xbf ? 3 : 0; // a UTF-8 BOM
  let line = 1;
  let i = start;
  while (start < bytes.length) {
    const values: Array<Buffer | null> = [];
    const first = line;
    let closed = true;
    let field: number[] | undefined;
    let fieldStart = i;
    let quoted = false;
    let end = -1;
    for (;;) {
      const b = i < bytes.length ? bytes[i] : -1;
      if (quoted) {
        if (b === -1) {
          closed = false;
          end = i;
          break;
        }
        if (b === 0x22) {
          if (bytes[i + 1] === 0x22) {
            field!.push(0x22);
            i += 2;
          } else {
            quoted = false;
            i++;
          }
          continue;
        }
        if (b === 0x0a || (b === 0x0d && bytes[i + 1] !== 0x0a)) line++;
        field!.push(b!);
        i++;
        continue;
      }
      if (b === 0x2c || b === 0x0a || b === 0x0d || b === -1) {
        values.push(field ? Buffer.from(field) : i === fieldStart ? null : bytes.subarray(fieldStart, i));
        field = undefined;
        if (b === 0x2c) {
          i++;
          fieldStart = i;
          continue;
        }
        end = i;
        break;
      }
      if (b === 0x22 && i === fieldStart && !field) {
        field = [];
        quoted = true;
        i++;
        continue;
      }
      if (field) field.push(b!);
      i++;
    }
    const nextStart = end < bytes.length ? (bytes[end] === 0x0d && bytes[end + 1] === 0x0a ? end + 2 : end + 1) : end;
    // A record of one empty field is a blank line.
    yield { line: first, start, end, values: end === start ? [] : values, closed };
    if (end < bytes.length) line++;
    start = nextStart;
    i = nextStart;
  }
}
