import { randomUUID } from 'node:crypto';
import { ScdError } from '../../errors.js';
import { type LockRecords, type Row, targetHeld, targetInUse } from '../driver.js';
import { describeHolder, holderGone, type LeaseHolder, thisProcess } from './lease-holder.js';
import { sparkString } from './spark-dialect.js';

/** The Delta table that holds the targets' leases, in the flow's database. */
export const LOCKS_TABLE = '_scd_locks';
/**
 * How long a lease holds from its taking or its last renewal. Its holder renews it every
 * RENEW_MS while it works, so a holder that died (kill -9, a lost connection) loses it this long
 * after its last renewal at the latest.
 */
export const LEASE_SECONDS = 60;
/** How often a holder renews its lease: a quarter of it, so three renewals in a row may fail (a busy server) before it runs out. */
export const RENEW_MS = 15_000;
/** After a renewal that Delta refused for a concurrent write to the lease table: ask again this soon. */
const RENEW_AGAIN_MS = 1000;
/** The commit whose record ends a lease (NULL: only its expiry or its holder ends it). */
const ENDS_AT = 'ends_at_commit';
/** The columns a lease table made by an older scdkit may lack, added when a MERGE misses one. */
const LATER_COLUMNS: ReadonlyArray<readonly [string, string]> = [
  [ENDS_AT, 'INT'],
  ['host', 'STRING'],
  ['pid', 'INT'],
  ['pid_space', 'STRING'],
  ['command', 'STRING'],
];
/** How often a waiting commit asks again. */
const RETRY_MS = 1000;

export interface LeaseStatements {
  /** Run a command (MERGE, UPDATE, DELETE, DDL, DESCRIBE): its result rows, if any. */
  execute(sql: string): Promise<Row[]>;
  /** The rows of a query (a plain SELECT, which Spark does not run as a command). */
  query(sql: string): Promise<Row[]>;
}

/** What a lease row says of its holder, read by a commit that waits for it. */
interface HeldBy extends Partial<LeaseHolder> {
  holder: string;
  /** When the lease runs out unless renewed (UTC, to the second). */
  expires: string;
}

/** The clock and timers a lease uses (a test's fake clock replaces them). */
export interface LeaseClock {
  now(): number;
  /**
   * Run `fn` after `ms`. A `background` timer does not keep the process alive by itself (a
   * renewal: the commit's own work does); any other does (a wait for the lease, which may be all
   * the process is doing).
   */
  setTimeout(fn: () => void, ms: number, background?: boolean): unknown;
  clearTimeout(timer: unknown): void;
}

const systemClock: LeaseClock = {
  now: () => Date.now(),
  setTimeout: (fn, ms, background) => {
    const timer = setTimeout(fn, ms);
    if (background) timer.unref();
    return timer;
  },
  clearTimeout: (timer) => clearTimeout(timer as NodeJS.Timeout),
};

/**
 * A target's write lock on Spark, which has no advisory locks: a lease row per target in a Delta
 * table, taken by one MERGE that inserts it or takes over one that ended. Delta's optimistic
 * concurrency makes the MERGE atomic: of two at once, one fails with a conflict and tries again.
 *
 * A lease ends when it expires (its holder stopped renewing it: kill -9, a lost connection), when
 * its holder deletes its row, when a commit on the holder's machine finds the holder's process
 * gone (holderGone), or, taken for a commit whose record is its last write (LockRecords), once
 * the target's records reach the commit its holder was to record (`ends_at_commit`, the last
 * recorded one plus one when taken): such a holder that succeeds writes nothing more to give it
 * back. Nobody else records a commit of the target while the lease holds, so the record that ends
 * it is its holder's.
 *
 * Invariant: a holder writes only while its lease holds for sure. `validUntil` is the time, on
 * this process's clock, at which the lease's last taking or renewal was sent, plus its length: the
 * server set the expiry later than that, so until then nobody else can have taken it over by
 * expiry. `check()` refuses a write after it (renewals that did not get through in time).
 */
export class SparkLease {
  private readonly holder = randomUUID();
  private held: string | undefined;
  /** The held lease ends with its holder's commit record (taken with LockRecords.endsWithRecord). */
  private endsWithRecord = false;
  /** Until when (this process's clock, ms) the held lease holds for sure; 0: it was lost. */
  private validUntil = 0;
  private renewalTimer: unknown;
  /** The renewal under way, which giving the lease back waits for (two writes of the row at once conflict). */
  private renewing: Promise<void> | undefined;

  constructor(
    private readonly db: LeaseStatements,
    private readonly location: string,
    private readonly me: LeaseHolder = thisProcess(),
    private readonly clock: LeaseClock = systemClock,
  ) {}

