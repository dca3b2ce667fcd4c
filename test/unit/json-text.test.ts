/**
 * The lossless JSON scanner (src/files/json-text.ts): it accepts exactly what JSON.parse
 * accepts, and gives an object's members back as the text they were written in.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { isInteger, JsonSyntaxError, memberMap, members, scanDocument, textOf } from '../../src/files/json-text.js';

const accepts = (text: string) => {
  try {
    scanDocument(text);
    return true;
  } catch (e) {
    if (!(e instanceof JsonSyntaxError)) throw e;
    return false;
  }
};
const parses = (text: string) => {
  try {
    JSON.parse(text);
    return true;
  } catch {
    return false;
  }
};

describe('json-text', () => {
  it('accepts what JSON.parse accepts, and only that', () => {
    fc.assert(fc.property(fc.json(), (text) => accepts(text)));
    // Damaged documents: a character dropped, doubled or replaced somewhere.
    const damaged = fc.tuple(fc.json(), fc.nat(), fc.constantFrom('', '"', '\\', ',', ':', '{', '}', '[', ']', '0', '-', '.', 'e', ' ', '\t', '\u0001', 'x')).map(([t, at, c]) => {
      const i = t.length ? at % t.length : 0;
      return t.slice(0, i) + c + t.slice(i + (at % 2));
    });
    fc.assert(
      fc.property(damaged, (text) => accepts(text) === parses(text)),
      { numRuns: 2000 },
    );
    for (const text of ['01', '1.', '.5', '-', '+1', '1e', '[1,]', '{"a":1,}', '{"a"}', '"\\x"', '"\\u12"', 'tru', 'nul', ' ', '{} {}', '"\t"'])
      expect([text, accepts(text)]).toEqual([text, false]);
    for (const text of ['-0', '1E+2', '0.5e-3', ' \r\n\t{"a" : [ ] }\r', '"\\u00e9\\/"', '[[],{}]', 'null']) expect([text, accepts(text)]).toEqual([text, true]);
  });

  it("gives an object's members as written: names decoded, values exact", () => {
    fc.assert(
      fc.property(fc.dictionary(fc.string(), fc.jsonValue()), (obj) => {
        const text = JSON.stringify(obj, null, 1);
        const parsed = JSON.parse(text) as Record<string, unknown>;
        const doc = scanDocument(text);
        const got = memberMap(text, doc);
        expect([...got.keys()]).toEqual(Object.keys(parsed));
        for (const [name, m] of got) expect(JSON.parse(textOf(text, m.value))).toEqual(parsed[name]);
        // Read again from the bare span (as a nested object is), the members are the same.
        expect(members(text, { kind: 'object', start: doc.start, end: doc.end })).toEqual(members(text, doc));
        // And a nested object's members, read from its span, are its own.
        const nested = `{"x":${text},"y":[${text}]}`;
        const inner = memberMap(nested, scanDocument(nested)).get('x')!.value;
        expect(members(nested, inner).map((m) => [m.name, JSON.parse(textOf(nested, m.value))])).toEqual(Object.entries(parsed));
      }),
    );
    const text = '{ "id" : 1234567890123456789, "lsn":9007199254740993, "x": 1.50, "\\u005fop": "u", "id": 12345678901234567890123 }';
    const doc = scanDocument(text);
    expect(members(text, doc).map((m) => [m.name, textOf(text, m.key), textOf(text, m.value), m.value.kind])).toEqual([
      ['id', '"id"', '1234567890123456789', 'number'],
      ['lsn', '"lsn"', '9007199254740993', 'number'],
      ['x', '"x"', '1.50', 'number'],
      ['_op', '"\\u005fop"', '"u"', 'string'],
      ['id', '"id"', '12345678901234567890123', 'number'],
    ]);
    // A repeated name keeps its last value, as JSON.parse does.
    expect(textOf(text, memberMap(text, doc).get('id')!.value)).toBe('12345678901234567890123');
    const m = memberMap(text, doc);
    expect([isInteger(text, m.get('lsn')!.value), isInteger(text, m.get('x')!.value), isInteger(text, m.get('_op')!.value)]).toEqual([true, false, false]);
  });

  it('reads any depth of nesting without recursion', () => {
    const deep = '['.repeat(200_000) + ']'.repeat(200_000);
    expect(scanDocument(deep)).toEqual({ kind: 'array', start: 0, end: deep.length });
    expect(accepts('['.repeat(200_000) + ']'.repeat(199_999))).toBe(false);
  });
});
