import { randomUUID } from 'node:crypto';
import { ScdError } from '../../errors.js';

/**
 * A Spark Connect connection string, read the way Spark's own clients read it:
 *
 *   sc://host[:port][/][;key=value]...
 *
 * Known keys: `token` (sent as `authorization: Bearer …`, and implies TLS), `use_ssl`,
 * `user_id`, `user_agent`, `session_id` (a UUID: join that server session instead of a fresh one).
 * Any other `key=value` is sent as a request header (e.g. `x-databricks-cluster-id`), as written.
 * Values are taken as written (no percent-decoding), as Spark's clients do.
 */
export interface SparkConnection {
  host: string;
  port: number;
  /** TLS: asked by use_ssl=true, or implied by a token. */
  useSsl: boolean;
  /** Bearer token; never shown (see `location` and scrubToken). */
  token?: string;
  userId: string;
  userAgent?: string;
  /** The server session: the one asked, else a fresh UUID. */
  sessionId: string;
  /** Extra request headers, lower-case names (gRPC metadata keys are lower-case). */
  headers: Record<string, string>;
  /** sc://host:port, for messages: never a parameter (a header may be a secret too). */
  location: string;
}

export const DEFAULT_SPARK_CONNECT_PORT = 15002;
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
const FORM = 'write it as sc://host:port/;token=…;use_ssl=true;user_id=…;header-name=value';

/** Whether `url` is meant for Spark Connect. */
export function isSparkConnectUrl(url: string): boolean {
  return /^sc:\/\//i.test(url.trim());
}

/** Read a connection string, or refuse it in one line that shows none of its parameters. */
export function readSparkConnectionString(url: string): SparkConnection {
  const refuse = (why: string): never => {
    throw new ScdError('USAGE', `the Spark Connect connection string cannot be read: ${why} (its parameters are not shown: they may hold a token)`, {
      fix: FORM,
    });
  };
  const text = url.trim();
  if (!isSparkConnectUrl(text)) refuse('it does not start with sc://');
  const rest = text.slice('sc://'.length);
  const semicolon = rest.indexOf(';');
  let authority = semicolon < 0 ? rest : rest.slice(0, semicolon);
  const params = semicolon < 0 ? '' : rest.slice(semicolon + 1);
  if (authority.endsWith('/')) authority = authority.slice(0, -1);
  if (authority.includes('/') || authority.includes('?') || authority.includes('#') || authority.includes('@')) {
    refuse('only a host and a port may come before the first ";"');
  }
  const { host, port } = hostAndPort(authority, refuse);

  const known: Record<string, string> = {};
  const headers: Record<string, string> = {};
  for (const part of params.split(';')) {
    if (part === '') continue;
    const eq = part.indexOf('=');
    if (eq <= 0) refuse('a parameter is not key=value');
    const key = part.slice(0, eq).trim();
    const value = part.slice(eq + 1);
    if (!/^[A-Za-z0-9_.-]+$/.test(key)) refuse('a parameter name holds characters other than letters, digits, "_", "-" and "."');
    const lower = key.toLowerCase();
    if (['token', 'use_ssl', 'user_id', 'user_agent', 'session_id'].includes(lower)) known[lower] = value;
    else headers[lower] = value;
  }
  if (known.use_ssl !== undefined && !/^(true|false)$/i.test(known.use_ssl)) refuse('use_ssl is neither true nor false');
  if (known.session_id !== undefined && !UUID.test(known.session_id)) refuse('session_id is not a UUID');
  if (known.token === '') refuse('token is empty');
  const token = known.token;
  return {
    host,
    port,
    useSsl: /^true$/i.test(known.use_ssl ?? '') || token !== undefined,
    ...(token !== undefined ? { token } : {}),
    userId: known.user_id || process.env.USER || 'scdkit',
    ...(known.user_agent ? { userAgent: known.user_agent } : {}),
    sessionId: known.session_id?.toLowerCase() ?? randomUUID(),
    headers,
    location: `sc://${host.includes(':') ? `[${host}]` : host}:${port}`,
  };
}

function hostAndPort(authority: string, refuse: (why: string) => never): { host: string; port: number } {
  let host: string;
  let portText: string | undefined;
  if (authority.startsWith('[')) {
    const close = authority.indexOf(']');
    if (close < 0) refuse('an IPv6 address lacks its "]"');
    host = authority.slice(1, close);
    const after = authority.slice(close + 1);
    if (after !== '' && !after.startsWith(':')) refuse('only a port may follow the IPv6 address');
    portText = after ? after.slice(1) : undefined;
  } else {
    const colon = authority.lastIndexOf(':');
    host = colon < 0 ? authority : authority.slice(0, colon);
    portText = colon < 0 ? undefined : authority.slice(colon + 1);
  }
  if (!host) refuse('it names no host');
  if (portText === undefined) return { host, port: DEFAULT_SPARK_CONNECT_PORT };
  if (!/^\d{1,5}$/.test(portText) || Number(portText) < 1 || Number(portText) > 65535) refuse('the port is not a number from 1 to 65535');
  return { host, port: Number(portText) };
}

/**
 * `message` without the connection's secrets: the token and every header value (a header such as
 * a cluster id is not secret, but one passed through may be: none is shown).
 */
export function scrubSecrets(message: string, connection: Pick<SparkConnection, 'token' | 'headers'>): string {
  const secrets = [connection.token, ...Object.values(connection.headers)].filter((s): s is string => !!s && s.length >= 4).sort((a, b) => b.length - a.length);
  let out = message;
  for (const s of secrets) out = out.split(s).join('***');
  // A bearer credential in any form, whatever its source.
  return out.replace(/(bearer\s+)[^\s,;"']+/gi, '$1***');
}
