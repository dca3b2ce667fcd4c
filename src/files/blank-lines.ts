import { closeSync, openSync, readSync } from 'node:fs';

export interface LineCount {
  /** Lines of the file (a last line without its newline counts; nothing after the last newline does not). */
  lines: number;
  /** The 1-based numbers of the lines that are empty or hold only spaces, tabs and carriage returns. */
  blanks: number[];
  /**
   * For a CSV: the 1-based numbers of the lines that begin inside a quoted value (a record's
   * second line and after). Such a line is never blank: it is part of the value. Empty otherwise.
   */
  continued: number[];
  /** For a CSV: whether a NUL byte is in the file (no engine's text holds one). */
  nul: boolean;
}

const NL = 0x0a;
const QUOTE = 0x22;
const isSpace = (b: number) => b === 0x20 || b === 0x09 || b === 0x0d;

/**
 * Count a text file's lines and find its blank ones, in one streamed pass (memory: one chunk, and
 * the lines' numbers). Readers skip blank lines, so records numbered in read order are off their
 * physical line after one (docs/decisions/0007-line-numbers-are-physical-lines.md). With `csv`, the lines a quoted value
 * continues onto are found too (RFC 4180: a quote inside a quoted value is doubled, so each quote
 * character opens or closes quoting), which places a record spread over lines on its first one.
 */
export function countLines(file: string, options: { csv?: boolean; chunk?: number } = {}): LineCount {
  const fd = openSync(file, 'r');
  const buf = Buffer.alloc(options.chunk ?? 4 * 1024 * 1024);
  const blanks: number[] = [];
  const continued: number[] = [];
  let line = 1;
  // Whether the current line has held nothing but spaces so far, and whether it holds any byte.
  let blank = true;
  let any = false;
  // Whether the reader is inside a quoted value now, and was when the current line began.
  let quoted = false;
  let began = false;
  let nul = false;
  const endLine = () => {
    if (began) continued.push(line);
    else if (blank) blanks.push(line);
  };
  try {
    for (;;) {
      const n = readSync(fd, buf, 0, buf.length, null);
      if (n === 0) break;
      if (options.csv && !nul) {
        const at = buf.indexOf(0x00);
        nul = at >= 0 && at < n;
      }
      let at = 0;
      while (at < n) {
        const nl = buf.indexOf(NL, at);
        const stop = nl < 0 || nl >= n ? n : nl;
        if (stop > at) any = true;
        // A record line is settled by its first byte; only a line of spaces is read to its end.
        for (let i = at; blank && i < stop; i++) if (!isSpace(buf[i]!)) blank = false;
        if (options.csv) for (let i = buf.indexOf(QUOTE, at); i >= 0 && i < stop; i = buf.indexOf(QUOTE, i + 1)) quoted = !quoted;
        if (stop === n) break;
        endLine();
        line++;
        blank = true;
        any = false;
        began = quoted;
        at = stop + 1;
      }
    }
  } finally {
    closeSync(fd);
  }
  if (any) endLine();
  return { lines: any ? line : line - 1, blanks, continued, nul };
}
