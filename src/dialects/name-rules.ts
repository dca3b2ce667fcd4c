/**
 * What each engine cannot keep in a name (of a table or a column) as written. A name the engine
 * would cut short, or refuse only halfway through a commit, is refused before anything is written.
 * Each rule returns why the name cannot be kept, in words for the message, or undefined.
 */

/** No engine keeps a NUL character in a name (DuckDB's parser ends the statement at it). */
export function nulInName(name: string): string | undefined {
  return name.includes('\u0000') ? 'holds a NUL character (\\u0000), which no engine keeps in a name' : undefined;
}

/** PostgreSQL keeps the first 63 bytes of a name (NAMEDATALEN - 1) and drops the rest silently. */
export const POSTGRES_NAME_BYTES = 63;

export function postgresNameProblem(name: string): string | undefined {
  const bytes = Buffer.byteLength(name, 'utf8');
  return nulInName(name) ?? (bytes > POSTGRES_NAME_BYTES ? `is ${bytes} bytes long, and PostgreSQL keeps only the first ${POSTGRES_NAME_BYTES} bytes of a name` : undefined);
}

/** The characters a Delta table's column names cannot hold (without column mapping). */
const DELTA_REFUSED = /[ ,;{}()\n\t=]/;

const SHOWN: Record<string, string> = { ' ': 'a space', '\n': 'a line break', '\t': 'a tab' };

export function sparkNameProblem(name: string): string | undefined {
  const bad = DELTA_REFUSED.exec(name)?.[0];
  return nulInName(name) ?? (bad ? `holds ${SHOWN[bad] ?? `"${bad}"`}, which a Delta table's column names cannot hold (none of space , ; { } ( ) = tab or line break)` : undefined);
}
