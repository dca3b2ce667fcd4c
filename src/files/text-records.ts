import { isUtf8 } from 'node:buffer';
import { closeSync, createWriteStream, openSync, readFileSync, readSync } from 'node:fs';
import { ScdError } from '../errors.js';
import { readJsonArray } from './json-array.js';
import { MAX_RECORD_BYTES, TOO_LARGE } from './record-limit.js';
import { end, write } from './streams.js';

/** How a JSON-lines file's lines end, when they all end alike; `mixed` otherwise. */
export type Newline = '\n' | '\r\n' | '\r';

/**
 * What a streamed look at a text file finds, in native buffer operations only (no per-byte
 * JavaScript): whether the engine's line reader can read it as it is (valid UTF-8, no U+0001 — the
 * reader's field separator —, one kind of line ending, no line over MAX_RECORD_BYTES, no byte
 * order mark).
 */
export interface TextCheck {
  /** The engine may split the file into lines itself, with this line ending. */
  plain?: Newline;
}

export function checkText(file: string, chunkSize = 4 * 1024 * 1024): TextCheck {
  const fd = openSync(file, 'r');
  const buf = Buffer.alloc(chunkSize + 4);
  let carry = 0; // bytes of an incomplete UTF-8 character carried to the next chunk
  let lf = 0;
  let cr = 0;
  let crlf = 0;
  let lastWasCr = false;
  let sinceBreak = 0;
  let first = true;
  try {
    for (;;) {
      const n = readSync(fd, buf, carry, chunkSize, null);
      if (n === 0) break;
      const len = carry + n;
      // A chunk may end inside a character: check up to its last complete one.
      let cut = len;
      for (let back = 1; back <= 3 && len - back >= 0; back++) {
        const b = buf[len - back]!;
        if ((b & 0xc0) === 0x80) continue;
        const need = b >= 0xf0 ? 4 : b >= 0xe0 ? 3 : b >= 0xc0 ? 2 : 1;
        if (need > back) cut = len - back;
        break;
      }
      const view = buf.subarray(0, cut);
      // A byte order mark is no part of the first record: the normalized form drops it.
      if (first && withoutByteOrderMark(view) !== view) return {};
      first = false;
      if (!isUtf8(view) || view.indexOf(0x01) >= 0) return {};
      if (view.indexOf(0x0d) >= 0) {
        for (let i = view.indexOf(0x0d); i >= 0; i = view.indexOf(0x0d, i + 1)) {
          cr++;
          if (view[i + 1] === 0x0a) crlf++;
          else if (i + 1 === view.length) lastWasCr = true;
        }
      }
      if (lastWasCr && view[0] === 0x0a && cut !== len) crlf++;
      for (let i = view.indexOf(0x0a), prev = -1; ; prev = i, i = view.indexOf(0x0a, i + 1)) {
        if (i < 0) {
          sinceBreak += view.length - prev - 1;
          break;
        }
        lf++;
        if (sinceBreak + i - prev - 1 > MAX_RECORD_BYTES) return {};
        sinceBreak = 0;
      }
      if (sinceBreak > MAX_RECORD_BYTES) return {};
      buf.copy(buf, 0, cut, len);
      carry = len - cut;
    }
    if (carry) return {};
  } finally {
    closeSync(fd);
  }
  if (cr === 0) return { plain: '\n' };
  if (crlf === cr && crlf === lf) return { plain: '\r\n' };
  if (lf === 0) return { plain: '\r' };
  return {};
}

/** One record of a text file, as the normalized form writes it: line, raw text, and why it is bad. */
export interface TextRecord {
  l: number;
  r: string;
  e?: string;
}

/** What normalizeJsonText wrote, and the records it kept out of the normalized file. */
export interface NormalizedText {
  /** Every record, the oversized ones included. */
  records: number;
  /**
   * Records over MAX_RECORD_BYTES, each with its whole raw text and reason: the caller quarantines
   * them as they are (no engine's JSON reader is asked to read a line that long).
   */
  oversized: TextRecord[];
}

