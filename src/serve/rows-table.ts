import { cell, valueText } from './format.js';
import { type Html, href, html } from './html.js';

export interface RowsTableOptions {
  /** Columns to show, in order. */
  columns: string[];
  /** Key columns: their cells link to the key's history. */
  keyColumns?: string[];
  /** Cells to highlight (e.g. what changed from the previous version). */
  highlight?: (row: Record<string, unknown>, column: string, index: number) => boolean;
  /** More columns after the data: a header and a cell per row. */
  extra?: Array<{ header: string; cell: (row: Record<string, unknown>, index: number) => Html | string }>;
  /** A class for a row (e.g. its change type). */
  rowClass?: (row: Record<string, unknown>) => string | undefined;
  empty?: string;
}

/** A column holding a text longer than this is given room to wrap it in lines, not in letters. */
const LONG_TEXT = 30;

/**
 * Rows as an HTML table: every value escaped, nulls shown as null, numbers right-aligned. A table
 * wider than the window scrolls sideways in its own box; the page does not.
 */
export function rowsTable(rows: Array<Record<string, unknown>>, o: RowsTableOptions): Html {
  if (!rows.length) return html`<p class="empty">${o.empty ?? '(no rows)'}</p>`;
  const keys = o.keyColumns ?? [];
  const long = new Set(o.columns.filter((c) => rows.some((r) => valueText(r[c]).length > LONG_TEXT)));
  const keyLink = (row: Record<string, unknown>) => href('/key', Object.fromEntries(keys.map((k) => [k, keyText(row[k])])));
  return html`<div class="wide"><table><thead><tr>${o.columns.map((c) => html`<th>${c}</th>`)}${(o.extra ?? []).map((e) => html`<th>${e.header}</th>`)}</tr></thead>
<tbody>${rows.map(
    (row, i) =>
      html`<tr class="${o.rowClass?.(row) ?? ''}">${o.columns.map((c) => {
        const classes = [typeof row[c] === 'number' ? 'num' : '', long.has(c) ? 'long' : '', o.highlight?.(row, c, i) ? 'changed' : ''].filter(Boolean).join(' ');
        const content = keys.includes(c) && row[c] !== null && row[c] !== undefined ? html`<a href="${keyLink(row)}">${cell(row[c])}</a>` : cell(row[c]);
        return html`<td class="${classes}">${content}</td>`;
      })}${(o.extra ?? []).map((e) => html`<td>${e.cell(row, i)}</td>`)}</tr>`,
  )}</tbody></table></div>`;
}

/** A key value as the key page's query takes it (its text, as the engine writes it). */
export function keyText(v: unknown): string {
  return v === null || v === undefined ? '' : typeof v === 'object' ? JSON.stringify(v) : String(v);
}
