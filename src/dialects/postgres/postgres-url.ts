import { ScdError } from '../../errors.js';

/**
 * A PostgreSQL connection URL, read before `pg` sees it: where it points (for messages) and the
 * secrets no message may show. No part of a URL that does not read unambiguously is ever shown:
 * which of its parts is the password cannot be told.
 */
export interface ConnectionUrl {
  /** postgres://host:port/db: never the user name or the password. */
  location: string;
  /** Texts to remove from any message: the password (as written and decoded), the user name. */
  secrets: string[];
}

const ENCODE = 'percent-encode these characters in the user name and password: @ as %40, / as %2F, # as %23, ? as %3F';

/**
 * Read a connection URL, or refuse it in one line that shows none of it. Refused: a "#" (the
 * rest would be a fragment, silently cut off), an "@" after the host (an unencoded "@" or "/" in
 * the password made part of it the host or the database), and a URL that does not parse (a bad
 * port, an unencoded "/" or "?" before the host). Otherwise read as `pg` reads it.
 */
export function readConnectionUrl(url: string): ConnectionUrl {
  const refuse = (why: string, fix = ENCODE) => {
    throw new ScdError('USAGE', `the database URL cannot be read as postgres://user:password@host:port/database: ${why} (the URL is not shown: it may hold a password)`, {
      fix,
    });
  };
  if (url.includes('#')) refuse('it holds a "#"');
  const u = parse(url);
  if (!u) return refuse('it does not parse', `${ENCODE}, and give the port as a number up to 65535`);
  if ((u.pathname + u.search).includes('@')) refuse('it holds an "@" after the host');
  const decode = (s: string) => {
    try {
      return decodeURIComponent(s);
    } catch {
      return refuse('a "%" in it starts no percent-encoded character', `${ENCODE}, and % as %25`);
    }
  };
  const password = decode(u.password);
  const user = decode(u.username);
  const query = u.searchParams.get('password');
  return {
    location: locationOf(u),
    secrets: [u.password, password, query, process.env.PGPASSWORD, u.username, user].filter((s): s is string => !!s),
  };
}

/** postgres://host:port/db, never with the user name or password; the PG* variables for what the URL leaves out. */
export function safeLocation(url: string): string {
  try {
    return readConnectionUrl(url).location;
  } catch {
    return 'postgres://(unreadable URL)';
  }
}

/** `message` without any of the secrets (the longest first, so that none is left in part). */
export function scrub(message: string, secrets: string[]): string {
  let out = message;
  for (const s of [...secrets].sort((a, b) => b.length - a.length)) out = out.split(s).join('***');
  return out;
}

/**
 * The URL as pg-connection-string reads it: spaces and stray "%" encoded first, an empty host
 * (postgres://user@/db) allowed.
 */
function parse(url: string): URL | undefined {
  const text = / |%[^a-f0-9]|%[a-f0-9][^a-f0-9]/i.test(url) ? encodeURI(url).replace(/%25(\d\d)/g, '%$1') : url;
  for (const candidate of [text, text.replace('@/', '@___DUMMY___/')]) {
    try {
      return new URL(candidate);
    } catch {
      // the next form, or none
    }
  }
  return undefined;
}

function locationOf(u: URL): string {
  const hostname = u.hostname === '___DUMMY___' ? '' : u.hostname;
  const host = hostname || process.env.PGHOST || 'localhost';
  const port = u.port || process.env.PGPORT || '5432';
  let db: string;
  try {
    db = decodeURIComponent(u.pathname.replace(/^\//, ''));
  } catch {
    db = u.pathname.replace(/^\//, '');
  }
  return `postgres://${host}:${port}/${db || process.env.PGDATABASE || ''}`;
}
