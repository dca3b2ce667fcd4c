/**
 * JSON read as text: a line is validated (RFC 8259, exactly what JSON.parse accepts) and an
 * object's members are given back as spans of the original text, so that values are copied as
 * written and never pass through a JavaScript number (2⁵³ and above would be rounded).
 *
 * Invariants: a Span is [start, end) of a value in `text`, no whitespace at either end.
 * `scanDocument` validates a whole text (and reads an object's members on the way); `members` and
 * the known* helpers are only given spans of a text it validated, so they skip without checking.
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

export class JsonSyntaxError extends Error {
  /** What is wrong, without where. */
  readonly problem: string;
  /** Where in the text it is wrong (a UTF-16 index). */
  readonly position: number;

  constructor(problem: string, position: number) {
    super(`${problem} at position ${position}`);
    this.problem = problem;
    this.position = position;
  }
}

const OBJ = 0;
const ARR = 1;
const QUOTE = 0x22;
const NUMBER = /-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][+-]?\d+)?/y;
const ESCAPES = new Set('"\\/bfnrtu'.split('').map((c) => c.charCodeAt(0)));
const HEX4 = /[0-9a-fA-F]{4}/y;

const isSpace = (c: number) => c === 0x20 || c === 0x09 || c === 0x0a || c === 0x0d;
/** The first position at or after i that is not JSON whitespace. */
export function space(s: string, i: number): number {
  while (i < s.length && isSpace(s.charCodeAt(i))) i++;
  return i;
}
const fail = (message: string, at: number): never => {
  throw new JsonSyntaxError(message, at);
};

/** Characters a string holds as they are (no quote, backslash or control character), in a run. */
// biome-ignore lint/suspicious/noControlCharactersInRegex: a JSON string may not hold control characters as they are
const PLAIN = /[^"\\\u0000-\u001f]*/y;

/** The end of the string literal starting at i (s[i] is a quote). */
function stringEnd(s: string, i: number): number {
  for (let j = i + 1; j < s.length; j++) {
    PLAIN.lastIndex = j;
    PLAIN.test(s);
    j = PLAIN.lastIndex;
    if (j >= s.length) break;
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
 * containers, so that any depth of nesting is read without recursion. When the value is an
 * object and `out` is given, its members are pushed to `out` on the way (one pass, not two).
 */
export function valueEnd(s: string, i: number, out?: Member[]): number {
  const open: number[] = [];
  // The name and value of the outermost object's member being read (-1: none).
  let keyAt = -1;
  let valueAt = -1;
  const member = (at: number) => {
    const own = out && open.length === 1 && open[0] === OBJ;
    if (own) keyAt = at;
    const v = memberValue(s, at);
    if (own) valueAt = v;
    return v;
  };
  for (;;) {
    // Here a value starts at i.
    const c = s[i];
    if (c === '{' || c === '[') {
      const j = space(s, i + 1);
      if (s[j] === (c === '{' ? '}' : ']')) i = j + 1;
      else {
        open.push(c === '{' ? OBJ : ARR);
        i = c === '{' ? member(j) : j;
        continue;
      }
    } else i = scalarEnd(s, i);
    // Here a value ended at i: close containers until one continues with another value.
    for (;;) {
      if (!open.length) return i;
      if (valueAt >= 0 && open.length === 1) {
        out!.push(memberAt(s, keyAt, valueAt, i));
        valueAt = -1;
      }
      i = space(s, i);
      const top = open[open.length - 1];
      if (s[i] === ',') {
        i = space(s, i + 1);
        if (top === OBJ) i = member(i);
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

/** A document's value; for an object, also its members (read while validating). */
export interface Document extends Span {
  members?: Member[];
}

/** The one value `text` holds (whitespace around it allowed), or a JsonSyntaxError. */
export function scanDocument(text: string): Document {
  const start = space(text, 0);
  const found: Member[] = [];
  const end = valueEnd(text, start, found);
  const after = space(text, end);
  if (after < text.length) fail('unexpected text after the value', after);
  const kind = kindAt(text, start);
  return kind === 'object' ? { kind, start, end, members: found } : { kind, start, end };
}

/** The end of a validated string starting at i: the first quote after it not escaped. */
function knownStringEnd(s: string, i: number): number {
  for (let j = s.indexOf('"', i + 1); ; j = s.indexOf('"', j + 1)) {
    let slashes = 0;
    while (s.charCodeAt(j - 1 - slashes) === 0x5c) slashes++;
    if (slashes % 2 === 0) return j + 1;
  }
}

/** The end of a validated value starting at i: strings jumped, brackets counted (no checks). */
function knownValueEnd(s: string, i: number): number {
  const c = s[i];
  if (c === '"') return knownStringEnd(s, i);
  if (c !== '{' && c !== '[') return scalarEnd(s, i);
  let depth = 0;
  for (let j = i; ; j++) {
    const ch = s.charCodeAt(j);
    if (ch === QUOTE) j = knownStringEnd(s, j) - 1;
    else if (ch === 0x7b || ch === 0x5b) depth++;
    else if ((ch === 0x7d || ch === 0x5d) && --depth === 0) return j + 1;
  }
}

/** A validated member: its name starts at `key`, its value spans [value, end). */
function memberAt(s: string, key: number, value: number, end: number): Member {
  const keyEnd = knownStringEnd(s, key);
  const raw = s.slice(key + 1, keyEnd - 1);
  const name = raw.includes('\\') ? (JSON.parse(s.slice(key, keyEnd)) as string) : raw;
  return { name, key: { kind: 'string', start: key, end: keyEnd }, value: { kind: kindAt(s, value), start: value, end } };
}

/** The members of a validated object, in the order written (a repeated name appears twice). */
export function members(text: string, object: Span | Document): Member[] {
  if ('members' in object && object.members) return object.members;
  const out: Member[] = [];
  let i = space(text, object.start + 1);
  while (text[i] !== '}') {
    const v = space(text, space(text, knownStringEnd(text, i)) + 1);
    const end = knownValueEnd(text, v);
    out.push(memberAt(text, i, v, end));
    i = space(text, end);
    if (text[i] === ',') i = space(text, i + 1);
  }
  return out;
}

/** Members by name; a repeated name keeps its last value, as JSON.parse does. */
export function memberMap(text: string, object: Span | Document): Map<string, Member> {
  return new Map(members(text, object).map((m) => [m.name, m]));
}

/** The text of a span. */
export const textOf = (text: string, span: Span): string => text.slice(span.start, span.end);

/** Whether a number span is an integer (no fraction, no exponent): exact as written, any size. */
export const isInteger = (text: string, span: Span): boolean => span.kind === 'number' && /^-?\d+$/.test(textOf(text, span));

/** The words a double's values beyond numbers are written with, in JSON text as strings. */
export const NON_FINITE = ['Infinity', '-Infinity', 'NaN'] as const;

/**
 * `text` (JSON but for bare `Infinity`, `-Infinity` and `NaN`, as an engine writes a double's
 * values beyond numbers) as JSON: each such word outside a string becomes a JSON string of
 * itself. Any other text is given back as it is, at the cost of one search.
 */
export function quoteNonFinite(text: string): string {
  if (!/Infinity|NaN/.test(text)) return text;
  let out = '';
  let from = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c === QUOTE) i = knownStringEnd(text, i) - 1;
    else if (c === 0x49 || c === 0x4e || c === 0x2d) {
      const word = NON_FINITE.find((w) => text.startsWith(w, i));
      if (!word) continue;
      out += `${text.slice(from, i)}"${word}"`;
      i += word.length - 1;
      from = i + 1;
    }
  }
  return out + text.slice(from);
}
