import { createWriteStream } from 'node:fs';
import { LINE_COLUMN } from '../dialects/driver.js';
import { decodeLine, eachLine, end, write } from './lines.js';

export { MAX_RECORD_BYTES } from './lines.js';

export interface LineScan {
  /** Records that parsed, one JSON object a line, each with its line number in LINE_COLUMN. */
  good: number;
  /** Lines that could not become records, written as {line, reason, raw}. */
  bad: number;
}

/**
 * Split an NDJSON file into its parseable records (with their line numbers) and the lines that
 * cannot become records (invalid UTF-8, malformed JSON, not an object, too large). Used only when
 * the engine's own reader refused the file, so that one bad line costs one quarantined record,
 * not the whole commit. Streams: memory stays bounded by the longest line.
 */
export async function scanLines(file: string, goodOut: string, badOut: string): Promise<LineScan> {
  const good = createWriteStream(goodOut);
  const bad = createWriteStream(badOut);
  const counts = { good: 0, bad: 0 };
  await eachLine(file, (bytes, line) => {
    const reject = (reason: string, raw: string) => {
      counts.bad++;
      return write(bad, JSON.stringify({ line, reason, raw }) + '\n');
    };
    const decoded = decodeLine(bytes);
    if ('reason' in decoded) return reject(decoded.reason, decoded.raw);
    const text = decoded.text;
    if (text.trim() === '') return;
    let value: unknown;
    try {
      value = JSON.parse(text);
    } catch (e) {
      return reject(`malformed JSON: ${(e as Error).message}`, text);
    }
    if (value === null) return reject('a null record (Kafka tombstone?)', text);
    if (typeof value !== 'object' || Array.isArray(value)) return reject('not a JSON object', text);
    counts.good++;
    return write(good, JSON.stringify({ ...(value as object), [LINE_COLUMN]: line }) + '\n');
  });
  await Promise.all([end(good), end(bad)]);
  return counts;
}
