import { createReadStream, createWriteStream, type WriteStream } from 'node:fs';
import { LINE_COLUMN } from '../dialects/driver.js';

export interface LineScan {
  /** Records that parsed, one JSON object a line, each with its line number in LINE_COLUMN. */
  good: number;
  /** Lines that could not become records, written as {line, reason, raw}. */
  bad: number;
}

/** The largest record accepted (the engine's JSON reader is given the same limit). */
export const MAX_RECORD_BYTES = 64 * 1024 * 1024;

/**
 * Split an NDJSON file into its parseable records (with their line numbers) and the lines that
 * cannot become records (invalid UTF-8, malformed JSON, not an object, too large). Used only when
 * the engine's own reader refused the file, so that one bad line costs one quarantined record,
 * not the whole commit. Streams: memory stays bounded by the longest line.
 */
export async function scanLines(file: string, goodOut: string, badOut: string): Promise<LineScan> {
  const good = createWriteStream(goodOut);
  const bad = createWriteStream(badOut);
  const decoder = new TextDecoder('utf-8', { fatal: true });
  const lossy = new TextDecoder('utf-8');
  let counts = { good: 0, bad: 0 };
  let line = 0;
  let pending: Buffer[] = [];
  let pendingBytes = 0;
  const handle = async (bytes: Buffer) => {
    line++;
    if (bytes.length && bytes[bytes.length - 1] === 0x0d) bytes = bytes.subarray(0, bytes.length - 1);
    const reject = (reason: string, raw: string) => {
      counts.bad++;
      return write(bad, JSON.stringify({ line, reason, raw }) + '\n');
    };
    if (bytes.length > MAX_RECORD_BYTES) return reject(`record larger than ${MAX_RECORD_BYTES >> 20} MB`, lossy.decode(bytes.subarray(0, 1000)) + '…');
    let text: string;
    try {
      text = decoder.decode(bytes);
    } catch {
      return reject('invalid UTF-8', lossy.decode(bytes));
    }
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
  };
  for await (const chunk of createReadStream(file) as AsyncIterable<Buffer>) {
    let start = 0;
    for (let i = chunk.indexOf(0x0a); i >= 0; i = chunk.indexOf(0x0a, start)) {
      const piece = chunk.subarray(start, i);
      const bytes = pending.length ? Buffer.concat([...pending, piece]) : piece;
      pending = [];
      pendingBytes = 0;
      await handle(bytes);
      start = i + 1;
    }
    if (start < chunk.length) {
      pendingBytes += chunk.length - start;
      if (pendingBytes <= MAX_RECORD_BYTES + 1) pending.push(chunk.subarray(start));
    }
  }
  if (pending.length) await handle(Buffer.concat(pending));
  await Promise.all([end(good), end(bad)]);
  return counts;
}

function write(stream: WriteStream, text: string): Promise<void> | void {
  if (!stream.write(text)) return new Promise((resolve) => stream.once('drain', () => resolve()));
}

function end(stream: WriteStream): Promise<void> {
  return new Promise((resolve, reject) => stream.end((err?: Error | null) => (err ? reject(err) : resolve())));
}
