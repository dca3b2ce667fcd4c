/**
 * A text's width in an SVG drawn at 11 px (the pages' chart font), estimated without a browser:
 * pages carry no script, so charts are laid out on the server. The estimate errs wide (a full-width
 * character, e.g. CJK or an emoji, counts as two), so a text placed by it stays inside its chart.
 */
export function textWidth(text: string): number {
  let width = 0;
  for (const ch of text) width += isWide(ch.codePointAt(0)!) ? 12 : 7;
  return width;
}

/** The longest start of `text` (with an ellipsis when cut) that is at most `max` px wide. */
export function fitText(text: string, max: number): string {
  if (textWidth(text) <= max) return text;
  let out = '';
  for (const ch of text) {
    if (textWidth(`${out}${ch}…`) > max) break;
    out += ch;
  }
  return `${out}…`;
}

/** East Asian wide and full-width characters, and emoji: drawn about twice as wide as a letter. */
function isWide(cp: number): boolean {
  return (
    (cp >= 0x1100 && cp <= 0x115f) ||
    (cp >= 0x2e80 && cp <= 0xa4cf) ||
    (cp >= 0xac00 && cp <= 0xd7a3) ||
    (cp >= 0xf900 && cp <= 0xfaff) ||
    (cp >= 0xfe30 && cp <= 0xfe4f) ||
    (cp >= 0xff00 && cp <= 0xff60) ||
    (cp >= 0xffe0 && cp <= 0xffe6) ||
    cp >= 0x1f000
  );
}
