import { JsonSyntaxError, space, valueEnd } from './json-text.js';

/** One element of a JSON array file: its number (from 1), its text, and why it is bad, if it is. */
export interface ArrayElement {
  n: number;
  /** The element's text as written (no whitespace at either end). */
  text: string;
  /** Where the element starts in the file's text (a UTF-16 index). */
  at: number;
  reason?: string;
}

/**
 * How a file that is one JSON array reads: its elements, or `unclosed` when the text ends before
 * the array closes (a file still being written, or cut short): no element after the last good one
 * can be told whole, so nothing of the file is read.
 */
export type ArrayReading = { elements: ArrayElement[] } | { unclosed: { element: number; at: number } };

/**
 * The elements of `text`, whose first non-blank character is `[`. Each element is validated alone
 * (json-text.ts `valueEnd`, exactly what JSON.parse accepts), so one broken element is one bad
 * element, with its text, and the others read as they are.
 *
 * Where a broken element ends is found by resyncing (resyncAfter); when no later element can be
 * found, the broken element runs to the array's closing bracket. When the text ends without one,
 * the array is unclosed. Text after the closing bracket is one bad element.
 */
export function readJsonArray(text: string): ArrayReading {
  const elements: ArrayElement[] = [];
  let i = space(text, space(text, 0) + 1);
  if (text[i] === ']') return { elements: afterClose(text, i, elements) };
  for (let n = 1; ; n++) {
    // Here element n starts at i.
    let end: number;
    let after: number;
    try {
      end = valueEnd(text, i);
      after = space(text, end);
      if (text[after] !== ',' && text[after] !== ']') throw new JsonSyntaxError(after < text.length ? 'expected "," or "]" after the element' : 'unexpected end', after);
    } catch (e) {
      if (!(e instanceof JsonSyntaxError)) throw e;
      const reason = `malformed JSON: ${e.problem} at position ${e.position - i} of the element`;
      const next = resyncAfter(text, i);
      if (next) {
        elements.push({ n, text: text.slice(i, next.comma).trimEnd(), at: i, reason });
        i = next.element;
        continue;
      }
      const close = closingBracket(text);
      if (close < i) return { unclosed: { element: n, at: i } };
      const rest = text.slice(i, close).trimEnd();
      if (rest) elements.push({ n, text: rest, at: i, reason });
      return { elements };
    }
    elements.push({ n, text: text.slice(i, end), at: i });
    if (text[after] === ']') return { elements: afterClose(text, after, elements) };
    i = space(text, after + 1);
  }
}

/** The elements, and any text after the array's closing bracket at `close` as one bad element. */
function afterClose(text: string, close: number, elements: ArrayElement[]): ArrayElement[] {
  const rest = space(text, close + 1);
  if (rest < text.length) {
    const last = elements[elements.length - 1];
    elements.push({ n: (last?.n ?? 0) + 1, text: text.slice(rest).trimEnd(), at: rest, reason: 'malformed JSON: text after the end of the array' });
  }
  return elements;
}

/** The position of the text's last non-blank character when it is `]`, else -1. */
function closingBracket(text: string): number {
  let end = text.length;
  while (end > 0 && /\s/.test(text[end - 1]!)) end--;
  return text[end - 1] === ']' ? end - 1 : -1;
}

/**
 * Where the element after a broken one (starting at `from`) starts: the first `{` after `from`
 * that
 * - follows a comma (blanks aside): it starts an element, not a member's value;
 * - is at most one level inside the broken element, counting brackets outside strings (a string
 *   ends at a line's end too, as JSON strings hold no line break): an object in an array inside
 *   the broken element is two levels in, and is never taken for a record;
 * - starts a valid object followed by `,` or `]`.
 * `comma` is the comma before it (the broken element ends there). Undefined when there is none.
 */
export function resyncAfter(text: string, from: number): { comma: number; element: number } | undefined {
  let depth = 0;
  let inString = false;
  let comma = -1;
  for (let p = from; p < text.length; p++) {
    const c = text[p]!;
    if (inString) {
      if (c === '\\') p++;
      else if (c === '"' || c === '\n') inString = false;
      continue;
    }
    if (c === '"') inString = true;
    else if (c === ',') comma = p;
    else if (c === '{' && p > from && depth <= 1 && comma >= 0 && space(text, comma + 1) === p && startsElement(text, p)) return { comma, element: p };
    if (c === '{' || c === '[') depth++;
    else if (c === '}' || c === ']') depth--;
  }
  return undefined;
}

/** Whether a valid object starts at p and a `,` or `]` follows it. */
function startsElement(text: string, p: number): boolean {
  try {
    const after = text[space(text, valueEnd(text, p))];
    return after === ',' || after === ']';
  } catch (e) {
    if (e instanceof JsonSyntaxError) return false;
    throw e;
  }
}
