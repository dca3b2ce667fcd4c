import type { PGlite } from '@electric-sql/pglite';
import { PostgresDriver } from '../src/dialects/postgres/index.js';
import { type Driver, openDriver } from '../src/index.js';

/**
 * Every engine the behavioural suite runs against (one suite, every engine). Tests loop over this list;
 * a new engine (PostgreSQL through PGlite, a real server) is added here and nowhere else.
 *
 * - duckdb: in memory.
 * - pglite: PostgreSQL in-process; one instance per test file (it takes seconds to start), each
 *   open() a fresh schema, dropped at close.
 * - postgres: a real server when SCD_TEST_POSTGRES_URL is set; each open() a fresh schema.
 *
 * - spark: a Spark Connect server with Delta when SCD_TEST_SPARK_URL is set; each open() a fresh
 *   database, dropped at close. Every statement is a remote job: only the scenarios (fewer of
 *   them) and the Spark tests run on it, all from one test file (spark/server.test.ts says why).
 *
 * SCD_TEST_ENGINES=duckdb,pglite narrows the list.
 */
export interface TestEngine {
  name: string;
  /** A fresh, empty database. */
  open(): Promise<Driver>;
  /** Statements are remote jobs of a second or so: run fewer cases, with more time each. */
  remote?: boolean;
}

let schemas = 0;
/** A schema name unique to this process and call. */
export function freshSchema(): string {
  return `scd_test_${process.pid}_${Date.now().toString(36)}_${++schemas}`;
}

let shared: Promise<PGlite> | undefined;
/** The PGlite instance of this test process. */
export function sharedPGlite(): Promise<PGlite> {
  shared ??= import('@electric-sql/pglite').then(({ PGlite }) => PGlite.create());
  return shared;
}

const all: TestEngine[] = [
  { name: 'duckdb', open: () => openDriver(':memory:') },
  {
    name: 'pglite',
    open: async () => PostgresDriver.fromPGlite((await sharedPGlite()) as never, { schema: freshSchema(), dropSchemaOnClose: true }),
  },
];
const url = process.env.SCD_TEST_POSTGRES_URL;
if (url) all.push({ name: 'postgres', open: () => PostgresDriver.connect(url, { schema: freshSchema(), dropSchemaOnClose: true }) });

const only = process.env.SCD_TEST_ENGINES?.split(',').map((s) => s.trim());
export const engines: TestEngine[] = only ? all.filter((e) => only.includes(e.name)) : all;

const spark = process.env.SCD_TEST_SPARK_URL;
/** Spark (a Delta database of its own per open), when a server is given. */
export const sparkEngine: TestEngine | undefined = spark
  ? {
      name: 'spark',
      remote: true,
      open: async () => {
        const { SparkDriver } = await import('../src/dialects/spark/spark-driver.js');
        return SparkDriver.connect(spark, { schema: freshSchema(), dropSchemaOnClose: true });
      },
    }
  : undefined;

/** Whether the scenarios run on Spark: a server is given and SCD_TEST_ENGINES, if set, names spark. */
export const scenariosOnSpark = !!sparkEngine && (!only || only.includes('spark'));
