import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import * as grpc from '@grpc/grpc-js';
import { RecordBatchReader } from 'apache-arrow';
import type { Row } from '../driver.js';
import { appendRows } from './arrow-rows.js';
import { readSparkConnectionString, type SparkConnection } from './connection-string.js';
import { type ExecutePlanResponse, type Plan, type Relation, type SparkConnectStub, sparkConnectService, type UserContext } from './spark-connect-protocol.js';
import { sparkError } from './spark-errors.js';

const VERSION = (JSON.parse(readFileSync(new URL('../../../package.json', import.meta.url), 'utf8')) as { version: string }).version;
/** What the client tells the server it is (ExecutePlanRequest.client_type, the gRPC user agent). */
export const CLIENT_TYPE = `scdkit/${VERSION}`;
/** The largest message the client accepts: an Arrow batch of wide rows can pass gRPC's 4 MB default. */
export const MAX_RECEIVE_BYTES = 256 * 1024 * 1024;

export interface ClientOptions {
  /** PEM certificates to trust for TLS instead of the system's (a private CA, a test server). */
  rootCertificates?: Buffer;
}

export interface StatementOptions {
  /** Aborting it cancels the call and asks the server to interrupt the operation. */
  signal?: AbortSignal;
}

/**
 * scdkit's own Spark Connect client: one server session (a fresh UUID unless the connection
 * string names one), SQL in, plain rows out (arrow-rows.ts). Three calls of the protocol:
 * ExecutePlan (a statement as a SqlCommand, a query as a SQL relation, results as Arrow IPC
 * batches), Interrupt (on abort) and ReleaseSession (at close). Executions are not reattachable:
 * a broken stream fails the statement, which the caller may run again.
 *
 * Invariant: no message, error or log line of this client holds the token or a header value
 * (spark-errors.ts scrubs every error; `location` is host and port only).
 */
export class SparkConnectClient {
  readonly location: string;
  readonly sessionId: string;
  private readonly stub: SparkConnectStub;
  private readonly userContext: UserContext;
  private readonly clientType: string;
  private closed = false;
  /** Whether a plan was sent: only then is there a server session to release. */
  private used = false;

  private constructor(
    private readonly connection: SparkConnection,
    options: ClientOptions,
  ) {
    this.location = connection.location;
    this.sessionId = connection.sessionId;
    this.userContext = { user_id: connection.userId };
    this.clientType = connection.userAgent ? `${connection.userAgent} ${CLIENT_TYPE}` : CLIENT_TYPE;
    const Service = sparkConnectService();
    this.stub = new Service(`${connection.host.includes(':') ? `[${connection.host}]` : connection.host}:${connection.port}`, credentials(connection, options.rootCertificates), {
      'grpc.max_receive_message_length': MAX_RECEIVE_BYTES,
      'grpc.max_send_message_length': 128 * 1024 * 1024,
      'grpc.primary_user_agent': CLIENT_TYPE,
      // No keepalive pings: gRPC servers refuse pings more frequent than they allow (5 min by
      // default in grpc-java) by closing the connection, which would fail a long statement.
    });
  }

  /** A client for the server a connection string names; no round trip until the first statement. */
  static connect(url: string, options: ClientOptions = {}): SparkConnectClient {
    return new SparkConnectClient(readSparkConnectionString(url), options);
  }

  /**
   * Run a statement eagerly (DDL, DML) as a SqlCommand; its result rows, if it has any (MERGE's
   * counts, DESCRIBE). Spark runs only commands eagerly: a plain query given here is not run (use
   * query() or stream()).
   */
  async execute(sql: string, options: StatementOptions = {}): Promise<Row[]> {
    const rows: Row[] = [];
    await this.executePlan(sql, { command: { sql_command: { input: sqlRelation(sql) } } }, options, (response) => {
      const relation = response.sql_command_result?.relation;
      if (relation?.local_relation?.data?.length) appendIpc(relation.local_relation.data, rows);
      if (response.arrow_batch) appendIpc(response.arrow_batch.data, rows);
    });
    return rows;
  }

  /** The rows of a query (a SQL relation), all in memory. */
  async query(sql: string, options: StatementOptions = {}): Promise<Row[]> {
    const rows: Row[] = [];
    for await (const batch of this.stream(sql, options)) for (const r of batch) rows.push(r);
    return rows;
  }

  /** The rows of a query, a batch at a time as the server sends them (stop early by breaking). */
  async *stream(sql: string, options: StatementOptions = {}): AsyncGenerator<Row[]> {
    // The generator drains the call itself, so that gRPC's flow control paces the server.
    const call = this.startPlan(sql, { root: sqlRelation(sql) }, options);
    let finished = false;
    try {
      for await (const response of call.stream as AsyncIterable<ExecutePlanResponse>) {
        if (response.arrow_batch?.data.length) {
          const rows: Row[] = [];
          appendIpc(response.arrow_batch.data, rows);
          if (rows.length) yield rows;
        }
      }
      finished = true;
    } catch (e) {
      throw call.failure(e);
    } finally {
      call.done(finished);
    }
  }

