import { DuckDBInstance } from '@duckdb/node-api';
import { sqlString } from '../dialect.js';
import type { ColumnInfo } from '../driver.js';
import { normType, structFields } from './postgres-dialect.js';

/**
 * Parquet has no reader in PostgreSQL: an in-memory DuckDB reads (or writes) it, and rows travel
 * as CSV (streamed by both engines, never held in memory here).
 */

const dq = (id: string) => `"${id.replace(/"/g, '""')}"`;

async function withDuckDB<T>(fn: (run: (sql: string) => Promise<Array<Record<string, unknown>>>) => Promise<T>): Promise<T> {
  const instance = await DuckDBInstance.create(':memory:');
  const conn = await instance.connect();
  try {
    const run = async (sql: string) => (await conn.runAndReadAll(sql)).getRowObjectsJson() as Array<Record<string, unknown>>;
    await run(`SET TimeZone = 'UTC'`);
    return await fn(run);
  } finally {
    conn.closeSync();
    instance.closeSync();
  }
}

/** PostgreSQL type of a DuckDB column type. */
function pgType(duck: string): string {
  const t = duck.toUpperCase();
  if (/^(STRUCT|MAP|UNION)\(|\[\]$|^JSON$/.test(t)) return 'jsonb';
  const m = /^DECIMAL\((\d+),\s*(\d+)\)$/.exec(t);
  if (m) return `numeric(${m[1]},${m[2]})`;
  const map: Record<string, string> = {
    BOOLEAN: 'boolean',
    TINYINT: 'smallint',
    UTINYINT: 'smallint',
    SMALLINT: 'smallint',
    USMALLINT: 'integer',
    INTEGER: 'integer',
    UINTEGER: 'bigint',
    BIGINT: 'bigint',
    UBIGINT: 'numeric',
    HUGEINT: 'numeric',
    FLOAT: 'real',
    DOUBLE: 'double precision',
    DATE: 'date',
    TIME: 'time without time zone',
    TIMESTAMP: 'timestamp without time zone',
    TIMESTAMP_S: 'timestamp without time zone',
    TIMESTAMP_MS: 'timestamp without time zone',
    TIMESTAMP_NS: 'timestamp without time zone',
    'TIMESTAMP WITH TIME ZONE': 'timestamp with time zone',
    UUID: 'uuid',
    INTERVAL: 'interval',
  };
  return map[t] ?? 'text';
}

/** Write a parquet file's rows as headerless CSV (PostgreSQL's input formats); return the columns with PostgreSQL types. */
export async function parquetToCsv(file: string, csv: string): Promise<ColumnInfo[]> {
  return withDuckDB(async (run) => {
    const described = await run(`DESCRIBE SELECT * FROM read_parquet(${sqlString(file)})`);
    const cols = described.map((r) => ({ name: String(r.column_name), duck: String(r.column_type) }));
    // Nanoseconds are dropped here, as DuckDB drops them (PostgreSQL would round the written text).
    const select = cols.map((c) =>
      pgType(c.duck) === 'jsonb'
        ? `CAST(to_json(${dq(c.name)}) AS VARCHAR) AS ${dq(c.name)}`
        : c.duck.toUpperCase() === 'TIMESTAMP_NS'
          ? `CAST(${dq(c.name)} AS TIMESTAMP) AS ${dq(c.name)}`
          : dq(c.name),
    );
    await run(`COPY (SELECT ${select.join(', ') || '1'} FROM read_parquet(${sqlString(file)})) TO ${sqlString(csv)} (FORMAT csv, HEADER false)`);
    return cols.map((c) => ({ name: c.name, type: pgType(c.duck) }));
  });
}

/** DuckDB type of a PostgreSQL column type (for writing parquet). */
function duckType(pg: string): string {
  const fields = structFields(pg);
  if (fields) return `STRUCT(${fields.map(([n, t]) => `${dq(n)} ${duckType(t)}`).join(', ')})`;
  const t = normType(pg);
  const m = /^numeric\((\d+),(\d+)\)$/.exec(t.replace(/\s/g, ''));
  if (m && Number(m[1]) <= 38) return `DECIMAL(${m[1]},${m[2]})`;
  const map: Record<string, string> = {
    boolean: 'BOOLEAN',
    smallint: 'SMALLINT',
    integer: 'INTEGER',
    bigint: 'BIGINT',
    real: 'FLOAT',
    'double precision': 'DOUBLE',
    numeric: 'DOUBLE',
    date: 'DATE',
    'timestamp without time zone': 'TIMESTAMP',
    'timestamp with time zone': 'TIMESTAMPTZ',
    'time without time zone': 'TIME',
    uuid: 'UUID',
    jsonb: 'JSON',
    json: 'JSON',
  };
  return map[t] ?? 'VARCHAR';
}

/**
 * Turn a CSV written by PostgreSQL (header, JSON text for structs) into a parquet file with the
 * columns' types. COPY writes null as an empty field and the empty string as `""`: both are kept.
 */
export async function csvToParquet(csv: string, columns: ColumnInfo[], out: string): Promise<void> {
  await withDuckDB(async (run) => {
    const spec = columns.map((c) => `${sqlString(c.name)}: 'VARCHAR'`).join(', ');
    const select = columns.map((c) => {
      const t = duckType(c.type);
      const v = dq(c.name);
      if (t.startsWith('STRUCT(')) return `CAST(CAST(${v} AS JSON) AS ${t}) AS ${v}`;
      return t === 'VARCHAR' ? v : `CAST(${v} AS ${t}) AS ${v}`;
    });
    await run(
      `COPY (SELECT ${select.join(', ')} FROM read_csv(${sqlString(csv)}, header = true, columns = {${spec}}, quote = '"', escape = '"', allow_quoted_nulls = false)) TO ${sqlString(out)} (FORMAT parquet)`,
    );
  });
}
