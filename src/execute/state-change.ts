import { type Dialect, inInsertOrder } from '../dialects/dialect.js';

/**
 * What one commit changes in its target's key state (plan/key-state.ts), as data: each recomputed
 * key's row is replaced by its new one, and a recomputed key without a new row loses its row. The
 * executor (executor.ts) says how.
 */
export interface StateChange {
  /** The key state, quoted, as the commit writes it (StoreNames.writes). */
  state: string;
  /** The key columns, unquoted. */
  keys: string[];
  /** The state's columns in order, unquoted, the keys first. */
  columns: string[];
  /** The recomputed keys: a quoted relation with the key columns, each key once. */
  recomputed: string;
  /** The recomputed keys' new rows: a SELECT of the state's columns, a key at most once. */
  rows: string;
  /** How many keys are recomputed, where counted (the executor may shape its statement by it). */
  keyCount?: number;
  /** The state was just made (a rebuild): no key has a row to lose. */
  empty: boolean;
  /**
   * Where `recomputed` carries each known key's row id in the state (PostgreSQL: its ctid, read
   * in the same transaction under the target's lock): that id as SQL, and the column holding it.
   */
  byRow?: { rowId: string; column: string };
}

/**
 * The insert of a state change's new rows (every executor's, where the state holds no row of those
 * keys), in key order where the dialect stores rows so and the keys are counted (insertOrder).
 */
export function stateInsertSql(d: Dialect, change: StateChange): string {
  return `INSERT INTO ${change.state} (${change.columns.map(d.quote).join(', ')})\n${inInsertOrder(d, change.rows, change.keys, change.keyCount)}`;
}