  /** Ask the server to stop every running operation of this session. */
  async interruptAll(): Promise<void> {
    await this.unary('Interrupt', { session_id: this.sessionId, user_context: this.userContext, client_type: this.clientType, interrupt_type: 'INTERRUPT_TYPE_ALL' });
  }

  /** Release the server session (its state and executions go) and close the channel. Idempotent. */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    if (!this.used) {
      this.stub.close();
      return;
    }
    try {
      await this.unary('ReleaseSession', { session_id: this.sessionId, user_context: this.userContext, client_type: this.clientType }, 10_000);
    } catch {
      // The session ends with the server's idle timeout anyway; closing never fails on it.
    } finally {
      this.stub.close();
    }
  }

  private async executePlan(sql: string, plan: Plan, options: StatementOptions, onResponse: (r: ExecutePlanResponse) => void): Promise<void> {
    const call = this.startPlan(sql, plan, options);
    let finished = false;
    try {
      for await (const response of call.stream as AsyncIterable<ExecutePlanResponse>) onResponse(response);
      finished = true;
    } catch (e) {
      throw call.failure(e);
    } finally {
      call.done(finished);
    }
  }

  /** Start one ExecutePlan; `done` cancels and interrupts it unless it finished. */
  private startPlan(sql: string, plan: Plan, options: StatementOptions) {
    if (this.closed) throw sparkError(new Error('the client is closed'), sql, this.connection);
    options.signal?.throwIfAborted();
    const operationId = randomUUID();
    this.used = true;
    const stream = this.stub.ExecutePlan(
      { session_id: this.sessionId, user_context: this.userContext, plan, client_type: this.clientType, operation_id: operationId },
      this.metadata(),
    );
    const onAbort = () => stream.cancel();
    options.signal?.addEventListener('abort', onAbort, { once: true });
    return {
      stream,
      failure: (e: unknown) => (options.signal?.aborted ? abortError(options.signal, sql, this.connection) : sparkError(e, sql, this.connection)),
      done: (finished: boolean) => {
        options.signal?.removeEventListener('abort', onAbort);
        if (finished) return;
        stream.cancel();
        // The server keeps running a cancelled operation until told: tell it, without waiting.
        this.unary('Interrupt', {
          session_id: this.sessionId,
          user_context: this.userContext,
          client_type: this.clientType,
          interrupt_type: 'INTERRUPT_TYPE_OPERATION_ID',
          operation_id: operationId,
        }).catch(() => undefined);
      },
    };
  }

  private unary(method: 'Interrupt' | 'ReleaseSession', request: never | object, timeoutMs = 30_000): Promise<void> {
    return new Promise((resolve, reject) => {
      const call = this.stub[method] as unknown as (r: object, m: grpc.Metadata, o: grpc.CallOptions, cb: (e: grpc.ServiceError | null) => void) => void;
      call.call(this.stub, request, this.metadata(), { deadline: Date.now() + timeoutMs }, (error) => (error ? reject(sparkError(error, method, this.connection)) : resolve()));
    });
  }

  private metadata(): grpc.Metadata {
    const m = new grpc.Metadata();
    for (const [k, v] of Object.entries(this.connection.headers)) m.set(k, v);
    return m;
  }
}

function sqlRelation(query: string): Relation {
  return { sql: { query } };
}

function appendIpc(ipc: Uint8Array, out: Row[]): void {
  for (const batch of RecordBatchReader.from(ipc)) appendRows(batch, out);
}

/** TLS when asked (or implied by a token); the token as `authorization: Bearer …` on every call. */
function credentials(c: SparkConnection, rootCertificates?: Buffer): grpc.ChannelCredentials {
  if (!c.useSsl) return grpc.credentials.createInsecure();
  const tls = grpc.credentials.createSsl(rootCertificates ?? null);
  if (!c.token) return tls;
  const token = c.token;
  const bearer = grpc.credentials.createFromMetadataGenerator((_params, callback) => {
    const m = new grpc.Metadata();
    m.set('authorization', `Bearer ${token}`);
    callback(null, m);
  });
  return grpc.credentials.combineChannelCredentials(tls, bearer);
}

function abortError(signal: AbortSignal, sql: string, c: SparkConnection): Error {
  const reason = signal.reason instanceof Error ? signal.reason.message : 'the statement was aborted';
  return sparkError(new Error(`interrupted: ${reason}`), sql, c);
}
