/**
 * The batches of the Spark tests that fail a commit after each of its writes (spark-crash.suite.ts,
 * spark-maintenance.suite.ts): each batch writes every table of a target — the log, the
 * quarantine, the key state, the target.
 */

/** A change record of the crash tests' flows (`applyAsDeletes: "op = 'D'"`, `exceptColumns: ['op']`). */
export const ev = (id: number | null, city: string, seq: number, op = 'U') => ({ id, city, seq, op });
export type CrashRecord = ReturnType<typeof ev>;

/** Four keys, one version each. */
export const base: CrashRecord[] = [ev(1, 'Goa', 10), ev(2, 'Pune', 10), ev(3, 'Agra', 10), ev(4, 'Rome', 10)];

/** Batch k: an in-order change, a late one inside an earlier version, a delete, a new key, a bad record. */
export const batch = (k: number): CrashRecord[] => [
  ev(1, `in-order-${k}`, 100 + 10 * k),
  ev(2, `late-${k}`, 11 + k),
  ev(3, '', 100 + 10 * k + 5, k % 2 ? 'D' : 'U'),
  ev(10 + k, `new-${k}`, 100 + 10 * k),
  ev(null, `bad-${k}`, 100 + 10 * k),
];

/** Rows in an order-free form, for comparing two engines' reads. */
export const sorted = (rows: Array<Record<string, unknown>>) => rows.map((r) => JSON.stringify(r)).sort();
