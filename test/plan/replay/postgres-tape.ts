import { readFileSync, writeFileSync } from 'node:fs';
import { PostgresDriver } from '../../../src/dialects/postgres/index.js';
import type { CopySource, PgClient, PgResult } from '../../../src/dialects/postgres/postgres-client.js';
import type { Driver } from '../../../src/index.js';
import { FixtureRecorder, type FixtureTape } from './fixture.js';

/**
 * PostgreSQL's driver over a recorded client: the driver's own code runs as it does on the engine,
 * and only what it asks of its connection (postgres-client.ts PgClient: a statement, a COPY in or
 * out) is recorded, or answered from a fixture. A COPY … FROM's input is read through and not
 * kept: what it loaded shows in the answers of the statements that read it.
 */

type DriverInternals = { client: PgClient };

/** Record what `driver` sends from now on, and what PostgreSQL answers. */
export function recordPostgres(driver: Driver): FixtureRecorder {
  const recorder = new FixtureRecorder();
  const internals = driver as unknown as DriverInternals;
  const real = internals.client;
  internals.client = {
    close: () => real.close(),
    async query(sql, params) {
      const entry = recorder.begin('query', sql, params);
      const result = await recorder.failing(entry, () => real.query(sql, params));
      entry.rows = result.rows;
      entry.fields = result.fields;
      return result;
    },
    copyFrom: (sql, source) => recorder.failing(recorder.begin('copyFrom', sql), () => real.copyFrom(sql, source)),
    async copyTo(sql, file) {
      const entry = recorder.begin('copyTo', sql);
      await recorder.failing(entry, () => real.copyTo(sql, file));
      entry.file = readFileSync(file, 'utf8');
    },
  } satisfies PgClient;
  return recorder;
}

/** A PostgreSQL driver of the schema `schema`, as it is once opened, whose every statement is answered by `tape`. */
export function replayPostgres(tape: FixtureTape, schema: string): Driver {
  const client: PgClient = {
    close: async () => undefined,
    query: async (sql, params) => {
      const entry = tape.answer('query', sql, params);
      return { rows: entry.rows ?? [], fields: entry.fields ?? [] } as PgResult;
    },
    async copyFrom(sql, source) {
      await readThrough(source);
      tape.answer('copyFrom', sql);
    },
    copyTo: async (sql, file) => writeFileSync(file, tape.answer('copyTo', sql).file ?? ''),
  };
  const Construct = PostgresDriver as unknown as new (client: PgClient, location: string, schema: string, options: object) => Driver;
  return new Construct(client, 'pglite://memory', schema, {});
}

/** Read a COPY's input to its end, as the engine would (a source that fails, fails here too). */
async function readThrough(source: CopySource): Promise<void> {
  if ('file' in source) readFileSync(source.file);
  else for await (const _chunk of source.chunks);
}
