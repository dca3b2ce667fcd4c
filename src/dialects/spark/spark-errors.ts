import { type ServiceError, status } from '@grpc/grpc-js';
import { firstLine, QueryError, ScdError } from '../../errors.js';
import { type SparkConnection, scrubSecrets } from './connection-string.js';

/** gRPC statuses that say the server was not reached (or refused the caller), not the statement. */
const UNREACHED = new Set<number>([status.UNAVAILABLE, status.UNAUTHENTICATED, status.PERMISSION_DENIED, status.DEADLINE_EXCEEDED]);

/**
 * A failed call as scdkit's errors, in one line and without a secret of the connection:
 * - the server not reached (or the credentials refused): ScdError DB_UNREACHABLE, with the fix;
 * - anything else (Spark refused the statement: "[TABLE_OR_VIEW_NOT_FOUND] …"): QueryError, whose
 *   message is the first line of Spark's (the rest is the plan and the SQL echoed).
 */
export function sparkError(e: unknown, sql: string, connection: SparkConnection): Error {
  const grpcError = isServiceError(e) ? e : undefined;
  const text = grpcError ? grpcError.details || grpcError.message : e instanceof Error ? e.message : String(e);
  const line = scrubSecrets(firstLine(text), connection);
  if (grpcError && UNREACHED.has(grpcError.code)) {
    const why = grpcError.code === status.UNAUTHENTICATED || grpcError.code === status.PERMISSION_DENIED ? 'the server refused the credentials' : 'the server did not answer';
    return new ScdError('DB_UNREACHABLE', `cannot use the Spark Connect server at ${connection.location}: ${why} (${line})`, {
      fix: 'start a local one with `npm run spark`, or check the host, port, token and use_ssl of the connection string',
    });
  }
  // The cause keeps the scrubbed line only: the gRPC error's metadata may echo request headers.
  return new QueryError(sql, [], new Error(line));
}

function isServiceError(e: unknown): e is ServiceError {
  return e instanceof Error && typeof (e as ServiceError).code === 'number' && 'details' in e;
}
