/**
 * JSON's number syntax (RFC 8259), as a regular expression without anchors. Where one file of a
 * commit holds a column as JSON and another (CSV) as text, a text value that spells a JSON number
 * (or true/false) is staged as that value, any other as a JSON string (each engine's stage).
 */
export const JSON_NUMBER = '-?(0|[1-9][0-9]*)([.][0-9]+)?([eE][+-]?[0-9]+)?';

/**
 * A JSON number as a JavaScript value that names exactly the number written: the JS number when
 * it prints as the same decimal (`0.1`, `2.0`, `-0`, `1e308`), else the text as written
 * (`9007199254740993`, `9007199254740993.0`, a decimal of 20 digits), never a rounded number.
 * A text is what the `pg` client gives for a bigint or numeric: exact, and a string.
 */
export function exactNumber(text: string): number | string {
  const n = Number(text);
  return Number.isFinite(n) && sameDecimal(String(n), text) ? n : text;
}

/**
 * Whether a JSON text may hold a number that a JS number does not name exactly: one of 16 digits
 * or more, or with an exponent of three digits (a number of 15 significant digits or fewer within
 * a double's range always prints back as itself). A cheap test that may say yes of a string.
 */
export function mayHoldInexactNumber(json: string): boolean {
  return /\d[\d.]{15}|[eE][+-]?\d{3}/.test(json);
}

/** Whether two texts in number syntax name the same decimal number (zero's sign aside). */
function sameDecimal(a: string, b: string): boolean {
  const x = decimalParts(a);
  const y = decimalParts(b);
  return !!x && !!y && x.digits === y.digits && (x.digits === '' || (x.negative === y.negative && x.exponent === y.exponent));
}

/** A number's sign, significant digits (no leading or trailing zeros) and the power of ten of its first digit. */
function decimalParts(text: string): { negative: boolean; digits: string; exponent: number } | undefined {
  const m = /^([+-]?)(\d*)(?:\.(\d*))?(?:[eE]([+-]?\d+))?$/.exec(text);
  if (!m) return undefined;
  const whole = m[2] ?? '';
  const all = whole + (m[3] ?? '');
  const lead = all.length - all.replace(/^0+/, '').length;
  const digits = all.slice(lead).replace(/0+$/, '');
  return { negative: m[1] === '-', digits, exponent: whole.length - lead - 1 + Number(m[4] ?? 0) };
}
