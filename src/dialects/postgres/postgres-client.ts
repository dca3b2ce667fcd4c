import { createReadStream, createWriteStream, openAsBlob } from 'node:fs';
import { writeFile } from 'node:fs/promises';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import type { Row } from '../driver.js';

/**
 * The little a PostgreSQL driver needs from a connection, so that one driver class serves both
 * `pg` (a server) and PGlite (in-process WASM PostgreSQL).
 */
export interface PgField {
  name: string;
  dataTypeID: number;
  dataTypeModifier?: number;
}

export interface PgResult {
  rows: Row[];
  fields: PgField[];
}

/** COPY input: a file streamed as it is, or rows already in COPY's format, in chunks of whole rows. */
export type CopySource = { file: string } | { chunks: AsyncIterable<string> };

export interface PgClient {
  /** One statement through the extended protocol: a string that holds two is refused, neither runs. */
  query(sql: string, params?: unknown[]): Promise<PgResult>;
  /** `COPY ... FROM STDIN`, streamed. */
  copyFrom(sql: string, source: CopySource): Promise<void>;
  /** `COPY ... TO STDOUT` into a file, streamed. */
  copyTo(sql: string, file: string): Promise<void>;
  close(): Promise<void>;
}

/** Types read as their PostgreSQL text (like the DuckDB driver's JSON values): int8, numeric, dates, times, json. */
export const TEXT_TYPES = [20, 1700, 1082, 1083, 1114, 1184, 1186, 1266, 114, 3802];

// ---------------------------------------------------------------- pg

type PgLike = {
  query(config: { text: string; values?: unknown[] } | unknown): Promise<{ rows: Row[]; fields: PgField[] }> | unknown;
  end(): Promise<void>;
};

export class NodePgClient implements PgClient {
  constructor(
    private readonly client: PgLike,
    private readonly copy: { from(sql: string): NodeJS.WritableStream; to(sql: string): NodeJS.ReadableStream },
  ) {}

  async query(sql: string, params: unknown[] = []): Promise<PgResult> {
    // Without values pg would send the text as a simple query, which runs every statement in it.
    const r = (await (this.client.query({ text: sql, values: params, queryMode: 'extended' }) as Promise<{ rows: Row[]; fields: PgField[] }>)) ?? {
      rows: [],
      fields: [],
    };
    return { rows: r.rows ?? [], fields: r.fields ?? [] };
  }

  async copyFrom(sql: string, source: CopySource): Promise<void> {
    const target = this.client.query(this.copy.from(sql)) as unknown as NodeJS.WritableStream;
    const input = 'file' in source ? createReadStream(source.file) : Readable.from(source.chunks);
    await pipeline(input, target);
  }

  async copyTo(sql: string, file: string): Promise<void> {
    const out = this.client.query(this.copy.to(sql)) as unknown as NodeJS.ReadableStream;
    await pipeline(out, createWriteStream(file));
  }

  async close(): Promise<void> {
    await this.client.end();
  }
}

// ---------------------------------------------------------------- PGlite

export interface PGliteLike {
  query<T = Row>(
    sql: string,
    params?: unknown[],
    options?: { blob?: Blob | File; parsers?: Record<number, (v: string, t: number) => unknown> },
  ): Promise<{ rows: T[]; fields: Array<{ name: string; dataTypeID: number }>; blob?: Blob }>;
  close(): Promise<void>;
}

const IDENTITY: Record<number, (v: string) => unknown> = Object.fromEntries(TEXT_TYPES.map((t) => [t, (v: string) => v]));

/** Rows per COPY batch into PGlite (it takes a whole blob at once). */
const PGLITE_COPY_BYTES = 8 << 20;

export class PGliteClient implements PgClient {
  /**
   * @param beforeEach runs before every statement (a shared instance switches its search_path).
   */
  constructor(
    private readonly db: PGliteLike,
    private readonly owns: boolean,
    private readonly beforeEach: () => Promise<void> = async () => {},
  ) {}

  async query(sql: string, params: unknown[] = []): Promise<PgResult> {
    await this.beforeEach();
    // PGlite's query is the extended protocol (its exec, the simple one, is never used).
    const r = await this.db.query(sql, params, { parsers: IDENTITY });
    return { rows: r.rows, fields: r.fields };
  }

  async copyFrom(sql: string, source: CopySource): Promise<void> {
    await this.beforeEach();
    const fromBlob = sql.replace(/\bFROM\s+STDIN\b/i, `FROM '/dev/blob'`);
    if ('file' in source) {
      await this.db.query(fromBlob, [], { blob: await openAsBlob(source.file) });
      return;
    }
    let parts: string[] = [];
    let size = 0;
    const flush = async () => {
      if (!parts.length) return;
      await this.db.query(fromBlob, [], { blob: new Blob(parts) });
      parts = [];
      size = 0;
    };
    for await (const chunk of source.chunks) {
      parts.push(chunk);
      size += chunk.length;
      if (size >= PGLITE_COPY_BYTES) await flush();
    }
    await flush();
  }

  async copyTo(sql: string, file: string): Promise<void> {
    await this.beforeEach();
    const r = await this.db.query(sql.replace(/\bTO\s+STDOUT\b/i, `TO '/dev/blob'`));
    await writeFile(file, Buffer.from(await (r.blob ?? new Blob([])).arrayBuffer()));
  }

  async close(): Promise<void> {
    if (this.owns) await this.db.close();
  }
}
