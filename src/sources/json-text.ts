/**
 * JSON read as text: a line is validated (RFC 8259, exactly what JSON.parse accepts) and an
 * object's members are given back as spans of the original text, so that values are copied as
 * written and never pass through a JavaScript number (2⁵³ and above would be rounded).
 *
 * Invariants: a Span is [start, end) of a value in `text`, no whitespace at either end; `members`
 * is only given spans that `scanDocument` validated, so it re-reads them without checking again.
 */

export type Kind = 'object' | 'array' | 'string' | 'number' | 'true' | 'false' | 'null';

export interface Span {
  kind: Kind;
  start: number;
  end: number;
}

export interface Member {
  /** The member's name, decoded (a string is decoded exactly). */
  name: string;
  /** The name as written, quotes included. */
  key: Span;
  value: Span;
}

export class JsonSyntaxError extends Error {}

const OBJ = 0;
const ARR = 1;
const QUOTE = 0x22;
const NUMBER = /-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][+-]?\d+)?/y;
const ESCAPES = new Set('"\\/bfnrtu'.split('').map((c) => c.charCodeAt(0)));
const HEX4 = /[0-9a-fA-F]{4}/y;

const isSpace = (c: number) => c === 0x20 || c === 0x09 || c === 0x0a || c === 0x0d;
function space(s: string, i: number): number {
  while (i < s.length && isSpace(s.charCodeAt(i))) i++;
  return i;
}
const fail = (message: string, at: number): never => {
  throw new JsonSyntaxError(`${message} at position ${at}`);
};

/** The end of the string literal starting at i (s[i] is a quote). */
function stringEnd(s: string, i: number): number {
  for (let j = i + 1; j < s.length; j++) {
    const c = s.charCodeAt(j);
    if (c === QUOTE) return j + 1;
    if (c < 0x20) fail('control character in a string', j);
    if (c === 0x5c) {
      const e = s.charCodeAt(++j);
      if (!ESCAPES.has(e)) fail('bad escape in a string', j);
      if (e === 0x75) {
        HEX4.lastIndex = j + 1;
        if (!HEX4.test(s)) fail('bad \\u escape in a string', j);
        j += 4;
      }
    }
  }
  return fail('unterminated string', i);
}

/** The end of the one scalar (string, number, literal) starting at i. */
function scalarEnd(s: string, i: number): number {
  const c = s.charCodeAt(i);
  if (c === QUOTE) return stringEnd(s, i);
  const word = c === 0x74 ? 'true' : c === 0x66 ? 'false' : c === 0x6e ? 'null' : undefined;
  if (word && s.startsWith(word, i)) return i + word.length;
  NUMBER.lastIndex = i;
  if (NUMBER.test(s)) return NUMBER.lastIndex;
  return fail(i < s.length ? `unexpected ${JSON.stringify(s[i])}` : 'unexpected end', i);
}

/** After a `{` or `,` inside an object: the name, the colon, and the position of the value. */
function memberValue(s: string, i: number): number {
  if (s.charCodeAt(i) !== QUOTE) fail('expected a member name', i);
  i = space(s, stringEnd(s, i));
  if (s[i] !== ':') fail('expected ":"', i);
  return space(s, i + 1);
}

/**
 * The end of the value starting at i (validated whole). Iterative, with its own stack of open
 * containers, so that any depth of nesting is read without recursion.
 */
function valueEnd(s: string, i: number): number {
  const open: number[] = [];
  for (;;) {
    // Here a value starts at i.
    const c = s[i];
    if (c === '{' || c === '[') {
      const j = space(s, i + 1);
      if (s[j] === (c === '{' ? '}' : ']')) i = j + 1;
      else {
        open.push(c === '{' ? OBJ : ARR);
        i = c === '{' ? memberValue(s, j) : j;
        continue;
      }
    } else i = scalarEnd(s, i);
    // Here a value ended at i: close containers until one continues with another value.
    for (;;) {
      if (!open.length) return i;
      i = space(s, i);
      const top = open[open.length - 1];
      if (s[i] === ',') {
        i = space(s, i + 1);
        if (top === OBJ) i = memberValue(s, i);
        break;
      }
      if (s[i] !== (top === OBJ ? '}' : ']')) fail(`expected "," or "${top === OBJ ? '}' : ']'}"`, i);
      open.pop();
      i++;
    }
  }
}

function kindAt(s: string, i: number): Kind {
  const c = s[i];
  return c === '{' ? 'object' : c === '[' ? 'array' : c === '"' ? 'string' : c === 't' ? 'true' : c === 'f' ? 'false' : c === 'n' ? 'null' : 'number';
}

/** The one value `text` holds (whitespace around it allowed), or a JsonSyntaxError. */
export function scanDocument(text: string): Span {
  const start = space(text, 0);
  const end = valueEnd(text, start);
  const after = space(text, end);
  if (after < text.length) fail('unexpected text after the value', after);
  return { kind: kindAt(text, start), start, end };
}

/** The members of a validated object, in the order written (a repeated name appears twice). */
export function members(text: string, object: Span): Member[] {
  const out: Member[] = [];
  let i = space(text, object.start + 1);
  while (text[i] !== '}') {
    const keyEnd = stringEnd(text, i);
    const key: Span = { kind: 'string', start: i, end: keyEnd };
    const v = space(text, space(text, keyEnd) + 1);
    const end = valueEnd(text, v);
    out.push({ name: JSON.parse(text.slice(i, keyEnd)) as string, key, value: { kind: kindAt(text, v), start: v, end } });
    i = space(text, end);
    if (text[i] === ',') i = space(text, i + 1);
  }
  return out;
}

/** Members by name; a repeated name keeps its last value, as JSON.parse does. */
export function memberMap(text: string, object: Span): Map<string, Member> {
  return new Map(members(text, object).map((m) => [m.name, m]));
}

/** The text of a span. */
export const textOf = (text: string, span: Span): string => text.slice(span.start, span.end);

/** Whether a number span is an integer (no fraction, no exponent): exact as written, any size. */
export const isInteger = (text: string, span: Span): boolean => span.kind === 'number' && /^-?\d+$/.test(textOf(text, span));
