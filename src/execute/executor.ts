import { requireCapability } from '../dialects/capabilities.js';
import type { Dialect } from '../dialects/dialect.js';
import type { Driver } from '../dialects/driver.js';
import type { FlowRecord } from '../store/catalog.js';
import type { StoreNames } from '../store/names.js';
import { deltaExecutor } from './delta/delta-executor.js';
import type { LatestWrite } from './delta/recovery.js';
import type { LogFold, LogRewrite } from './log-rewrites.js';
import type { StateChange } from './state-change.js';
import type { ChangeSizes, TargetChange } from './target-change.js';
import { transactionalExecutor } from './transactional/transactional-executor.js';

/**
 * What an engine guarantees a commit, which the plan's choices rest on (never how an engine is
 * tuned: that is its driver's).
 */
export interface EngineGuarantees {
  /**
   * Every statement of a commit is one transaction: all of it is kept or none, it reads its own
   * writes, and the target's lock is the transaction's.
   */
  readonly transactions: boolean;
  /** A table keeps its earlier versions: it can be read as of one, and put back to one. */
  readonly versionedTables: boolean;
  /**
   * Each write is an engine commit of its own that carries a label naming the scdkit commit it
   * belongs to (store/commit-labels.ts), so an interrupted commit's writes can be found and undone
   * whatever order they ended in.
   */
  readonly labelledCommits: boolean;
}

/**
 * How a kind of engine makes a commit durable (docs/DESIGN.md "Executors"). The plan (plan/)
 * decides what a commit computes and changes; its executor decides what the engine needs around
 * that: what to do before the first write, how the commit reads the tables it also writes, and the
 * statements that change the target. Chosen by the dialect's capabilities (executorFor), never by
 * its name.
 */
export interface CommitExecutor {
  readonly guarantees: EngineGuarantees;
  /**
   * Under the target's lock, while the commit reads its flow record (whether there is one is not
   * known yet): what begin needs to know of the target's tables, read ahead (none in a transaction;
   * undefined where it could not be read, which begin then reads itself).
   */
  look(driver: Driver, names: StoreNames): Promise<Looked | undefined>;
  /**
   * Right after the target's lock, before any write of commit `version` (`recorded`: the target
   * has a flow record, so earlier commits may have been interrupted). `looked`: look's answer.
   */
  begin(driver: Driver, names: StoreNames, version: number, recorded: boolean, looked?: Promise<Looked | undefined>): Promise<Begun>;
  /** Before a new target's tables are made. */
  beforeCreate(driver: Driver, names: StoreNames, version: number): Promise<void>;
  /**
   * The names the rest of the commit reads and writes the target's tables by (StoreNames.writes).
   * `latest`: begin's versions of the tables, given when nothing has written them since.
   */
  pinReads(driver: Driver, names: StoreNames, latest?: Begun['latest']): Promise<StoreNames>;
  /** The statements that make `change` in the target, given how many rows it holds (none: nothing to write). */
  targetWrites(d: Dialect, change: TargetChange, sizes: ChangeSizes): string[];
  /** The statements that make `change` in the key state. */
  stateWrites(d: Dialect, change: StateChange): string[];
  /**
   * Run groups of writes of which none reads what another writes, each group's statements in
   * order: in turn, or at once where the writes may (writesMayRunAtOnce). Every group has ended
   * when it returns, also when one failed (the first failure is then thrown).
   */
  runWrites(driver: Driver, groups: string[][]): Promise<void>;

  // The writes of a rebuild and a compaction, and the flow record: each one change, made whole by
  // the transaction, or by one write the engine keeps whole where there is none.

  /** The event log replaced by its rewrite; returns the names the rest of the commit reads the target's tables by. */
  replaceLog(driver: Driver, names: StoreNames, rewrite: LogRewrite): Promise<StoreNames>;
  /** The key state emptied, to be rebuilt: made anew by `create` where it may go (its key columns may change). */
  emptyState(driver: Driver, names: StoreNames, create: string): Promise<void>;
  /** The folded keys' old events out of the log and their folds in. */
  foldLog(driver: Driver, fold: LogFold): Promise<void>;
  /** The target's flow record replaced by `record`, never left without one. */
  writeFlowRecord(driver: Driver, names: StoreNames, record: FlowRecord, at: string): Promise<void>;
}

/**
 * Whether the input is staged while the target's lock is taken: where the lock is a write of its
 * own (a lease row). In a transaction the lock is the transaction's, and staging runs before it (a
 * reader that refuses a file must not abort the transaction).
 */
export function stagesWhileLocking(g: EngineGuarantees): boolean {
  return !g.transactions;
}

/**
 * Whether writes of which none reads what another writes may run at once: where each is an engine
 * commit of its own and an interruption is undone by label whatever order they ended in. One
 * transaction runs one statement at a time.
 */
export function writesMayRunAtOnce(g: EngineGuarantees): boolean {
  return !g.transactions && g.labelledCommits;
}

/** What look read ahead: each of the target's tables' latest engine version and latest write of scdkit's, by name. */
export type Looked = Record<string, LatestWrite>;

/** What begin found and did. */
export interface Begun {
  /** The tables an interrupted commit's undo put back (none in a transaction). */
  undone: string[];
  /** Where begin read them and put nothing back: each table's latest engine version, by name. */
  latest?: Record<string, number>;
}

/**
 * The executor for an engine: with transactions, the transactional one; without, the one for
 * tables that keep versions and label their commits (Delta), which needs MERGE and commit labels.
 * Any other engine is refused naming what it lacks (requireCapability).
 */
export function executorFor(d: Dialect): CommitExecutor {
  if (d.capabilities.transactions) return transactionalExecutor;
  requireCapability(d, 'merge', 'a commit without transactions (each write one MERGE)');
  requireCapability(d, 'commitLabel', 'a commit without transactions (each write labelled)');
  return deltaExecutor;
}
