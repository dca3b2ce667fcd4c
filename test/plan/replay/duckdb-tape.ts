import { DuckDBDriver } from '../../../src/dialects/duckdb/duckdb-driver.js';
import type { SharedInstance } from '../../../src/dialects/duckdb/duckdb-instances.js';
import { KeyedMutex } from '../../../src/dialects/duckdb/keyed-mutex.js';
import type { Driver } from '../../../src/index.js';
import { FixtureRecorder, type FixtureTape } from './fixture.js';

/**
 * DuckDB's driver over a recorded connection: the driver's own code (staging, locks, scratch) runs
 * as it does on the engine, and only what it asks of `@duckdb/node-api` — prepare a statement,
 * then run it, read its rows or stream them — is recorded, or answered from a fixture.
 */

/** The parts of a DuckDB connection and its results the driver uses (duckdb-driver.ts). */
interface Connection {
  prepare(sql: string): Promise<Prepared>;
  closeSync(): void;
}
interface Prepared {
  bind(params: unknown[]): void;
  run(): Promise<unknown>;
  runAndReadAll(): Promise<{ getRowObjectsJson(): unknown[] }>;
  stream(): Promise<{ fetchChunk(): Promise<Chunk | null> }>;
  destroySync(): void;
}
interface Chunk {
  rowCount: number;
  getColumnValues(column: number): unknown[];
}

type DriverInternals = { connection: Connection; shared: SharedInstance };

/** Record what `driver` (opened by openDriver) sends from now on, and what DuckDB answers. */
export function recordDuckDB(driver: Driver): FixtureRecorder {
  const recorder = new FixtureRecorder();
  const internals = driver as unknown as DriverInternals;
  const real = internals.shared;
  internals.connection = recordingConnection(internals.connection, recorder);
  // A commit's scratch goes with its connection (discardScratch): the next one is recorded too.
  internals.shared = {
    targets: real.targets,
    release: () => real.release(),
    instance: { connect: async () => recordingConnection((await real.instance.connect()) as unknown as Connection, recorder) },
  } as unknown as SharedInstance;
  return recorder;
}

/** A DuckDB driver, as openDriver(':memory:') opens it, whose every statement is answered by `tape`. */
export function replayDuckDB(tape: FixtureTape): Driver {
  const connection = replayingConnection(tape);
  const shared = { targets: new KeyedMutex(), release: () => undefined, instance: { connect: async () => connection } };
  const Construct = DuckDBDriver as unknown as new (shared: unknown, connection: unknown, location: string, noWait: boolean) => Driver;
  return new Construct(shared, connection, ':memory:', false);
}

function recordingConnection(real: Connection, recorder: FixtureRecorder): Connection {
  return {
    closeSync: () => real.closeSync(),
    async prepare(sql) {
      // A statement DuckDB cannot prepare fails here, before it is used: recorded as a failed prepare.
      const statement = await real.prepare(sql).catch((e: unknown) => {
        recorder.failed('prepare', sql, e);
        throw e;
      });
      let params: unknown[] = [];
      return {
        bind: (p) => {
          params = p;
          statement.bind(p);
        },
        destroySync: () => statement.destroySync(),
        run: () => {
          const entry = recorder.begin('run', sql, params);
          return recorder.failing(entry, () => statement.run());
        },
        runAndReadAll: async () => {
          const entry = recorder.begin('read', sql, params);
          const result = await recorder.failing(entry, () => statement.runAndReadAll());
          entry.rows = result.getRowObjectsJson();
          return result;
        },
        stream: async () => {
          const entry = recorder.begin('stream', sql, params);
          const result = await recorder.failing(entry, () => statement.stream());
          entry.rows = [];
          return {
            fetchChunk: async () => {
              const chunk = await recorder.failing(entry, () => result.fetchChunk());
              if (chunk) for (const v of chunk.getColumnValues(0)) entry.rows!.push(v === null ? null : String(v));
              return chunk;
            },
          };
        },
      };
    },
  } satisfies Connection;
}

function replayingConnection(tape: FixtureTape): Connection {
  return {
    closeSync: () => undefined,
    async prepare(sql) {
      if (tape.has('prepare', sql)) tape.answer('prepare', sql);
      let params: unknown[] = [];
      return {
        bind: (p) => {
          params = p;
        },
        destroySync: () => undefined,
        run: async () => tape.answer('run', sql, params),
        runAndReadAll: async () => {
          const rows = tape.answer('read', sql, params).rows ?? [];
          return { getRowObjectsJson: () => rows };
        },
        stream: async () => {
          const values = tape.answer('stream', sql, params).rows ?? [];
          let sent = false;
          return {
            fetchChunk: async () => {
              if (sent) return null;
              sent = true;
              return { rowCount: values.length, getColumnValues: () => values };
            },
          };
        },
      };
    },
  } satisfies Connection;
}
