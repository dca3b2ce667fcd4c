/**
 * A file that is one JSON array, element by element (files/json-array.ts): a broken element is one
 * bad element with its text; reading resumes at the next element that starts after a comma at most
 * one level inside the broken one; an array the text does not close is unclosed.
 */
import { describe, expect, it } from 'vitest';
import { readJsonArray, type ArrayReading } from '../../src/files/json-array.js';

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
