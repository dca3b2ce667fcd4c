/**
 * Text from the data (a value, a column name, a file name) as a terminal shows it without obeying
 * it: every character a terminal would act on instead of printing is written as its escape, so a
 * record can neither move the cursor, retitle or clear the screen, nor reorder what is read.
 * - a line break and a tab: `\n`, `\r`, `\t` (a table keeps one line a row);
 * - any other C0 control (ESC included), DEL and a C1 control: `\xHH` (`\x1b`, `\x7f`, `\x9b`);
 * - the bidirectional controls (embeddings, overrides, isolates, marks): `\u202e` and the like,
 *   which would show the characters after them in another order than they are stored.
 * Every escape is printable ASCII, one column a character, so a column's width is the escaped
 * text's length. A backslash stays as it is (NDJSON and CSV keep every value exact).
 */
export function terminalText(text: string): string {
  return text.replace(ACTED_ON, escapeOf);
}

/** C0, DEL, C1, and the bidirectional formatting characters (ALM, LRM, RLM, LRE..RLO, LRI..PDI). */
// biome-ignore lint/suspicious/noControlCharactersInRegex: the control characters are what it finds
const ACTED_ON = /[\u0000-\u001f\u007f-\u009f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]/g;

const NAMED: Record<string, string> = { '\n': '\\n', '\r': '\\r', '\t': '\\t' };

function escapeOf(c: string): string {
  const code = c.charCodeAt(0);
  return NAMED[c] ?? (code <= 0xff ? `\\x${code.toString(16).padStart(2, '0')}` : `\\u${code.toString(16).padStart(4, '0')}`);
}
