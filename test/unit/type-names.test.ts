/**
 * Types compare by one canonical spelling per engine (docs/decisions/0100): the catalog's spelling
 * and the plan's are the same type. DuckDB writes TIMESTAMPTZ back as TIMESTAMP WITH TIME ZONE;
 * compared as text, every rebuild of a zoned-sequence target was refused.
 */
import { describe, expect, it } from 'vitest';
import { duckdbDialect } from '../../src/dialects/duckdb/duckdb-dialect.js';
import { postgresDialect } from '../../src/dialects/postgres/postgres-dialect.js';
import { sparkDialect } from '../../src/dialects/spark/spark-dialect.js';
import { openDriver } from '../../src/index.js';

const SAME: Array<[string, string, string]> = [
  ['duckdb', 'TIMESTAMPTZ', 'TIMESTAMP WITH TIME ZONE'],
  ['duckdb', 'timestamptz', 'timestamp  with time zone'],
  ['duckdb', 'DATETIME', 'TIMESTAMP'],
  ['duckdb', 'INT8', 'BIGINT'],
  ['duckdb', 'LONG', 'bigint'],
  ['duckdb', 'INT', 'INTEGER'],
  ['duckdb', 'FLOAT8', 'DOUBLE'],
  ['duckdb', 'REAL', 'FLOAT'],
  ['duckdb', 'NUMERIC(20,1)', 'DECIMAL(20, 1)'],
  ['duckdb', 'DECIMAL', 'DECIMAL(18,3)'],
  ['duckdb', 'TEXT', 'VARCHAR'],
  ['duckdb', 'STRING', 'VARCHAR'],
  ['duckdb', 'BOOL', 'BOOLEAN'],
  ['duckdb', 'STRUCT("ts" TIMESTAMPTZ, "lsn" INT8)', 'STRUCT(ts TIMESTAMP WITH TIME ZONE, lsn BIGINT)'],
  ['duckdb', 'TIMESTAMPTZ[]', 'TIMESTAMP WITH TIME ZONE[]'],
  ['postgres', 'timestamptz', 'timestamp with time zone'],
  ['postgres', 'int8', 'bigint'],
  ['postgres', 'decimal(20,1)', 'numeric(20,1)'],
  ['postgres', 'timestamptz(3)', 'timestamp(3) with time zone'],
  ['postgres', 'timestamp(3)', 'timestamp(3) without time zone'],
  ['spark', 'TIMESTAMP_LTZ', 'timestamp'],
  ['spark', 'LONG', 'BIGINT'],
];
const DIFFERENT: Array<[string, string, string]> = [
  ['duckdb', 'TIMESTAMPTZ', 'TIMESTAMP'],
  ['duckdb', 'DECIMAL(20,1)', 'DECIMAL(20,2)'],
  ['duckdb', 'DOUBLE', 'FLOAT'],
  ['duckdb', 'STRUCT(ts TIMESTAMPTZ)', 'STRUCT(ts TIMESTAMP)'],
  ['postgres', 'timestamptz', 'timestamp'],
  ['postgres', 'timestamptz(3)', 'timestamp(6) with time zone'],
  ['spark', 'TIMESTAMP', 'TIMESTAMP_NTZ'],
];
const dialects = { duckdb: duckdbDialect, postgres: postgresDialect, spark: sparkDialect } as const;

describe('types compare by their canonical spelling', () => {
  it.each(SAME)('%s: %s is %s', (engine, a, b) => {
    const d = dialects[engine as keyof typeof dialects];
    expect(d.sameType(a, b)).toBe(true);
    expect(d.sameType(b, a)).toBe(true);
    expect(d.widens(a, b)).toBe(true);
  });
  it.each(DIFFERENT)('%s: %s is not %s', (engine, a, b) => {
    expect(dialects[engine as keyof typeof dialects].sameType(a, b)).toBe(false);
  });

  it("DuckDB: the catalog's spelling of each type the plan writes is the same type", async () => {
    const driver = await openDriver(':memory:');
    try {
      const d = driver.dialect;
      const types = [
        d.types.timestamptz,
        d.types.timestamp,
        d.types.bigint,
        d.types.double,
        d.types.date,
        d.types.text,
        d.types.bool,
        d.decimal(20, 1),
        d.types.json,
        d.structType([
          ['ts', d.types.timestamptz],
          ['lsn', d.types.bigint],
        ]),
      ];
      await driver.run(`CREATE TABLE t (${types.map((t, i) => `c${i} ${t}`).join(', ')})`);
      const columns = (await driver.columns('t'))!;
      for (const [i, t] of types.entries()) expect(d.sameType(columns[i]!.type, t), `${columns[i]!.type} / ${t}`).toBe(true);
    } finally {
      await driver.close();
    }
  });
});
