import type { PGlite } from '@electric-sql/pglite';
import { openDriver, type Driver } from '../src/index.js';
import { PostgresDriver } from '../src/dialects/postgres/index.js';

/**
 * Every engine the behavioural suite runs against (one suite, every engine). Tests loop over this list;
 * a new engine (PostgreSQL through PGlite, a real server) is added here and nowhere else.
 *
 * - duckdb: in memory.
 * - pglite: PostgreSQL in-process; one instance per test file (it takes seconds to start), each
 *   open() a fresh schema, dropped at close.
 * - postgres: a real server when SCD_TEST_POSTGRES_URL is set; each open() a fresh schema.
 *
 * SCD_TEST_ENGINES=duckdb,pglite narrows the list.
 */
export interface TestEngine {
  name: string;
  /** A fresh, empty database. */
  open(): Promise<Driver>;
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
