import { isUtf8 } from 'node:buffer';
import { closeSync, createWriteStream, openSync, readFileSync, readSync } from 'node:fs';
import { end, write } from './streams.js';

/** The largest record accepted. */
export const MAX_RECORD_BYTES = 32 * 1024 * 1024;

/** How a JSON-lines file's lines end, when they all end alike; `mixed` otherwise. */
export type Newline = '\n' | '\r\n' | '\r';

/**
 * What a streamed look at a text file finds, in native buffer operations only (no per-byte
 * JavaScript): whether the engine's line reader can read it as it is (valid UTF-8, no U+0001 — the
 * reader's field separator —, one kind of line ending, no line over MAX_RECORD_BYTES).
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
interface TextRecord {
  l: number;
  r: string;
  e?: string;
}

/**
 * Write a JSON or JSON-lines file as one record per line of `{"l": line, "r": raw text, "e":
 * reason}` (an NDJSON file any engine reads without surprises), for the files checkText does not
 * pass or whose lines are not each a JSON value:
 * - lines end at LF, CRLF or a lone CR (universal newlines), numbered from 1;
 * - a line that is not valid UTF-8 is a bad record whose raw text shows its bytes (\xFF);
 * - a value that spans lines (a pretty-printed object) is one record at its first line;
 * - a file that is one JSON array gives each element as a record, numbered from 1 (its line is
 *   no place: an array is often one line).
 * JSON validity is judged here only to find where records end; values are never converted (the
 * engine reads the raw text), so no number passes through a JavaScript number.
 */
export async function normalizeJsonText(file: string, out: string): Promise<{ records: number }> {
  const bytes = readFileSync(file);
  const stream = createWriteStream(out);
  let records = 0;
  const emit = (r: TextRecord) => {
    records++;
    return write(stream, JSON.stringify(r) + '\n');
  };
  const lines = splitLines(bytes);
  const texts = lines.map((l) => (isUtf8(l) ? l.toString('utf8') : undefined));
  const array = topLevelArray(texts);
  if (array) {
    for (const r of array) await emit(r);
  } else if (startsArray(texts)) {
    // A file that opens an array it does not close validly is one record: no element has a place.
    const text = texts.map((t, i) => t ?? visible(lines[i]!)).join('\n');
    await emit({ l: 1, r: text.length > 1000 ? text.slice(0, 1000) + '…' : text, e: `not a valid JSON array (${jsonError(text)})` });
  } else {
    for (let i = 0; i < lines.length; i++) {
      const text = texts[i];
      if (text === undefined) {
        await emit({ l: i + 1, r: visible(lines[i]!), e: 'invalid UTF-8' });
        continue;
      }
      if (isBlank(text)) continue;
      if (lines[i]!.length > MAX_RECORD_BYTES) {
        await emit({ l: i + 1, r: text.slice(0, 1000) + '…', e: `record larger than ${MAX_RECORD_BYTES >> 20} MB` });
        continue;
      }
      const spanned = isJson(text) ? 0 : spanningValue(texts, i);
      if (spanned > 0) {
        await emit({ l: i + 1, r: texts.slice(i, i + spanned + 1).join('\n') });
        i += spanned;
      } else await emit({ l: i + 1, r: text });
    }
  }
  await end(stream);
  return { records };
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

/**
 * The elements of a file that is one JSON array (first non-blank character `[`), each with its
 * number and its text; undefined when the file is not one valid JSON array.
 */
function topLevelArray(texts: Array<string | undefined>): TextRecord[] | undefined {
  if (!startsArray(texts) || texts.some((t) => t === undefined)) return undefined;
  const whole = texts.join('\n');
  if (!isJson(whole) || !Array.isArray(JSON.parse(whole))) return undefined;
  const out: TextRecord[] = [];
  let depth = 0;
  let inString = false;
  let escaped = false;
  let start = -1;
  for (let k = 0; k < whole.length; k++) {
    const ch = whole[k]!;
    if (inString) {
      if (escaped) escaped = false;
      else if (ch === '\\') escaped = true;
      else if (ch === '"') inString = false;
      continue;
    }
    // Inside the outer array, the first character that is not a separator starts an element.
    if (depth === 1 && start < 0 && !' \t\n\r,]'.includes(ch)) start = k;
    if (ch === '"') inString = true;
    else if (ch === '{' || ch === '[') depth++;
    else if (ch === '}' || ch === ']') depth--;
    // An element ends at the comma after it, or at the outer array's closing bracket.
    if (start >= 0 && ((depth === 1 && ch === ',') || depth === 0)) {
      out.push({ l: out.length + 1, r: whole.slice(start, k).trimEnd() });
      start = -1;
    }
  }
  return out;
}

/** Whether the file's first non-blank character opens an array. */
function startsArray(texts: Array<string | undefined>): boolean {
  const first = texts.findIndex((t) => t === undefined || !isBlank(t));
  if (first < 0 || texts[first] === undefined) return false;
  const t = texts[first]!.trimStart();
  // A line that is an array by itself is a JSON-lines record (a non-object), not an array file.
  return t.startsWith('[') && !(texts.filter((x) => x !== undefined && !isBlank(x)).length > 1 && isJson(t));
}

function jsonError(text: string): string {
  try {
    JSON.parse(text);
    return 'it is valid JSON';
  } catch (e) {
    return (e as Error).message;
  }
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
