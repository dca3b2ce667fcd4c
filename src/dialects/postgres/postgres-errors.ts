import { QueryError } from '../../errors.js';

/** SQLSTATE disk_full: a table, an index, the WAL or a temporary file could not grow. */
export const DISK_FULL = '53100';

/** The SQLSTATE of an error PostgreSQL (a server or PGlite) raised, as its client hands it over. */
export function sqlState(e: unknown): string | undefined {
  const cause = e instanceof QueryError ? e.cause : e;
  const code = (cause as { code?: unknown } | undefined)?.code;
  return typeof code === 'string' ? code : undefined;
}
