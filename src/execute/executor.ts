import type { Dialect } from '../dialects/dialect.js';
import type { Driver } from '../dialects/driver.js';
import type { StoreNames } from '../store/names.js';
import type { LatestWrite } from '../store/recovery.js';
import { deltaExecutor } from './delta-executor.js';
import type { StateChange } from './state-change.js';
import type { ChangeSizes, TargetChange } from './target-change.js';
import { transactionalExecutor } from './transactional-executor.js';

/**
 * How a kind of engine makes a commit durable (docs/DESIGN.md "Executors"). The plan (plan/)
 * decides what a commit computes and changes; its executor decides what the engine needs around
 * that: what to do before the first write, how the commit reads the tables it also writes, and the
 * statements that change the target. Chosen by the dialect's capabilities (executorFor), never by
 * its name.
 */
export interface CommitExecutor {
  readonly kind: 'transactional' | 'delta';
  /**
   * Whether the commit takes the target's lock while it stages its input: where the lock is a
   * write of its own (a lease row), not a part of the transaction that staging must stay out of.
   */
  readonly locksWhileStaging: boolean;
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
   * Whether runWrites runs its groups at once: the plan then hands the key state's writes over
   * with the target's, instead of writing them before the diff.
   */
  readonly writesAtOnce: boolean;
  /**
   * Run groups of writes of which none reads what another writes, each group's statements in
   * order: in turn, or at once (writesAtOnce). Every group has ended when it returns, also when
   * one failed (the first failure is then thrown).
   */
  runWrites(driver: Driver, groups: string[][]): Promise<void>;
  /**
   * Whether the commit's scratch goes as soon as its writes have ended, before its record: where
   * the scratch held makes each later statement dearer (Spark's cache manager looks through every
   * cached plan at each write by name; docs/decisions/
   * 0095-a-commits-scratch-goes-before-its-record-on-delta.md). Otherwise it goes after the commit (withScratch).
   */
  readonly scratchBeforeRecord: boolean;
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
 * tables that keep versions and label their commits (Delta), which needs MERGE. Any other engine
 * is refused by name, with what it lacks.
 */
export function executorFor(d: Dialect): CommitExecutor {
  if (d.capabilities.transactions) return transactionalExecutor;
  if (d.capabilities.merge && d.commitLabel) return deltaExecutor;
  const lacks = [...(d.capabilities.merge ? [] : ['merge']), ...(d.commitLabel ? [] : ['commitLabel'])];
  throw new Error(`no executor for the ${d.name} dialect: without transactions, a commit needs ${lacks.join(' and ')} (executor.ts)`);
}
