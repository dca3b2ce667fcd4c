import { closeSync, openSync, readSync } from 'node:fs';

export interface LineCount {
  /** Lines of the file (a last line without its newline counts; nothing after the last newline does not). */
  lines: number;
  /** The 1-based numbers of the lines that are empty or hold only spaces, tabs and carriage returns. */
  blanks: number[];
}

const NL = 0x0a;
const isSpace = (b: number) => b === 0x20 || b === 0x09 || b === 0x0d;

/**
 * Count a text file's lines and find its blank ones, in one streamed pass (memory: one chunk, and
 * the blank lines' numbers). Readers skip blank lines, so records numbered in read order are off
 * their physical line after one (docs/DECISIONS.md "line numbers").
 */
export function countLines(file: string, chunk = 4 * 1024 * 1024): LineCount {
  const fd = openSync(file, 'r');
  const buf = Buffer.alloc(chunk);
  const blanks: number[] = [];
  let line = 1;
  // Whether the current line has held nothing but spaces so far, and whether it holds any byte.
  let blank = true;
  let any = false;
  try {
    for (;;) {
      const n = readSync(fd, buf, 0, buf.length, null);
      if (n === 0) break;
      let at = 0;
      while (at < n) {
        const nl = buf.indexOf(NL, at);
        const stop = nl < 0 || nl >= n ? n : nl;
        if (stop > at) any = true;
        // A record line is settled by its first byte; only a line of spaces is read to its end.
        for (let i = at; blank && i < stop; i++) if (!isSpace(buf[i]!)) blank = false;
        if (stop === n) break;
        if (blank) blanks.push(line);
        line++;
        blank = true;
        any = false;
        at = stop + 1;
      }
    }
  } finally {
    closeSync(fd);
  }
  if (any && blank) blanks.push(line);
  return { lines: any ? line : line - 1, blanks };
}
