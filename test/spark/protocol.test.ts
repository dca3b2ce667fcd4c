import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import * as grpc from '@grpc/grpc-js';
import * as protoLoader from '@grpc/proto-loader';
import { tableFromArrays, tableToIPC } from 'apache-arrow';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CLIENT_TYPE, SparkConnectClient } from '../../src/dialects/spark/spark-connect-client.js';
import { PROTO_FILE } from '../../src/dialects/spark/spark-connect-protocol.js';
import { QueryError, ScdError } from '../../src/errors.js';

const TOKEN = 'dapiTOKEN0123456789secret';
const CLUSTER = 'cluster-0123-secret-ish';

/** A message as the fake server gets and sends it: proto-loader's plain objects, fields by their proto names. */
// biome-ignore lint/suspicious/noExplicitAny: proto-loader's messages carry no static types; the fake server reads and writes them freely
type Message = any;

/** The part of the loaded package definition the fake server serves. */
interface SparkConnectPackage {
  spark: { connect: { SparkConnectService: { service: grpc.ServiceDefinition } } };
}

interface Seen {
  method: string;
  request: Record<string, unknown>;
  metadata: Record<string, unknown>;
}

/**
 * An in-process Spark Connect server speaking scdkit's protocol subset over TLS (a self-signed
 * certificate made for the test): it records what the client sends and answers like Spark does.
 */
