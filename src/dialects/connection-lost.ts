import { ScdError } from '../errors.js';

/**
 * Whether `e` (or an error it was caused by) says the connection to a database server was lost
 * or could not be made: the server restarted, shut down, or ended this session
 * (pg_terminate_backend), or is not reachable now. A transaction cut off this way is rolled back
 * by the server, so nothing of it was kept; the same work may be tried again once it is back.
 */
export function connectionLost(e: unknown): boolean {
  for (let at: unknown = e, depth = 0; at !== undefined && at !== null && depth < 8; at = (at as { cause?: unknown }).cause, depth++) {
    if (at instanceof ScdError && at.code === 'DB_UNREACHABLE') return true;
    const code = (at as { code?: unknown }).code;
    if (typeof code === 'string' && (LOST_STATES.has(code) || code.startsWith('08') || NODE_CODES.has(code))) return true;
    const message = at instanceof Error ? at.message : typeof at === 'string' ? at : '';
    if (LOST_MESSAGES.test(message)) return true;
  }
  return false;
}

/** The first line of what `e` says about the lost connection, innermost cause first. */
export function lostReason(e: unknown): string {
  let reason = '';
  for (let at: unknown = e, depth = 0; at !== undefined && at !== null && depth < 8; at = (at as { cause?: unknown }).cause, depth++)
    if (at instanceof Error && at.message) reason = at instanceof ScdError ? at.problem : at.message;
  return reason.split('\n')[0]!.slice(0, 200);
}

/** SQLSTATEs of a session the server ended: admin_shutdown, crash_shutdown, cannot_connect_now (class 08 is checked whole). */
const LOST_STATES = new Set(['57P01', '57P02', '57P03']);
/** Node's socket errors. */
const NODE_CODES = new Set(['ECONNREFUSED', 'ECONNRESET', 'EPIPE', 'ETIMEDOUT', 'EHOSTUNREACH', 'ENETUNREACH']);
/** node-postgres says these without a code. */
const LOST_MESSAGES = /Connection terminated|connection error and is not queryable|server closed the connection|terminating connection due to/i;
