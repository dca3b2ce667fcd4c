import type { ColumnInfo, Driver } from '../../dialects/driver.js';
import type { CommitResult } from '../../store/commits.js';
import type { StoreNames } from '../../store/names.js';
import type { StagedColumn } from '../../typing/cast.js';
import type { LexicalColumns } from '../../typing/lexical.js';
import type { RecordKeys } from '../first-applied-order.js';
import type { ColumnModel } from '../model.js';

export type ApplyResult = CommitResult;

export type Progress = (message: string) => void;

/**
 * What staging reports: `lexical`, the staged columns scdkit types (typing/); `records`, the
 * records read, counted by the reader, which the commit checks its own counts against; `columns`,
 * TMP.stage's columns where the reader knows them.
 */
export interface StagedBatch {
  skipped: number;
  lexical?: LexicalColumns;
  records?: number;
  columns?: ColumnInfo[];
}

/** How a commit's records get into TMP.stage / TMP.rejects, and what else it must do. */
export interface CommitSpec {
  /** What the commit read, for the log. */
  inputs: string[];
  /**
   * Fill TMP.stage and TMP.rejects (runs before the transaction: it only writes temporary tables).
   */
  stage(driver: Driver): Promise<StagedBatch>;
  /**
   * Inside the transaction, once the model is known: adjust TMP.stage (snapshots add implied
   * deletes and drop unchanged rows). Returns rows added and rows removed.
   */
  prepare?(driver: Driver, model: ColumnModel, names: StoreNames, existed: boolean, stagedAs: ReadonlyMap<string, StagedColumn>): Promise<{ implied: number; unchanged: number }>;
  /**
   * Inside the transaction, right after the target's lock: check that the inputs are still to be
   * applied (landing files: not recorded by a commit that ran while this one waited); throws to
   * roll back.
   */
  claim?(driver: Driver): Promise<void>;
  /** Inside the transaction, after the target is written and before the commit is recorded (landing file records). */
  finish?(driver: Driver, version: number): Promise<void>;
  /**
   * Inside the transaction, right after the commit is recorded: a write that an engine without
   * transactions may lose to a crash without losing an event (a table source's watermark: left
   * behind, the rows above it are read again, and the ones applied count as duplicates). Written
   * before the record, a crash would leave it ahead of a commit that recovery undoes.
   */
  afterRecord?(driver: Driver, version: number): Promise<void>;
  /** Where each record orders its own keys (JSON): the keys of a new target's first applied record (first-applied-order.ts). */
  recordKeys?: RecordKeys;
  /**
   * Once the commit has ended, applied or not: remove what staging made outside the database
   * (files an engine may read again at any point of the commit, as Spark re-reads a file behind a
   * view whose cache it dropped).
   */
  release?(): void;
  progress?: Progress;
}
