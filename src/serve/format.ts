import { html, type Html } from './html.js';

/** A value as read (NDJSON conventions): text for a person; a struct (tuple sequence) as JSON. */
export function valueText(v: unknown): string {
  if (v === null || v === undefined) return '';
  if (typeof v === 'object') return JSON.stringify(v);
  return String(v);
}

/** A value in a cell: null shown as such (not as an empty text). */
export function cell(v: unknown): Html {
  return v === null || v === undefined ? html`<span class="null">null</span>` : html`${valueText(v)}`;
}

/** A count with thousands separators. */
export function count(n: unknown): string {
  return Number(n ?? 0).toLocaleString('en-US');
}
