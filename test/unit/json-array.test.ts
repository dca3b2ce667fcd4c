/**
 * A file that is one JSON array, element by element (files/json-array.ts): a broken element is one
 * bad element with its text; reading resumes at the next element that starts after a comma at most
 * one level inside the broken one; an array the text does not close is unclosed.
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { type ArrayReading, readJsonArray } from '../../src/files/json-array.js';
import { MAX_RECORD_BYTES } from '../../src/files/record-limit.js';
import { normalizeJsonText } from '../../src/files/text-records.js';

const elements = (r: ArrayReading) => {
  if ('unclosed' in r) throw new Error(`unclosed at element ${r.unclosed.element}`);
  return r.elements.map((e) => (e.reason ? [e.n, e.text, e.reason] : [e.n, e.text]));
};

describe('readJsonArray', () => {
  it('a valid array: every element as written, numbered from 1', () => {
    expect(elements(readJsonArray(' [ {"a":1} ,\n{"b":[1,2]}, 3 ]\n'))).toEqual([
      [1, '{"a":1}'],
      [2, '{"b":[1,2]}'],
      [3, '3'],
    ]);
    expect(elements(readJsonArray('[]'))).toEqual([]);
  });

  it('an element missing its closing brace: it alone is bad, the next one reads', () => {
    const r = elements(readJsonArray('[{"id":1},{"id":2,"v":"x",{"id":3,"v":"ü"},{"id":4}]'));
    expect(r).toEqual([
      [1, '{"id":1}'],
      [2, '{"id":2,"v":"x"', expect.stringMatching(/^malformed JSON: .* of the element$/)],
      [3, '{"id":3,"v":"ü"}'],
      [4, '{"id":4}'],
    ]);
  });

  it('an element with a bad value: it alone is bad', () => {
    expect(elements(readJsonArray('[{"id":1,"v":x},\n {"id":2}]'))).toEqual([
      [1, '{"id":1,"v":x}', expect.stringMatching(/^malformed JSON: unexpected "x" at position 12 of the element$/)],
      [2, '{"id":2}'],
    ]);
  });

  it('objects inside a broken element (in an array in it, or a member value) are never taken for records', () => {
    const r = elements(readJsonArray('[{"id":1,"items":[{"id":7},{"id":8}],"v":tru},{"id":2}]'));
    expect(r).toEqual([
      [1, '{"id":1,"items":[{"id":7},{"id":8}],"v":tru}', expect.stringMatching(/^malformed JSON/)],
      [2, '{"id":2}'],
    ]);
  });

  it('a comma or brace inside a string of the broken element does not resync', () => {
    const r = elements(readJsonArray('[{"id":1,"s":", {\\"id\\":9}", "v":?},{"id":2}]'));
    expect(r.map((e) => e[0])).toEqual([1, 2]);
    expect(r[0]![1]).toBe('{"id":1,"s":", {\\"id\\":9}", "v":?}');
  });

  it('a broken last element runs to the closing bracket', () => {
    expect(elements(readJsonArray('[{"id":1},{"id":2,"v":}]'))).toEqual([
      [1, '{"id":1}'],
      [2, '{"id":2,"v":}', expect.stringMatching(/^malformed JSON/)],
    ]);
  });

  it('text after the closing bracket is one bad element', () => {
    expect(elements(readJsonArray('[{"id":1}] {"id":2}'))).toEqual([
      [1, '{"id":1}'],
      [2, '{"id":2}', 'malformed JSON: text after the end of the array'],
    ]);
  });

  it('a text cut short (a file still being written) is unclosed, at the element it ends in', () => {
    expect(readJsonArray('[{"id":1},{"id":2,"v":"ab')).toEqual({ unclosed: { element: 2, at: 10 } });
    expect(readJsonArray('[{"id":1},{"id":2}')).toEqual({ unclosed: { element: 2, at: 10 } });
    expect(readJsonArray('[{"id":1},')).toEqual({ unclosed: { element: 2, at: 10 } });
  });
});

describe('normalizeJsonText of an array file', () => {
  const dir = mkdtempSync(path.join(tmpdir(), 'scdkit-json-array-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));
  const normalize = async (name: string, bytes: Buffer) => {
    const file = path.join(dir, name);
    writeFileSync(file, bytes);
    const out = path.join(dir, `${name}.out`);
    const result = await normalizeJsonText(file, out);
    const lines = readFileSync(out, 'utf8')
      .split('\n')
      .filter(Boolean)
      .map((l) => JSON.parse(l) as Record<string, unknown>);
    return { result, lines };
  };

  it('a byte order mark is dropped; an element holding bytes that are not UTF-8 is bad for that reason, its bytes shown', async () => {
    const bytes = Buffer.concat([Buffer.from('\uFEFF[{"id":1},\n{"id":2,"v":"'), Buffer.from([0xff, 0xfe]), Buffer.from('"},\n{"id":3}]\n')]);
    const { result, lines } = await normalize('bad-bytes.json', bytes);
    expect(result).toEqual({ records: 3, oversized: [] });
    expect(lines).toEqual([
      { l: 1, r: '{"id":1}' },
      { l: 2, r: '{"id":2,"v":"\\xFF\\xFE"}', e: 'invalid UTF-8' },
      { l: 3, r: '{"id":3}' },
    ]);
  });

  it('an element over the size limit is kept whole, out of the normalized file', async () => {
    const big = `{"id":2,"v":"${'é'.repeat(MAX_RECORD_BYTES / 2 + 1)}"}`;
    const { result, lines } = await normalize('big.json', Buffer.from(`[{"id":1},${big},{"id":3}]`));
    expect(result.records).toBe(3);
    expect(result.oversized).toHaveLength(1);
    expect(result.oversized[0]).toMatchObject({ l: 2, e: 'record larger than 32 MiB' });
    expect(result.oversized[0]!.r === big).toBe(true);
    expect(lines).toEqual([
      { l: 1, r: '{"id":1}' },
      { l: 3, r: '{"id":3}' },
    ]);
  });

  it('an array that never closes is refused in one line naming the file and the fix', async () => {
    await expect(normalize('cut.json', Buffer.from('[{"id":1},{"id":2,"v":"a'))).rejects.toThrow(
      /cut\.json: the JSON array ends inside its element 2, before it closes: .*nothing was applied \(fix: apply it again once the file is whole/,
    );
  });
});