/**
 * Write a JSON or JSON-lines file as one record per line of `{"l": line, "r": raw text, "e":
 * reason}` (an NDJSON file any engine reads without surprises), for the files checkText does not
 * pass or whose lines are not each a JSON value:
 * - a UTF-8 byte order mark at the file's start is no part of its first record;
 * - lines end at LF, CRLF or a lone CR (universal newlines), numbered from 1;
 * - a line that is not valid UTF-8 is a bad record whose raw text shows its bytes (\xFF);
 * - a value that spans lines (a pretty-printed object) is one record at its first line;
 * - a file that is one JSON array gives each element as a record, numbered from 1 (its line is
 *   no place: an array is often one line); a broken element is one bad record (json-array.ts);
 *   an array the file does not close stops the run (a file still being written, or cut short);
 * - a record over MAX_RECORD_BYTES is a bad record kept whole, out of the file (`oversized`).
 * JSON validity is judged here only to find where records end; values are never converted (the
 * engine reads the raw text), so no number passes through a JavaScript number.
 */
export async function normalizeJsonText(file: string, out: string): Promise<NormalizedText> {
  const bytes = withoutByteOrderMark(readFileSync(file));
  const stream = createWriteStream(out);
  let records = 0;
  const oversized: TextRecord[] = [];
  const emit = (r: TextRecord) => {
    records++;
    // A UTF-16 unit is at most 3 bytes of UTF-8: only a long text needs its bytes counted.
    if (r.r.length * 3 > MAX_RECORD_BYTES && Buffer.byteLength(r.r) > MAX_RECORD_BYTES) {
      oversized.push({ ...r, e: TOO_LARGE });
      return;
    }
    return write(stream, JSON.stringify(r) + '\n');
  };
  try {
    const lines = splitLines(bytes);
    const texts = lines.map((l) => (isUtf8(l) ? l.toString('utf8') : undefined));
    if (startsArray(texts)) {
      for (const r of arrayRecords(file, lines, texts)) await emit(r);
    } else {
      for (let i = 0; i < lines.length; i++) {
        const text = texts[i];
        if (text === undefined) {
          await emit({ l: i + 1, r: visible(lines[i]!), e: 'invalid UTF-8' });
          continue;
        }
        if (isBlank(text)) continue;
        const spanned = lines[i]!.length > MAX_RECORD_BYTES || isJson(text) ? 0 : spanningValue(texts, i);
        if (spanned > 0) {
          await emit({ l: i + 1, r: texts.slice(i, i + spanned + 1).join('\n') });
          i += spanned;
        } else await emit({ l: i + 1, r: text });
      }
    }
  } finally {
    await end(stream);
  }
  return { records, oversized };
}

/** The bytes without a UTF-8 byte order mark (EF BB BF) at their start. */
export function withoutByteOrderMark(bytes: Buffer): Buffer {
  return bytes[0] === 0xef && bytes[1] === 0xbb && bytes[2] === 0xbf ? bytes.subarray(3) : bytes;
}

/**
 * The records of a file that is one JSON array: its elements (json-array.ts), a broken one with
 * its reason; an element that holds a line that is not UTF-8 is bad for that reason, its bytes
 * shown (\xFF). Throws when the array is not closed: no element past the last good one is whole.
 */
function arrayRecords(file: string, lines: Buffer[], texts: Array<string | undefined>): TextRecord[] {
  // Where the lines that are not UTF-8 are in the joined text, as [start, end) ranges.
  const invalid: Array<[number, number]> = [];
  let at = 0;
  const parts = texts.map((t, i) => {
    const part = t ?? visible(lines[i]!);
    if (t === undefined) invalid.push([at, at + part.length]);
    at += part.length + 1;
    return part;
  });
  const reading = readJsonArray(parts.join('\n'));
  if ('unclosed' in reading) {
    throw new ScdError(
      'INPUT_UNREADABLE',
      `the JSON array ends inside its element ${reading.unclosed.element}, before it closes: the file is still being written, or was cut short; nothing was applied`,
      {
        file,
        fix: 'apply it again once the file is whole (or complete its array and close it with "]")',
      },
    );
  }
  return reading.elements.map((el) => {
    const notUtf8 = invalid.some(([s, e]) => s < el.at + el.text.length && e > el.at);
    return { l: el.n, r: el.text, ...(notUtf8 ? { e: 'invalid UTF-8' } : el.reason ? { e: el.reason } : {}) };
  });
}

