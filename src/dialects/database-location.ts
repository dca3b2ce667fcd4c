import { ScdError } from '../errors.js';

/**
 * A database location as a person gives it (--db, SCD_DATABASE_URL, a flow's "database"): a URL
 * of an engine scdkit opens (postgres://, postgresql://, pglite://, sc://), ':memory:', or a
 * DuckDB file path. A database path is never a URL: text that looks like one (any "://", a
 * user:password@ before a host, a password= setting) and is not one of these is refused in one
 * line that shows it with its credentials masked, so a mistyped scheme, a JDBC URL, a leading
 * space or the quotes an env file keeps never become a file of that name printed whole.
 */
export function checkDatabaseLocation(database: string): void {
  const shown = `"${maskCredentials(database)}"`;
  if (database === ':memory:' || database.startsWith(':memory:')) return;
  const fix = 'write postgres://user:password@host:port/database, pglite://FOLDER, sc://HOST:PORT or a DuckDB file path, with no spaces or quotes around it';
  if (ENGINE_URL.test(database)) {
    if (/^[\s"']|[\s"']$/.test(database))
      throw new ScdError('USAGE', `the database ${shown} ends with a space or a quote`, { fix: 'remove the spaces and quotes around the URL (an env file keeps the quotes)' });
    return;
  }
  const trimmed = database.replace(/^[\s"'`]+/, '');
  if (ENGINE_URL.test(trimmed))
    throw new ScdError('USAGE', `the database ${shown} starts with a space or a quote, so it is not read as a URL`, {
      fix: 'remove the spaces and quotes around the URL (an env file keeps the quotes)',
    });
  const scheme = /^([a-z][a-z0-9+.:-]*):\/\//i.exec(trimmed)?.[1];
  if (scheme !== undefined) throw new ScdError('USAGE', `the database ${shown} is not a URL scdkit opens ("${scheme}://" is no engine's scheme)`, { fix });
  if (database.includes('://') || looksLikeCredentials(database))
    throw new ScdError('USAGE', `the database ${shown} looks like a URL, and a database path is never a URL`, { fix });
}

/** The URLs scdkit opens: PostgreSQL (a server or PGlite) and Spark Connect. */
const ENGINE_URL = /^(postgres|postgresql|pglite|sc):\/\//i;

/** user:password@host, or a password given as a setting (`password=`, `pwd=`, JDBC's `;password=`). */
function looksLikeCredentials(text: string): boolean {
  return /^[\s"'`]*[^\s/\\@:]+:[^/\\@]*@/.test(text) || new RegExp(SECRET_SETTING.source, 'i').test(text);
}

/** A setting whose value is a secret: password=, pwd=, token=, secret=, sslpassword=, api_key=... */
const SECRET_SETTING = /([?&;]\s*)([^=&;?/]*(?:pass|pwd|secret|token|key)[^=&;?/]*)=([^&;]*)/gi;

/**
 * `text` with any credentials it may hold written as `***`: everything before the last "@" after
 * a "://" (or at the start, without one: user:password@host), and the value of every setting
 * naming a password, token, secret or key. The rest (scheme, host, database) stays, to be fixed.
 */
export function maskCredentials(text: string): string {
  const settings = text.replace(SECRET_SETTING, (_all, before: string, name: string) => `${before}${name}=***`);
  const scheme = settings.indexOf('://');
  const at = settings.lastIndexOf('@');
  if (at < 0) return settings;
  if (scheme >= 0 && at > scheme) return `${settings.slice(0, scheme + 3)}***${settings.slice(at)}`;
  if (scheme < 0) {
    const lead = /^[\s"'`]*/.exec(settings)![0];
    return `${lead}***${settings.slice(at)}`;
  }
  return settings;
}
