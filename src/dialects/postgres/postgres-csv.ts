import { createReadStream, createWriteStream } from 'node:fs';
import { end, write } from '../../sources/lines.js';

/**
 * CSV records that PostgreSQL's COPY refuses (a row with too many or too few fields, an unclosed
 * quote) would refuse the whole file; like DuckDB's rejects, they are set apart instead. Used only
 * after COPY refused a file. Streams: memory stays bounded by the longest record.
 */
export interface CsvSplit {
  good: number;
  bad: number;
}

/**
 * Split a CSV file (header first) into `goodOut` (headerless; each record gets one more field: its
 * physical line number) and `badOut` (NDJSON lines {line, reason, raw}).
 */
export async function splitCsv(file: string, fields: number, goodOut: string, badOut: string): Promise<CsvSplit> {
  const good = createWriteStream(goodOut);
  const bad = createWriteStream(badOut);
  const counts: CsvSplit = { good: 0, bad: 0 };
  let line = 1;
  let startLine = 1;
  let record = '';
  let quoted = false;
  let count = 1;
  let header = true;
  const finish = async (closedQuote: boolean) => {
    const text = record.replace(/\r$/, '');
    const first = header;
    header = false;
    if (!first && text !== '') {
      if (!closedQuote) {
        counts.bad++;
        await write(bad, JSON.stringify({ line: startLine, reason: 'unterminated quoted field', raw: text }) + '\n');
      } else if (count !== fields) {
        counts.bad++;
        await write(bad, JSON.stringify({ line: startLine, reason: `expected ${fields} fields, found ${count}`, raw: text }) + '\n');
      } else {
        counts.good++;
        await write(good, `${text},${startLine}\n`);
      }
    }
    record = '';
    count = 1;
  };
  for await (const chunk of createReadStream(file, { encoding: 'utf8' }) as AsyncIterable<string>) {
    let from = 0;
    for (let i = 0; i < chunk.length; i++) {
      const ch = chunk[i];
      if (ch === '"') quoted = !quoted;
      else if (ch === ',' && !quoted) count++;
      else if (ch === '\n') {
        if (!quoted) {
          record += chunk.slice(from, i);
          from = i + 1;
          await finish(true);
          startLine = line + 1;
        }
        line++;
      }
    }
    record += chunk.slice(from);
  }
  if (record !== '' || quoted) await finish(!quoted);
  await Promise.all([end(good), end(bad)]);
  return counts;
}
