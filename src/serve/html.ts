/**
 * HTML built by a tagged template that escapes every interpolated value: a value becomes markup
 * only when it is already `Html` (made by this template or `raw`). Pages never concatenate
 * strings into markup, so a value read from the database cannot open a tag or an attribute.
 */
export class Html {
  constructor(readonly text: string) {}
  toString(): string {
    return this.text;
  }
}

/** Escape text for an element's content or a quoted attribute value. */
export function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c]!);
}

type Part = Html | string | number | boolean | null | undefined | Part[];

function render(part: Part): string {
  if (part === null || part === undefined || part === false) return '';
  if (part instanceof Html) return part.text;
  if (Array.isArray(part)) return part.map(render).join('');
  return escapeHtml(String(part));
}

/** `html\`<td>${value}</td>\``: the values escaped, nested Html and arrays of it kept. */
export function html(strings: TemplateStringsArray, ...values: Part[]): Html {
  let out = strings[0]!;
  values.forEach((v, i) => {
    out += render(v) + strings[i + 1]!;
  });
  return new Html(out);
}

/** Markup written by scdkit itself (constant CSS, a generated SVG path): never a value read. */
export function raw(text: string): Html {
  return new Html(text);
}

/**
 * A link to a page of this server: the path and its query, encoded (the template escapes it). A
 * parameter that is undefined is left out; an empty one is kept (a key part may be the empty string).
 */
export function href(path: string, params: Record<string, string | number | undefined> = {}): string {
  const query = new URLSearchParams();
  for (const [k, v] of Object.entries(params)) if (v !== undefined) query.set(k, String(v));
  const s = query.toString();
  return s ? `${path}?${s}` : path;
}
