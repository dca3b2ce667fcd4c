/** countLines: the lines of a file, its blank ones and a CSV's continued ones, whatever the chunk boundaries. */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { countLines } from '../../src/files/blank-lines.js';

const dir = mkdtempSync(path.join(tmpdir(), 'scdkit-lines-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function file(text: string): string {
  const f = path.join(dir, `f${Math.random().toString(36).slice(2)}.ndjson`);
  writeFileSync(f, text);
  return f;
}

/** The same count, by splitting the text. */
function expected(text: string) {
  const parts = text.split('\n');
  if (parts.at(-1) === '') parts.pop();
  return { lines: parts.length, blanks: parts.flatMap((p, i) => (/^[ \t\r]*$/.test(p) ? [i + 1] : [])), continued: [], nul: false };
}

describe('countLines', () => {
  const cases: Record<string, string> = {
    'no blank line': '{"a":1}\n{"a":2}\n',
    'no newline at the end': '{"a":1}\n{"a":2}',
    'an empty file': '',
    'blank lines inside and at the end': '{"a":1}\n\n{"a":2}\n   \n\t\r\n{"a":3}\n\n',
    'a blank first line and a last line of spaces without newline': '\n{"a":1}\n  ',
    'CRLF lines': '{"a":1}\r\n\r\n{"a":2}\r\n',
    'only blank lines': '\n\n \n',
  };
  for (const [name, text] of Object.entries(cases))
    it(`${name}: as splitting the text gives, at every chunk size`, () => {
      const f = file(text);
      for (const chunk of [1, 2, 3, 5, 8, 1024]) expect(countLines(f, { chunk }), `chunk ${chunk}`).toEqual(expected(text));
    });
});

describe('countLines of a CSV', () => {
  it('lines a quoted value continues onto are neither records nor blank; doubled quotes do not end the value', () => {
    const text = ['id,note', '1,"two', 'lines"', '', '2,"a ""q"" one"', '3,"three', '', '  ', 'lines ""x""', 'end"', '4,y', '5,"open'].join('\n') + '\n';
    const f = file(text);
    for (const chunk of [1, 2, 3, 7, 1024])
      expect(countLines(f, { csv: true, chunk }), `chunk ${chunk}`).toEqual({ lines: 12, blanks: [4], continued: [3, 7, 8, 9, 10], nul: false });
    // Read as lines, the same file has no continued lines, and its blank ones are all blank.
    expect(countLines(f)).toEqual({ lines: 12, blanks: [4, 7, 8], continued: [], nul: false });
  });

  it('a NUL byte anywhere is found, whichever chunk holds it (DuckDB then splits the file as PostgreSQL does)', () => {
    const f = file('id,note\n1,a\u0000b\n2,c\n');
    for (const chunk of [1, 2, 3, 7, 1024]) expect(countLines(f, { csv: true, chunk }).nul, `chunk ${chunk}`).toBe(true);
  });
});
