import { fileURLToPath } from 'node:url';
import * as grpc from '@grpc/grpc-js';
import * as protoLoader from '@grpc/proto-loader';

/**
 * The Spark Connect service as gRPC sees it, loaded from scdkit's own subset of the protocol
 * (proto/spark-connect.proto, shipped with the package). Decoded messages keep the protocol's
 * field names (snake_case), 64-bit integers as strings, bytes as Buffers, and name the member of a
 * oneof that is set (e.g. `response_type: 'arrow_batch'`).
 */
export const PROTO_FILE = fileURLToPath(new URL('../../../proto/spark-connect.proto', import.meta.url));

export interface UserContext {
  user_id: string;
  user_name?: string;
}

export interface Relation {
  sql?: { query: string };
  local_relation?: { data?: Buffer; schema?: string };
  rel_type?: 'sql' | 'local_relation';
}

export interface Plan {
  root?: Relation;
  command?: { sql_command: { input: Relation } };
}

export interface ExecutePlanRequest {
  session_id: string;
  user_context: UserContext;
  plan: Plan;
  client_type?: string;
  operation_id?: string;
  tags?: string[];
}

export interface ExecutePlanResponse {
  session_id: string;
  operation_id: string;
  response_id: string;
  server_side_session_id: string;
  response_type?: 'arrow_batch' | 'sql_command_result' | 'result_complete';
  arrow_batch?: { row_count: string; data: Buffer };
  sql_command_result?: { relation?: Relation };
  result_complete?: Record<string, never>;
}

export interface InterruptRequest {
  session_id: string;
  user_context: UserContext;
  client_type?: string;
  interrupt_type: 'INTERRUPT_TYPE_OPERATION_ID' | 'INTERRUPT_TYPE_ALL';
  operation_id?: string;
}

export interface ReleaseSessionRequest {
  session_id: string;
  user_context: UserContext;
  client_type?: string;
}

type Unary<Req> = (request: Req, metadata: grpc.Metadata, options: grpc.CallOptions, callback: (error: grpc.ServiceError | null) => void) => grpc.ClientUnaryCall;

/** The three calls scdkit makes. */
export interface SparkConnectStub extends grpc.Client {
  ExecutePlan(request: ExecutePlanRequest, metadata: grpc.Metadata, options?: grpc.CallOptions): grpc.ClientReadableStream<ExecutePlanResponse>;
  Interrupt: Unary<InterruptRequest>;
  ReleaseSession: Unary<ReleaseSessionRequest>;
}

type StubConstructor = new (address: string, credentials: grpc.ChannelCredentials, options?: grpc.ChannelOptions) => SparkConnectStub;

let service: StubConstructor | undefined;

/** The client constructor of the service (the protocol file is read once per process). */
export function sparkConnectService(): StubConstructor {
  if (!service) {
    const definition = protoLoader.loadSync(PROTO_FILE, { keepCase: true, longs: String, enums: String, defaults: false, oneofs: true });
    const loaded = grpc.loadPackageDefinition(definition) as unknown as { spark: { connect: { SparkConnectService: StubConstructor } } };
    service = loaded.spark.connect.SparkConnectService;
  }
  return service;
}
