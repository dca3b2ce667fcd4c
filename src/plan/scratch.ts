import type { Driver } from '../dialects/driver.js';
import { TMP } from '../store/names.js';
import { DIFF_VIEWS, WALKED } from './diff-sql.js';
import { LOG_VIEW } from './walk-input-sql.js';

/**
 * Run a commit's work, then discard its scratch tables and views, also when it fails (a commit's
 * scratch never outlives it, so none is there when the next begins).
 */
export async function withScratch<T>(driver: Driver, work: () => Promise<T>): Promise<T> {
  let out: T;
  try {
    out = await work();
  } catch (e) {
    // The commit's own error is the one to report.
    await discardCommitScratch(driver).catch(() => undefined);
    throw e;
  }
  await discardCommitScratch(driver);
  return out;
}

/**
 * Drop every scratch table and view a commit may have made. Also in the middle of a commit, once
 * nothing reads them any more (Driver.scratchSlowsWrites); withScratch's drop at the end
 * then finds nothing left to send.
 */
export async function discardCommitScratch(driver: Driver): Promise<void> {
  const views: string[] = [LOG_VIEW, ...DIFF_VIEWS];
  const tables = [...Object.values(TMP).filter((t) => !views.includes(t)), ...Object.values(WALKED)];
  await driver.discardScratch(tables, views);
}
