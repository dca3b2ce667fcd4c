import { createReadStream } from 'node:fs';
import { MAX_RECORD_BYTES, TOO_LARGE } from '../files/record-limit.js';

const strict = new TextDecoder('utf-8', { fatal: true });
const lossy = new TextDecoder('utf-8');

/**
 * Call `onLine` for every line of a file (1-based numbers, without the line break), streamed:
 * memory stays bounded by the longest line, which arrives whole (one over MAX_RECORD_BYTES too:
 * the caller quarantines it with its whole text).
 */
export async function eachLine(file: string, onLine: (bytes: Buffer, line: number) => Promise<void> | void): Promise<void> {
  let line = 0;
  let pending: Buffer[] = [];
  for await (const chunk of createReadStream(file) as AsyncIterable<Buffer>) {
    let start = 0;
    for (let i = chunk.indexOf(0x0a); i >= 0; i = chunk.indexOf(0x0a, start)) {
      const piece = chunk.subarray(start, i);
      const bytes = pending.length ? Buffer.concat([...pending, piece]) : piece;
      pending = [];
      await onLine(bytes, ++line);
      start = i + 1;
    }
    if (start < chunk.length) pending.push(chunk.subarray(start));
  }
  if (pending.length) await onLine(Buffer.concat(pending), ++line);
}

/** A line as text, or why it cannot be one (with its whole raw text, lossily decoded). */
export function decodeLine(bytes: Buffer): { text: string } | { reason: string; raw: string } {
  if (bytes.length && bytes[bytes.length - 1] === 0x0d) bytes = bytes.subarray(0, bytes.length - 1);
  if (bytes.length > MAX_RECORD_BYTES) return { reason: TOO_LARGE, raw: lossy.decode(bytes) };
  try {
    return { text: strict.decode(bytes) };
  } catch {
    return { reason: 'invalid UTF-8', raw: lossy.decode(bytes) };
  }
}

export { end, write } from '../files/streams.js';