  /**
   * Take the target's lease, asking again every second while another holds it (`waiting` is told
   * whenever the holder it waits for changes, with who holds it and until when). A lease whose
   * holder's process is gone from this machine is taken over at once (also with `noWait`).
   * `records.lastRecorded` has its parameter bound; without `records`, a lease that ended with its
   * holder's record is taken only once it expires.
   */
  async acquire(target: string, noWait: boolean, waiting?: (message: string) => void, records?: LockRecords): Promise<void> {
    let told: string | undefined;
    let takeOver: string | undefined;
    // Times in a row the lease was found given back after a MERGE failed to take it.
    let free = 0;
    for (;;) {
      const sent = this.clock.now();
      if (await this.tryTake(target, records, takeOver)) {
        this.held = target;
        this.endsWithRecord = !!records?.endsWithRecord;
        this.validUntil = sent + LEASE_SECONDS * 1000;
        this.scheduleRenewal(RENEW_MS);
        return;
      }
      const other = await this.heldBy(target);
      // Given back meanwhile: take it now (after a pause when that keeps happening: another commit
      // takes it each time first).
      if (!other) {
        if (free++ > 0) await this.pause();
        continue;
      }
      free = 0;
      if (holderGone(other, this.me) && takeOver !== other.holder) {
        takeOver = other.holder;
        continue;
      }
      if (noWait) throw targetInUse(target, this.location);
      if (waiting && told !== other.holder) waiting(targetHeld(target, this.location, heldFor(other)));
      told = other.holder;
      await this.pause();
    }
  }

  /** Wait before asking again. */
  private pause(): Promise<void> {
    return new Promise((r) => this.clock.setTimeout(() => r(), RETRY_MS));
  }

  /** Who holds the target's lease and until when (undefined: nobody now). */
  private async heldBy(target: string): Promise<HeldBy | undefined> {
    const rows = await this.db.query(
      `SELECT holder, host, pid, pid_space, command, CAST(expires_at AS STRING) AS expires FROM ${LOCKS_TABLE} WHERE target = ${sparkString(target)}`,
    );
    const r = rows[0];
    if (!r) return undefined;
    const text = (v: unknown) => (typeof v === 'string' ? v : undefined);
    return {
      holder: String(r.holder),
      host: text(r.host),
      pid: r.pid === null || r.pid === undefined ? undefined : Number(r.pid),
      pidSpace: text(r.pid_space) ?? '',
      command: text(r.command),
      expires: String(r.expires ?? '').slice(0, 19),
    };
  }

  /**
   * Refuse a write of the holder once its lease may have run out (its renewals did not reach the
   * server in time): another commit may have taken the target over. Nothing when no lease is held.
   */
  check(): void {
    if (this.held === undefined || this.clock.now() < this.validUntil) return;
    throw new ScdError(
      'NOT_APPLIED',
      `this commit lost its lease on target "${this.held}" in ${this.location}: its renewals did not reach the server within ${LEASE_SECONDS} s, so it stopped before its next write`,
      {
        fix: 'run the apply again (it undoes what this commit wrote, unless its record was written); if the Spark server is overloaded or the connection drops, fix that first',
      },
    );
  }

  /** Renew the held lease after `ms`, and again after each renewal, until the lease ends. */
  private scheduleRenewal(ms: number): void {
    this.clock.clearTimeout(this.renewalTimer);
    this.renewalTimer = this.clock.setTimeout(
      () => {
        this.renewalTimer = undefined;
        this.renewing = this.renew();
      },
      ms,
      true,
    );
  }

  /** One renewal: the lease's expiry moves to a lease's length from now, if this holder still holds it. */
  private async renew(): Promise<void> {
    const target = this.held;
    if (target === undefined) return;
    const sent = this.clock.now();
    let next = RENEW_MS;
    try {
      const rows = await this.db.execute(
        `UPDATE ${LOCKS_TABLE} SET expires_at = current_timestamp() + INTERVAL ${LEASE_SECONDS} SECONDS WHERE target = ${sparkString(target)} AND holder = ${sparkString(this.holder)}`,
      );
      if (this.held !== target) return;
      if (Number(rows[0]?.num_affected_rows ?? 0) > 0) this.validUntil = sent + LEASE_SECONDS * 1000;
      else {
        // Another commit holds it now: every later write of this holder is refused (check).
        this.validUntil = 0;
        return;
      }
    } catch {
      // Refused (a concurrent write of the lease table) or not sent: ask again soon; the lease
      // holds until validUntil whatever happens here.
      next = RENEW_AGAIN_MS;
    } finally {
      this.renewing = undefined;
    }
    if (this.held === target) this.scheduleRenewal(next);
  }

  /** Stop renewing, and wait for a renewal under way. */
  private async stopRenewing(): Promise<void> {
    this.clock.clearTimeout(this.renewalTimer);
    this.renewalTimer = undefined;
    await this.renewing;
  }

  /**
   * The holder's work ended: a lease that ends with the holder's record, after work that
   * succeeded (and so wrote the record), ended with it; any other is given back.
   */
  async end(succeeded: boolean): Promise<void> {
    if (succeeded && this.held !== undefined && this.endsWithRecord) {
      this.held = undefined;
      await this.stopRenewing();
      return;
    }
    await this.release();
  }

  /** Give the lease back (nothing when none is held). */
  async release(): Promise<void> {
    if (this.held === undefined) return;
    const target = this.held;
    this.held = undefined;
    await this.stopRenewing();
    await this.db.execute(`DELETE FROM ${LOCKS_TABLE} WHERE target = ${sparkString(target)} AND holder = ${sparkString(this.holder)}`);
  }

