import type { Driver, LockRecords } from '../dialects/driver.js';
import type { Progress } from './apply.js';

/**
 * Take the flow target's lock (Driver.lockTarget), telling `progress` when it waits for another
 * commit. Returns how long it waited (ms; 0 when the lock was free): from the moment the driver
 * said it waits until it holds the lock. A commit's reported duration leaves that out: it is
 * another commit's time, not this one's.
 */
export async function lockTargetWaited(driver: Driver, target: string, progress: Progress, records?: LockRecords, now: () => number = Date.now): Promise<number> {
  let waitBegan: number | undefined;
  await driver.lockTarget(
    target,
    (message) => {
      waitBegan ??= now();
      progress(message);
    },
    records,
  );
  return waitBegan === undefined ? 0 : now() - waitBegan;
}
