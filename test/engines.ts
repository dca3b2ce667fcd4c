import { openDriver, type Driver } from '../src/index.js';

/**
 * Every engine the behavioural suite runs against (ARCHITECTURE §7). Tests loop over this list;
 * a new engine (PostgreSQL through PGlite, a real server) is added here and nowhere else.
 */
export interface TestEngine {
  name: string;
  /** A fresh, empty database. */
  open(): Promise<Driver>;
}

export const engines: TestEngine[] = [{ name: 'duckdb', open: () => openDriver(':memory:') }];
