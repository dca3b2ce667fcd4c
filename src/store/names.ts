/** Names of the engine's own tables for one flow (kept in the same database as the target). */
export interface StoreNames {
  target: string;
  /** View of the live version of every key. */
  current: string;
  events: string;
  quarantine: string;
  changes: string;
  commits: string;
  flows: string;
  /** Files applied from a landing folder (exactly once). */
  files: string;
  /** The last applied watermark of a table/query source. */
  watermarks: string;
  /** Per key: the sequence of its last event and whether it is live (the fast path's index). */
  state: string;
  /**
   * Where a commit reads its tables as they were at its start (Driver.pinReads), the names to
   * write them by, quoted; otherwise they are written by their own names.
   */
  writes?: Partial<Record<PinnedTable, string>>;
}

/** The tables of a target that a commit both reads and writes. */
export type PinnedTable = 'events' | 'state' | 'target';
export const PINNED_TABLES: PinnedTable[] = ['events', 'state', 'target'];

/** The quoted name to write one of a target's tables by (StoreNames.writes). */
export function written(names: StoreNames, table: PinnedTable, quote: (id: string) => string): string {
  return names.writes?.[table] ?? quote(names[table]);
}

export function storeNames(target: string): StoreNames {
  return {
    target,
    current: `${target}_current`,
    events: `_scd_${target}_events`,
    quarantine: `_scd_${target}_quarantine`,
    changes: `_scd_${target}_changes`,
    commits: '_scd_commits',
    flows: '_scd_flows',
    files: '_scd_files',
    watermarks: '_scd_watermarks',
    state: `_scd_${target}_keys`,
  };
}

/** Temporary tables of one apply. */
export const TMP = {
  stage: '_scd_stage',
  rejects: '_scd_rejects',
  batch: '_scd_batch',
  valid: '_scd_valid',
  dups: '_scd_dups',
  slowLog: '_scd_slow_log',
  events: '_scd_events',
  newEvents: '_scd_new',
  keys: '_scd_keys',
  recomputed: '_scd_recomputed',
  /** The walk's versions before their previous values are added (flow.previousValues). */
  walked: '_scd_recomputed_walked',
  stored: '_scd_stored',
  pairs: '_scd_pairs',
  changed: '_scd_changed',
  removed: '_scd_removed',
  added: '_scd_added',
  simple: '_scd_simple',
  materialized: '_scd_materialized',
  /** A rebuild's event log re-derived under the flow, before it replaces the log (Delta). */
  relogged: '_scd_relogged',
  /** The staged records numbered in (file, line) order, while a commit finds the ones an expression fails on. */
  numbered: '_scd_numbered',
} as const;