  /**
   * One MERGE takes the lease. The lease table is made (or given the columns a table made by an
   * older scdkit lacks) only when that MERGE says it is missing: a commit on a database that has
   * it, nearly every one, spends no round trip on it.
   */
  private async tryTake(target: string, records?: LockRecords, takeOver?: string): Promise<boolean> {
    const mended = new Set<LeaseTableFault>();
    for (;;) {
      try {
        return await this.merge(target, records, takeOver);
      } catch (e) {
        const message = String((e as Error).message);
        // Another MERGE on the table at the same moment: Delta refused one of the two; ask again.
        if (/Concurrent|DELTA_CONCURRENT/i.test(message)) return false;
        const fault = leaseTableFault(message);
        if (!fault || mended.has(fault)) throw e;
        mended.add(fault);
        await this.mend(fault);
      }
    }
  }

  /** Make the lease table, or add the columns it lacks; another driver doing the same at once is no error. */
  private async mend(fault: LeaseTableFault): Promise<void> {
    try {
      if (fault === 'missing') {
        await this.db.execute(
          `CREATE TABLE IF NOT EXISTS ${LOCKS_TABLE} (target STRING NOT NULL, holder STRING NOT NULL, expires_at TIMESTAMP NOT NULL, ${LATER_COLUMNS.map(([c, t]) => `${c} ${t}`).join(', ')}) USING delta`,
        );
      } else {
        const has = new Set((await this.db.execute(`DESCRIBE TABLE ${LOCKS_TABLE}`)).map((r) => String(r.col_name)));
        const lacking = LATER_COLUMNS.filter(([c]) => !has.has(c));
        if (lacking.length) await this.db.execute(`ALTER TABLE ${LOCKS_TABLE} ADD COLUMNS (${lacking.map(([c, t]) => `${c} ${t}`).join(', ')})`);
      }
    } catch (e) {
      if (!/ALREADY_EXISTS|already exists|Concurrent|DELTA_CONCURRENT/i.test(String((e as Error).message))) throw e;
    }
  }

  private async merge(target: string, records?: LockRecords, takeOver?: string): Promise<boolean> {
    // The target's last recorded commit, read in the MERGE (no row: NULL, and no lease ends by a record).
    const recorded = records ? `(${records.lastRecorded})` : 'CAST(NULL AS INT)';
    const ends = records?.endsWithRecord ? `${recorded} + 1` : 'CAST(NULL AS INT)';
    const me = this.me;
    // A holder whose process is gone from this machine: its lease, if still its, is taken over.
    const gone = takeOver === undefined ? '' : ` OR l.holder = ${sparkString(takeOver)}`;
    const set = ['holder', 'expires_at', ENDS_AT, 'host', 'pid', 'pid_space', 'command'];
    const rows = await this.db.execute(`MERGE INTO ${LOCKS_TABLE} l
USING (SELECT ${sparkString(target)} AS target, ${sparkString(this.holder)} AS holder, current_timestamp() + INTERVAL ${LEASE_SECONDS} SECONDS AS expires_at,
  ${recorded} AS recorded, ${ends} AS ${ENDS_AT}, ${sparkString(me.host)} AS host, CAST(${me.pid} AS INT) AS pid, ${sparkString(me.pidSpace)} AS pid_space, ${sparkString(me.command)} AS command) s
ON l.target = s.target
WHEN MATCHED AND (l.expires_at < current_timestamp() OR l.holder = s.holder OR l.${ENDS_AT} <= s.recorded${gone}) THEN UPDATE SET ${set.map((c) => `${c} = s.${c}`).join(', ')}
WHEN NOT MATCHED THEN INSERT (target, ${set.join(', ')}) VALUES (s.target, ${set.map((c) => `s.${c}`).join(', ')})`);
    return Number(rows[0]?.num_affected_rows ?? 0) > 0;
  }
}

/** What a waiting commit says of the lease it waits for: whose it is, and until when it holds unless renewed. */
function heldFor(other: HeldBy): string {
  const who = describeHolder(other);
  const until = other.expires ? `its lease holds until ${other.expires} UTC unless renewed; a holder renews it every ${RENEW_MS / 1000} s while it works` : '';
  return [who && `held by ${who}`, until].filter(Boolean).join('; ');
}

/**
 * What a lease MERGE's error (its first line: Spark names the table in backquotes) says of the lease
 * table: none yet, or one made by an older scdkit without some column; undefined for any other error.
 */
type LeaseTableFault = 'missing' | 'older';
export function leaseTableFault(message: string): LeaseTableFault | undefined {
  if (/TABLE_OR_VIEW_NOT_FOUND/.test(message) && message.includes(`\`${LOCKS_TABLE}\``)) return 'missing';
  if (/UNRESOLVED|Cannot resolve/i.test(message) && LATER_COLUMNS.some(([c]) => new RegExp(`\\b${c}\\b`).test(message))) return 'older';
  return undefined;
}
