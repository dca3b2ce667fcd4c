import { randomUUID } from 'node:crypto';
import { targetHeld, targetInUse, type LockRecords, type Row } from '../driver.js';
import { sparkString } from './spark-dialect.js';

/** The Delta table that holds the targets' leases, in the flow's database. */
export const LOCKS_TABLE = '_scd_locks';
/** A lease outlives a holder that died (kill -9, a lost connection) by at most this long. */
export const LEASE_MINUTES = 30;
/** The commit whose record ends a lease (NULL: only its expiry or its holder ends it). */
const ENDS_AT = 'ends_at_commit';
/** How often a waiting commit asks again. */
const RETRY_MS = 1000;

export interface LeaseStatements {
  execute(sql: string): Promise<Row[]>;
}

/**
 * A target's write lock on Spark, which has no advisory locks: a lease row per target in a Delta
 * table, taken by one MERGE that inserts it or takes over one that ended. Delta's optimistic
 * concurrency makes the MERGE atomic: of two at once, one fails with a conflict and tries again.
 *
 * A lease ends when it expires (a holder that died: kill -9, a lost connection), when its holder
 * deletes its row, or, taken for a commit whose record is its last write (LockRecords), once the
 * target's records reach the commit its holder was to record (`ends_at_commit`, the last
 * recorded one plus one when taken): such a holder that succeeds writes nothing more to give it
 * back. Nobody else records a commit of the target while the lease holds, so the record that ends
 * it is its holder's.
 */
export class SparkLease {
  private readonly holder = randomUUID();
  private held: string | undefined;
  /** The held lease ends with its holder's commit record (taken with LockRecords.endsWithRecord). */
  private endsWithRecord = false;

  constructor(
    private readonly db: LeaseStatements,
    private readonly location: string,
  ) {}

  /**
   * Take the target's lease, asking again every second while another holds it (`waiting` is told
   * once). `records.lastRecorded` has its parameter bound; without `records`, a lease that ended
   * with its holder's record is taken only once it expires.
   */
  async acquire(target: string, noWait: boolean, waiting?: (message: string) => void, records?: LockRecords): Promise<void> {
    for (let told = false; ; ) {
      if (await this.tryTake(target, records)) {
        this.held = target;
        this.endsWithRecord = !!records?.endsWithRecord;
        return;
      }
      if (noWait) throw targetInUse(target, this.location);
      if (!told && waiting) waiting(targetHeld(target, this.location, await this.expiry(target)));
      told = true;
      await new Promise((r) => setTimeout(r, RETRY_MS));
    }
  }

  /** When the holder's lease runs out, said for a person ('' when it just went). */
  private async expiry(target: string): Promise<string> {
    const rows = await this.db.execute(`SELECT CAST(expires_at AS STRING) AS at FROM ${LOCKS_TABLE} WHERE target = ${sparkString(target)}`);
    const at = rows[0]?.at;
    return typeof at === 'string' ? `at the latest until ${at.slice(0, 19)} UTC, when its lease runs out if its holder stopped` : '';
  }

  /**
   * The holder's work ended: a lease that ends with the holder's record, after work that
   * succeeded (and so wrote the record), ended with it; any other is given back.
   */
  async end(succeeded: boolean): Promise<void> {
    if (succeeded && this.held !== undefined && this.endsWithRecord) {
      this.held = undefined;
      return;
    }
    await this.release();
  }

  /** Give the lease back (nothing when none is held). */
  async release(): Promise<void> {
    if (this.held === undefined) return;
    const target = this.held;
    this.held = undefined;
    await this.db.execute(`DELETE FROM ${LOCKS_TABLE} WHERE target = ${sparkString(target)} AND holder = ${sparkString(this.holder)}`);
  }

  /**
   * One MERGE takes the lease. The lease table is made (or given the column a table made before
   * leases ended with a record lacks) only when that MERGE says it is missing: a commit on a
   * database that has it, nearly every one, spends no round trip on it.
   */
  private async tryTake(target: string, records?: LockRecords): Promise<boolean> {
    const mended = new Set<LeaseTableFault>();
    for (;;) {
      try {
        return await this.merge(target, records);
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

  /** Make the lease table, or add its column; another driver doing the same at once is no error. */
  private async mend(fault: LeaseTableFault): Promise<void> {
    try {
      if (fault === 'missing') {
        await this.db.execute(`CREATE TABLE IF NOT EXISTS ${LOCKS_TABLE} (target STRING NOT NULL, holder STRING NOT NULL, expires_at TIMESTAMP NOT NULL, ${ENDS_AT} INT) USING delta`);
      } else {
        await this.db.execute(`ALTER TABLE ${LOCKS_TABLE} ADD COLUMNS (${ENDS_AT} INT)`);
      }
    } catch (e) {
      if (!/ALREADY_EXISTS|already exists|Concurrent|DELTA_CONCURRENT/i.test(String((e as Error).message))) throw e;
    }
  }

  private async merge(target: string, records?: LockRecords): Promise<boolean> {
    // The target's last recorded commit, read in the MERGE (no row: NULL, and no lease ends by a record).
    const recorded = records ? `(${records.lastRecorded})` : 'CAST(NULL AS INT)';
    const ends = records?.endsWithRecord ? `${recorded} + 1` : 'CAST(NULL AS INT)';
    const rows = await this.db.execute(`MERGE INTO ${LOCKS_TABLE} l
USING (SELECT ${sparkString(target)} AS target, ${sparkString(this.holder)} AS holder, current_timestamp() + INTERVAL ${LEASE_MINUTES} MINUTES AS expires_at,
  ${recorded} AS recorded, ${ends} AS ${ENDS_AT}) s
ON l.target = s.target
WHEN MATCHED AND (l.expires_at < current_timestamp() OR l.holder = s.holder OR l.${ENDS_AT} <= s.recorded) THEN UPDATE SET holder = s.holder, expires_at = s.expires_at, ${ENDS_AT} = s.${ENDS_AT}
WHEN NOT MATCHED THEN INSERT (target, holder, expires_at, ${ENDS_AT}) VALUES (s.target, s.holder, s.expires_at, s.${ENDS_AT})`);
    return Number(rows[0]?.num_affected_rows ?? 0) > 0;
  }
}

/**
 * What a lease MERGE's error (its first line: Spark names the table in backquotes) says of the lease
 * table: none yet, or one made without the ends column; undefined for any other error.
 */
type LeaseTableFault = 'missing' | 'without-ends';
export function leaseTableFault(message: string): LeaseTableFault | undefined {
  if (/TABLE_OR_VIEW_NOT_FOUND/.test(message) && message.includes(`\`${LOCKS_TABLE}\``)) return 'missing';
  if (/UNRESOLVED|Cannot resolve/i.test(message) && message.includes(ENDS_AT)) return 'without-ends';
  return undefined;
}
