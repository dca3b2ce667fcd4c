import type { Driver, Row } from '../../../src/dialects/driver.js';
import type { SparkConnectClient } from '../../../src/dialects/spark/spark-connect-client.js';
import { SparkDriver } from '../../../src/dialects/spark/spark-driver.js';
import { FixtureRecorder, type FixtureTape } from './fixture.js';

/**
 * Spark's driver over a recorded Spark Connect client: the driver's own code (binding parameters
 * as literals, deferring scratch into scripts, the target's lease, staging) runs as it does on
 * the engine, and only what it asks of the client is recorded, or answered from a fixture: a
 * command (execute), a query's rows, whole or as a stream. The client is all the driver talks to
 * Spark through; staging reads its files by their path on the server, so nothing is uploaded.
 * Interrupting the session (on an abort) is not recorded: replayed, it does nothing. Rows are
 * kept as the client gives them, decoded from Arrow (arrow-rows.ts): the decoding itself runs only
 * when recording, and a stream's batches are replayed as one.
 */

/** The parts of the client the driver uses (spark-connect-client.ts). */
type Client = Pick<SparkConnectClient, 'location' | 'sessionId' | 'execute' | 'query' | 'stream' | 'interruptAll' | 'close'>;
type DriverInternals = { client: Client };

/** Record what `driver` (SparkDriver.connect) sends from now on, and what Spark answers. */
export function recordSpark(driver: Driver): FixtureRecorder {
  const recorder = new FixtureRecorder();
  const internals = driver as unknown as DriverInternals;
  const real = internals.client;
  const rowsOf = async (call: 'execute' | 'query', sql: string) => {
    const entry = recorder.begin(call, sql);
    const rows = await recorder.failing(entry, () => real[call](sql));
    entry.rows = rows;
    return rows;
  };
  internals.client = {
    location: real.location,
    sessionId: real.sessionId,
    interruptAll: () => real.interruptAll(),
    close: () => real.close(),
    execute: (sql) => rowsOf('execute', sql),
    query: (sql) => rowsOf('query', sql),
    async *stream(sql) {
      const entry = recorder.begin('stream', sql);
      entry.rows = [];
      try {
        for await (const batch of real.stream(sql)) {
          entry.rows.push(...batch);
          yield batch;
        }
      } catch (e) {
        await recorder.failing(entry, () => Promise.reject(e));
      }
    },
  } satisfies Client;
  return recorder;
}

/**
 * A Spark driver of the database `schema` on the server `location`, as it is once connected, whose
 * every statement is answered by `tape`.
 */
export function replaySpark(tape: FixtureTape, schema: string, location: string): Driver {
  const client: Client = {
    location,
    sessionId: 'replayed',
    interruptAll: async () => undefined,
    close: async () => undefined,
    execute: async (sql) => (tape.answer('execute', sql).rows ?? []) as Row[],
    query: async (sql) => (tape.answer('query', sql).rows ?? []) as Row[],
    async *stream(sql) {
      const rows = (tape.answer('stream', sql).rows ?? []) as Row[];
      if (rows.length) yield rows;
    },
  };
  const Construct = SparkDriver as unknown as new (client: Client, schema: string, options: object) => Driver;
  return new Construct(client, schema, {});
}
