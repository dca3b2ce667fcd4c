/**
 * What one commit changes in its target, as data: the stored rows it removes and the rows it
 * adds, paired by identity (keys + start). The plan (plan/diff-sql.ts) says what; an executor
 * (executor.ts) says how the engine makes it durable: by row id in a transaction, or in one MERGE
 * by identity where each write is a commit of the engine's own.
 *
 * Invariants the executors rely on:
 * - identity is never null and is unique among the stored rows and among the added rows, so a
 *   removed row meets at most one added row of its identity, and each target row one source row;
 * - an added row flagged `close` has a removed row of its identity that differs from it only in
 *   the closing columns (an scd2 version's end and is-current): it is updated in place;
 * - every other removed row is deleted, and every other added row inserted.
 */
export interface TargetChange {
  /** The target, quoted, as the commit writes it (StoreNames.writes). */
  target: string;
  /** The target's columns in order, unquoted. */
  columns: string[];
  /** Keys + start, unquoted: the identity of a stored row. */
  identity: string[];
  /** Columns a close changes (end, is-current); none for scd1. */
  closing: string[];
  /** The removed stored rows: a quoted relation or a parenthesized SELECT, with the target's columns and `flags.rowId`. */
  removed: string;
  /** The added rows: a quoted relation or a parenthesized SELECT, with the target's columns, `flags.close` and `flags.ofRow`. */
  added: string;
  /** The target's row id as SQL (Dialect.rowId), where the commit may address its rows by it; undefined: by identity. */
  rowId?: string;
  /** Names of the flag columns of `removed` and `added`. */
  flags: {
    /** On `removed`: the stored row's row id (null without row ids). */
    rowId: string;
    /** On `added`: this row only closes the removed row of its identity. */
    close: string;
    /** On `added`: the row id of the removed row it replaces. */
    ofRow: string;
  };
}

/** How many rows a change holds (the diff's counts): which of an executor's writes have work. */
export interface ChangeSizes {
  added: number;
  closes: number;
  removed: number;
}
