import { valueText } from '../query/output.js';
import { terminalText } from './terminal-text.js';

/**
 * Render rows as an aligned text table for people (NDJSON is for machines). One line per row:
 * every value and column name is terminalText (a control character or a line break shown as its
 * escape), and widths are measured on that text.
 */
export function renderTable(columns: string[], rows: Array<Record<string, unknown>>): string {
  const cell = (v: unknown) => terminalText(valueText(v));
  const heads = columns.map(terminalText);
  const widths = columns.map((c, i) => Math.max(heads[i]!.length, ...rows.map((r) => cell(r[c]).length)));
  const line = (vals: string[]) =>
    vals
      .map((v, i) => v.padEnd(widths[i]!))
      .join('  ')
      .trimEnd();
  const out = [line(heads), line(widths.map((w) => '-'.repeat(w)))];
  for (const r of rows) out.push(line(columns.map((c) => cell(r[c]))));
  return out.join('\n') + '\n';
}

export function plural(n: number, word: string, many = `${word}s`): string {
  return `${n} ${n === 1 ? word : many}`;
}
