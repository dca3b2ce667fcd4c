import { randomUUID } from 'node:crypto';
import { targetHeld, targetInUse, type Row } from '../driver.js';
import { sparkString } from './spark-dialect.js';

/** The Delta table that holds the targets' leases, in the flow's database. */
export const LOCKS_TABLE = '_scd_locks';
/** A lease outlives a holder that died (kill -9, a lost connection) by at most this long. */
export const LEASE_MINUTES = 30;
/** How often a waiting commit asks again. */
const RETRY_MS = 1000;

export interface LeaseStatements {
  execute(sql: string): Promise<Row[]>;
}

/**
 * A target's write lock on Spark, which has no advisory locks: a lease row per target in a Delta
 * table, taken by one MERGE that inserts it or takes over an expired one. Delta's optimistic
 * concurrency makes the MERGE atomic: of two at once, one fails with a conflict and tries again.
 * The holder deletes its row when its commit ends; a holder that died leaves it until it expires.
 */
export class SparkLease {
  private readonly holder = randomUUID();
  private held: string | undefined;
  private ready = false;

  constructor(
    private readonly db: LeaseStatements,
    private readonly location: string,
  ) {}

  /** Take the target's lease, asking again every second while another holds it (`waiting` is told once). */
  async acquire(target: string, noWait: boolean, waiting?: (message: string) => void): Promise<void> {
    if (!this.ready) {
      await this.db.execute(`CREATE TABLE IF NOT EXISTS ${LOCKS_TABLE} (target STRING NOT NULL, holder STRING NOT NULL, expires_at TIMESTAMP NOT NULL) USING delta`);
      this.ready = true;
    }
    for (let told = false; ; ) {
      if (await this.tryTake(target)) {
        this.held = target;
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

  /** Give the lease back (nothing when none is held). */
  async release(): Promise<void> {
    if (this.held === undefined) return;
    const target = this.held;
    this.held = undefined;
    await this.db.execute(`DELETE FROM ${LOCKS_TABLE} WHERE target = ${sparkString(target)} AND holder = ${sparkString(this.holder)}`);
  }

  private async tryTake(target: string): Promise<boolean> {
    try {
      const rows = await this.db.execute(`MERGE INTO ${LOCKS_TABLE} l
USING (SELECT ${sparkString(target)} AS target, ${sparkString(this.holder)} AS holder, current_timestamp() + INTERVAL ${LEASE_MINUTES} MINUTES AS expires_at) s
ON l.target = s.target
WHEN MATCHED AND (l.expires_at < current_timestamp() OR l.holder = s.holder) THEN UPDATE SET holder = s.holder, expires_at = s.expires_at
WHEN NOT MATCHED THEN INSERT (target, holder, expires_at) VALUES (s.target, s.holder, s.expires_at)`);
      return Number(rows[0]?.num_affected_rows ?? 0) > 0;
    } catch (e) {
      // Another MERGE on the table at the same moment: Delta refused one of the two; ask again.
      if (/Concurrent|DELTA_CONCURRENT/i.test(String((e as Error).message))) return false;
      throw e;
    }
  }
}
