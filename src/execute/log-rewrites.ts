/**
 * The two rewrites of the event log that are not appends, handed to the executor as data: each is
 * one change of the log, which the executor makes whole (a transaction, or one write the engine
 * keeps whole where there is none).
 */

/** The log re-derived under the flow as it is now (a rebuild whose identity or operations changed). */
export interface LogRewrite {
  /** The log's new rows: a SELECT of `columns` that reads the log. */
  select: string;
  /** The log's columns, quoted, in the order `select` gives them. */
  columns: string[];
}

/** A compaction's folds: the folded keys' old events out of the log, and their folds in. */
export interface LogFold {
  /** The log, by the name the commit writes it (StoreNames.writes). */
  log: string;
  /** The key columns, quoted; the folded keys are the rows of `keysTable`. */
  keys: string[];
  keysTable: string;
  /** The log's columns, quoted, in the order each fold gives them. */
  columns: string[];
  /** The folds, each a SELECT of `columns`. */
  folds: string[];
  /** An old event is one whose `column` (quoted) is less than `below` (a value, with parameters `params`). */
  old: { column: string; below: string };
  params: unknown[];
}
