import { valueText } from '../query/output.js';

/** Render rows as an aligned text table for people (NDJSON is for machines). */
export function renderTable(columns: string[], rows: Array<Record<string, unknown>>): string {
  // One line per row: a line break or tab inside a value is shown as its escape (\n, \r, \t).
  const cell = (v: unknown) => valueText(v).replace(/[\n\r\t]/g, (c) => (c === '\n' ? '\\n' : c === '\r' ? '\\r' : '\\t'));
  const widths = columns.map((c) => Math.max(c.length, ...rows.map((r) => cell(r[c]).length)));
  const line = (vals: string[]) => vals.map((v, i) => v.padEnd(widths[i]!)).join('  ').trimEnd();
  const out = [line(columns), line(widths.map((w) => '-'.repeat(w)))];
  for (const r of rows) out.push(line(columns.map((c) => cell(r[c]))));
  return out.join('\n') + '\n';
}

export function plural(n: number, word: string, many = `${word}s`): string {
  return `${n} ${n === 1 ? word : many}`;
}