describe('Spark Connect protocol against a fake server (unit: always run)', () => {
  const seen: Seen[] = [];
  let server: grpc.Server;
  let port = 0;
  let dir = '';
  let cert: Buffer;
  const connect = (extra = '') =>
    SparkConnectClient.connect(`sc://localhost:${port}/;token=${TOKEN};user_id=ada;x-databricks-cluster-id=${CLUSTER}${extra}`, { rootCertificates: cert });

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'scd-spark-tls-'));
    execFileSync(
      'openssl',
      [
        'req',
        '-x509',
        '-newkey',
        'rsa:2048',
        '-nodes',
        '-keyout',
        join(dir, 'key.pem'),
        '-out',
        join(dir, 'cert.pem'),
        '-days',
        '1',
        '-subj',
        '/CN=localhost',
        '-addext',
        'subjectAltName=DNS:localhost',
      ],
      { stdio: 'ignore' },
    );
    cert = readFileSync(join(dir, 'cert.pem'));
    const loaded = grpc.loadPackageDefinition(
      protoLoader.loadSync(PROTO_FILE, { keepCase: true, longs: String, enums: String, defaults: false, oneofs: true }),
    ) as unknown as SparkConnectPackage;
    const record = (method: string, call: { request: Record<string, unknown>; metadata: grpc.Metadata }) =>
      seen.push({ method, request: call.request, metadata: call.metadata.getMap() });
    server = new grpc.Server();
    server.addService(loaded.spark.connect.SparkConnectService.service, {
      ExecutePlan: (call: grpc.ServerWritableStream<Message, Message>) => {
        record('ExecutePlan', call);
        const plan = call.request.plan;
        const sql: string = plan.root?.sql?.query ?? plan.command?.sql_command?.input?.sql?.query;
        if (sql.startsWith('FAIL')) {
          // Spark's message, with the plan after it; here it also echoes the credentials.
          call.emit('error', { code: grpc.status.INTERNAL, details: `[TABLE_OR_VIEW_NOT_FOUND] no table; token ${TOKEN} cluster ${CLUSTER}\n== Plan ==\n'Project` });
          return;
        }
        if (sql.startsWith('SLOW')) return; // never answers: the client must abort
        if (sql.startsWith('MANY')) {
          // Batches, and then no end: a reader that stops early must cancel and interrupt.
          const batch = tableToIPC(tableFromArrays({ x: Int32Array.from([7]) }), 'stream');
          for (let i = 0; i < 3; i++) call.write({ session_id: call.request.session_id, arrow_batch: { row_count: 1, data: Buffer.from(batch) } });
          return;
        }
        const ipc = tableToIPC(tableFromArrays({ x: Int32Array.from([1, 2]) }), 'stream');
        if (plan.command) call.write({ session_id: call.request.session_id, sql_command_result: { relation: { local_relation: { data: Buffer.from(ipc) } } } });
        else call.write({ session_id: call.request.session_id, arrow_batch: { row_count: 2, data: Buffer.from(ipc) } });
        call.end();
      },
      Interrupt: (call: grpc.ServerUnaryCall<Message, Message>, callback: grpc.sendUnaryData<Message>) => {
        record('Interrupt', call);
        callback(null, { session_id: call.request.session_id, interrupted_ids: [call.request.operation_id] });
      },
      ReleaseSession: (call: grpc.ServerUnaryCall<Message, Message>, callback: grpc.sendUnaryData<Message>) => {
        record('ReleaseSession', call);
        callback(null, { session_id: call.request.session_id });
      },
    });
    const credentials = grpc.ServerCredentials.createSsl(null, [{ private_key: readFileSync(join(dir, 'key.pem')), cert_chain: cert }], false);
    port = await new Promise<number>((resolve, reject) => server.bindAsync('127.0.0.1:0', credentials, (e, p) => (e ? reject(e) : resolve(p))));
  });
  afterAll(() => {
    server?.forceShutdown();
    rmSync(dir, { recursive: true, force: true });
  });

  it('sends a query as a SQL relation and a statement as a SqlCommand, with the session, user, client type, token and headers', async () => {
    const client = connect();
    seen.length = 0;
    expect(await client.query('SELECT x')).toEqual([{ x: 1 }, { x: 2 }]);
    expect(await client.execute('INSERT x')).toEqual([{ x: 1 }, { x: 2 }]);
    await client.close();
    const [query, statement, release] = seen;
    expect(query!.request).toMatchObject({
      session_id: client.sessionId,
      user_context: { user_id: 'ada' },
      client_type: CLIENT_TYPE,
      plan: { root: { sql: { query: 'SELECT x' } } },
    });
    expect(query!.request.operation_id).toMatch(/^[0-9a-f-]{36}$/);
    expect(statement!.request).toMatchObject({ plan: { command: { sql_command: { input: { sql: { query: 'INSERT x' } } } } } });
    expect(CLIENT_TYPE).toMatch(/^scdkit\/\d+\.\d+\.\d+/);
    for (const s of [query!, statement!, release!]) {
      expect(s.metadata.authorization).toBe(`Bearer ${TOKEN}`);
      expect(s.metadata['x-databricks-cluster-id']).toBe(CLUSTER);
    }
    expect(release).toMatchObject({ method: 'ReleaseSession', request: { session_id: client.sessionId } });
  });

  it('never shows the token or a header value in an error, and keeps it to one line', async () => {
    const client = connect();
    const e = (await client.query('FAIL now').catch((x: unknown) => x)) as QueryError;
    expect(e).toBeInstanceOf(QueryError);
    expect(e.message).toBe('query failed: [TABLE_OR_VIEW_NOT_FOUND] no table; token *** cluster ***');
    expect(e.reason).not.toContain(TOKEN);
    expect(JSON.stringify(e, Object.getOwnPropertyNames(e))).not.toContain(TOKEN);
    expect(String((e.cause as Error).message)).not.toContain(CLUSTER);
    await client.close();
    // A server that is not there: DB_UNREACHABLE, with the place but without the parameters.
    const nowhere = SparkConnectClient.connect(`sc://127.0.0.1:1/;token=${TOKEN};x-databricks-cluster-id=${CLUSTER}`);
    const down = (await nowhere.query('SELECT 1').catch((x: unknown) => x)) as ScdError;
    expect(down).toBeInstanceOf(ScdError);
    expect(down.code).toBe('DB_UNREACHABLE');
    expect(down.oneLine()).toContain('sc://127.0.0.1:1');
    expect(down.oneLine()).not.toContain(TOKEN);
    expect(down.oneLine()).not.toContain(CLUSTER);
    expect(down.oneLine()).not.toContain('\n');
    await nowhere.close();
  });

  it('cancels the call and sends Interrupt for its operation when the signal aborts', async () => {
    const client = connect();
    seen.length = 0;
    const abort = new AbortController();
    setTimeout(() => abort.abort(), 200);
    await expect(client.query('SLOW', { signal: abort.signal })).rejects.toThrow(/interrupted/);
    await new Promise((r) => setTimeout(r, 300));
    const execute = seen.find((s) => s.method === 'ExecutePlan')!;
    const interrupt = seen.find((s) => s.method === 'Interrupt')!;
    expect(interrupt.request).toMatchObject({ session_id: client.sessionId, interrupt_type: 'INTERRUPT_TYPE_OPERATION_ID', operation_id: execute.request.operation_id });
    await client.close();
  });

  it('cancels and interrupts the operation when a reader stops reading a stream early', async () => {
    const client = connect();
    seen.length = 0;
    const got: unknown[] = [];
    for await (const batch of client.stream('MANY')) {
      got.push(...batch);
      break;
    }
    expect(got).toEqual([{ x: 7 }]);
    await new Promise((r) => setTimeout(r, 300));
    const execute = seen.find((s) => s.method === 'ExecutePlan')!;
    expect(seen.find((s) => s.method === 'Interrupt')?.request).toMatchObject({ interrupt_type: 'INTERRUPT_TYPE_OPERATION_ID', operation_id: execute.request.operation_id });
    await client.close();
  });
});
