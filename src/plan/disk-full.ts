import { tmpdir } from 'node:os';
import type { Driver } from '../dialects/driver.js';
import { ScdError } from '../errors.js';
import type { Flow } from '../flow/flow.js';
import { latestVersion } from '../store/commits.js';
import { storeNames } from '../store/names.js';

/**
 * A commit that fills the disk is undone whole by the engine: DuckDB and PostgreSQL keep a
 * commit's writes out of the database until its COMMIT succeeds, and a COMMIT that cannot write
 * its log changes nothing: the previous commit stays whole (docs/decisions/0039-a-full-disk-is-one-line.md;
 * test/e2e/disk-full.test.ts fills a disk for real).
 * What a person needs then is one line: the disk is full, the commit the target is still at, and
 * what to free. Any other error passes through as it is.
 */
export async function reportDiskFull<T>(driver: Driver, flow: Flow, operation: 'apply' | 'rebuild' | 'compaction', run: () => Promise<T>): Promise<T> {
  try {
    return await run();
  } catch (e) {
    const fix = isNodeDiskFull(e) ? `free space on the disk of ${tmpdir()} (scdkit's temporary files; TMPDIR moves them), then run it again` : driver.diskFull(e);
    if (fix === undefined) throw e;
    throw new ScdError('NOT_APPLIED', `the disk is full: nothing of this ${operation} was kept, and ${await kept(driver, flow)}`, { file: flow.origin, fix, cause: e });
  }
}

/** What the target is now: the last commit the engine kept (read again: another may have come). */
async function kept(driver: Driver, flow: Flow): Promise<string> {
  const version = await (async () => ((await driver.columns(storeNames(flow.target).commits)) ? latestVersion(driver, flow) : 0))().catch(() => undefined);
  if (version === undefined) return `target "${flow.target}" is as its last commit left it`;
  return version === 0 ? `target "${flow.target}" has no commit yet` : `target "${flow.target}" is as commit ${version} left it`;
}

/** Node's own report of a full disk, writing scdkit's temporary files. */
function isNodeDiskFull(e: unknown): boolean {
  return typeof e === 'object' && e !== null && (e as NodeJS.ErrnoException).code === 'ENOSPC';
}
