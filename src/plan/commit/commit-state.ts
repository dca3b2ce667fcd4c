import type { ColumnInfo, Driver } from '../../dialects/driver.js';
import type { CommitExecutor } from '../../execute/executor.js';
import type { Flow } from '../../flow/flow.js';
import type { FlowRecord } from '../../store/catalog.js';
import type { StoreNames } from '../../store/names.js';
import type { StagedColumn } from '../../typing/cast.js';
import type { LexicalColumns } from '../../typing/lexical.js';
import type { ColumnModel } from '../model.js';
import type { CommitSpec, Progress } from './commit-spec.js';

/**
 * The state of one commit, as its steps (apply.ts) produce it: each step takes what the steps
 * before it found and returns what it adds. Every count here was read from the engine; the
 * commit's checks compare them (a record is never lost unseen).
 */

/** What every step of a commit reads, fixed for the commit. */
export interface CommitContext {
  readonly driver: Driver;
  readonly spec: CommitSpec;
  readonly executor: CommitExecutor;
  readonly progress: Progress;
}

/** The input in TMP.stage and TMP.rejects, under the target's lock (stage.ts). */
export interface StagedInput {
  /** Records the reader skipped (blank lines). */
  skipped: number;
  /** How the staged columns hold their values, for typing. */
  lexical: LexicalColumns;
  /** The records the reader counted, where it counts them. */
  records?: number;
  /** TMP.stage's columns. */
  stagedTable: ColumnInfo[];
}

/** The target as the commit found it once it held the lock (target-found.ts). */
export interface TargetFound {
  /** This commit's number. */
  version: number;
  /** Whether an earlier commit counted ties (its log may hold some). */
  hadTies: boolean;
  /** Which of the feed's own columns the feed has, where the engine could say in the same query. */
  feedHas?: Set<string>;
  /** The flow record; none for a new target. */
  record?: FlowRecord;
  /** An interrupted commit's undo put the flow record back (Delta): the live view is made again. */
  recordRestored: boolean;
  /** The executor's versions of the tables at begin, where it read them. */
  latest?: Record<string, number>;
  /** Rows in TMP.stage and in TMP.rejects. */
  stagedRows: number;
  rejected: number;
}

/** The batch's types and the target's model (batch-model.ts). */
export interface BatchModel {
  /** The flow, with a Debezium sequence settled by the target's source columns. */
  flow: Flow;
  settings: Record<string, unknown>;
  /** The commit's time, as recorded. */
  at: string;
  model: ColumnModel;
  /** The staged columns with the types their values are read as, then the staging columns. */
  staged: ColumnInfo[];
  stagedAs: ReadonlyMap<string, StagedColumn>;
}

/** The batch mapped to events in TMP.batch, the target created where it was new (mapped-batch.ts). */
export interface MappedBatch {
  /** The model the batch was mapped with (a new JSON target's columns follow its first applied record). */
  model: ColumnModel;
  /** The target's tables as the rest of the commit reads and writes them (Executor.pinReads). */
  names: StoreNames;
  /** Rows to map: the staged ones, with a snapshot's implied deletes, without its unchanged rows. */
  stagedRows: number;
  /** A snapshot's rows equal to the live ones. */
  unchanged: number;
  /** Every record read, whatever its fate. */
  rowsRead: number;
}

/** What became of each record, and the valid events in TMP.valid (batch-fates.ts). */
export interface BatchFates {
  /** Records each expectation (flow `expect`) failed on, by name. */
  expectations: Record<string, number>;
  /** Whether intermediate scratch goes as soon as it is used (a large batch, scratch changed in place). */
  freeEarly: boolean;
  quarantined: number;
  dropped: number;
  /** Records that are valid events, repeats included. */
  okRecords: number;
  /** Valid events, each once. */
  validEvents: number;
  /** Whether a valid event is a truncate. */
  truncated: boolean;
}

/** The keys of the valid events in TMP.keys (batch-keys.ts). */
export interface KeyCounts {
  keys: number;
  /** Keys with an event at or before what was applied: their log is read. */
  slow: number;
  /** Keys whose history is walked (not simple). */
  walked: number;
}

/** The events not logged before, in TMP.newEvents (new-events.ts). */
export interface NewEvents {
  applied: number;
  /** Records equal to another of the batch, events the log holds, a snapshot's unchanged rows. */
  duplicates: number;
  /** Where the new events were made anew with their counts (scratch not changed in place): ties and keys with news. */
  counted?: { ties: number; keysWithNews: number };
}
