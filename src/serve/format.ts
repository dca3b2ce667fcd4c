import { valueText } from '../query/output.js';
import { type Html, html } from './html.js';

/** A value as read: text for a person, exactly what the engine holds (query/output.ts valueText). */
export { valueText };

/** A value in a cell: null shown as such (not as an empty text). */
export function cell(v: unknown): Html {
  return v === null || v === undefined ? html`<span class="null">null</span>` : html`${valueText(v)}`;
}

/** A count with thousands separators. */
export function count(n: unknown): string {
  return Number(n ?? 0).toLocaleString('en-US');
}