/** Lines of a buffer, split at LF, CRLF or a lone CR (without the line break). */
function splitLines(bytes: Buffer): Buffer[] {
  const out: Buffer[] = [];
  let start = 0;
  for (let i = 0; i < bytes.length; i++) {
    const b = bytes[i];
    if (b !== 0x0a && b !== 0x0d) continue;
    out.push(bytes.subarray(start, i));
    if (b === 0x0d && bytes[i + 1] === 0x0a) i++;
    start = i + 1;
  }
  if (start < bytes.length) out.push(bytes.subarray(start));
  return out;
}

/** A line of JSON whitespace only (space, tab) holds no record. */
export function isBlank(text: string): boolean {
  return /^[ \t]*$/.test(text);
}

function isJson(text: string): boolean {
  try {
    JSON.parse(text);
    return true;
  } catch {
    return false;
  }
}

/**
 * When line `i` opens a value that closes on a later line and the lines between make one valid
 * JSON value, how many lines after `i` it spans; 0 otherwise (the line is a record alone).
 */
function spanningValue(texts: Array<string | undefined>, i: number): number {
  const first = texts[i]!.trimStart();
  if (!first.startsWith('{') && !first.startsWith('[')) return 0;
  const depth = { n: 0, inString: false, escaped: false };
  for (let j = i; j < texts.length && j - i < 100_000; j++) {
    const t = texts[j];
    if (t === undefined) return 0;
    if (!track(t, depth)) return 0;
    if (depth.n === 0 && !depth.inString) return j > i && isJson(texts.slice(i, j + 1).join('\n')) ? j - i : 0;
  }
  return 0;
}

/** Follow brackets and strings through one line; false when the brackets close below zero. */
function track(text: string, s: { n: number; inString: boolean; escaped: boolean }): boolean {
  for (let k = 0; k < text.length; k++) {
    const ch = text.charCodeAt(k);
    if (s.inString) {
      if (s.escaped) s.escaped = false;
      else if (ch === 0x5c) s.escaped = true;
      else if (ch === 0x22) s.inString = false;
      continue;
    }
    if (ch === 0x22) s.inString = true;
    else if (ch === 0x7b || ch === 0x5b) s.n++;
    else if (ch === 0x7d || ch === 0x5d) {
      if (--s.n < 0) return false;
    }
  }
  // A string never spans lines in JSON.
  if (s.inString) return false;
  return true;
}

/** Whether the file's first non-blank character opens an array. */
function startsArray(texts: Array<string | undefined>): boolean {
  const first = texts.findIndex((t) => t === undefined || !isBlank(t));
  if (first < 0 || texts[first] === undefined) return false;
  const t = texts[first]!.trimStart();
  // A line that is an array by itself is a JSON-lines record (a non-object), not an array file.
  return t.startsWith('[') && !(texts.filter((x) => x !== undefined && !isBlank(x)).length > 1 && isJson(t));
}

/** Bytes that are not UTF-8 shown visibly: valid characters as they are, other bytes as \xHH. */
export function visible(bytes: Buffer): string {
  let out = '';
  let i = 0;
  while (i < bytes.length) {
    const b = bytes[i]!;
    const need = b < 0x80 ? 1 : b >= 0xc2 && b < 0xe0 ? 2 : b >= 0xe0 && b < 0xf0 ? 3 : b >= 0xf0 && b < 0xf5 ? 4 : 0;
    const piece = need ? bytes.subarray(i, i + need) : undefined;
    if (piece && piece.length === need && isUtf8(piece)) {
      out += piece.toString('utf8');
      i += need;
    } else {
      out += `\\x${b.toString(16).toUpperCase().padStart(2, '0')}`;
      i++;
    }
  }
  return out;
}
