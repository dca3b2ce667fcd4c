import type { Dialect } from '../dialects/dialect.js';

/**
 * `text`, a date-time's text, with any digits of its fraction beyond the sixth dropped
 * (docs/TYPES.md "Times"): every engine keeps microseconds, and each then reads the same instant.
 * Left to itself PostgreSQL rounds (`23:59:59.9999995` would be the next second, tied with an
 * event there) where DuckDB drops them; no engine rounds a time scdkit hands it.
 *
 * Invariant: a date-time's fraction, when it has one, starts at its 20th character (after
 * `YYYY-MM-DDThh:mm:ss`, the fixed width of lexical.ts WALL_CLOCK); only a text with a seventh
 * digit there changes, and then only by losing the digits from the seventh on (an offset after
 * them stays). Any other text is returned as it is (a text that is no time stays no time).
 */
export function microsecondText(d: Dialect, text: string): string {
  const longFraction = `length(${text}) > 26 AND substr(${text}, 20, 1) = '.' AND ${d.matches(`substr(${text}, 21, 7)`, '[0-9]{7}')}`;
  // The first six digits are kept; the digits after them are removed, whatever follows stays.
  return `CASE WHEN ${longFraction} THEN concat(substr(${text}, 1, 26), regexp_replace(substr(${text}, 27), '^[0-9]+', '')) ELSE ${text} END`;
}
