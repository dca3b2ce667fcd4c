import { statSync } from 'node:fs';
import { applySource } from '../api.js';
import { connectionLost, lostReason } from '../dialects/connection-lost.js';
import { FILE_WAIT_MS } from '../dialects/open-waiting.js';
import { ScdError } from '../errors.js';
import type { Flow } from '../flow/flow.js';
import type { ApplyResult } from '../plan/apply.js';
import { folderFiles } from '../sources/files.js';

export interface WatchOptions {
  database?: string;
  intervalMs: number;
  each: boolean;
  progress?: (m: string) => void;
  print: (r: ApplyResult) => void;
  /** Aborting it stops the watcher as SIGINT does (a commit in progress finishes first). */
  signal?: AbortSignal;
}

/**
 * `scd apply --watch`: apply new files of the flow's source.path as they land, until SIGINT or
 * SIGTERM (or `signal` is aborted); a commit in progress always finishes.
 *
 * The database is opened for each round that may have something to apply and closed after it: a
 * DuckDB file is held by one process at a time, so between rounds `scd export`, `log`, `serve`
 * (other processes) open it freely. A round whose folder listing is the one of the last round
 * (same files, sizes and times, none too young then) opens nothing. A round that meets the file
 * held by another process waits up to 5 s, then says so once and tries again at the next round.
 * A round that loses its connection to a database server (a restart, the session ended) keeps
 * nothing of its commit (the server rolls it back): the watcher says so once, tries again every
 * round, and says so once when the server answers again.
 */
export async function watch(flow: Flow, options: WatchOptions): Promise<void> {
  const { intervalMs, each, progress, print } = options;
  if (!Number.isFinite(intervalMs) || intervalMs <= 0) throw new ScdError('USAGE', '--interval must be a positive number of seconds', { fix: 'e.g. --interval 2' });
  let stopping = false;
  let wake: (() => void) | undefined;
  const stop = () => {
    if (!stopping) process.stderr.write('scd: stopping (a commit in progress finishes first)\n');
    stopping = true;
    wake?.();
  };
  process.on('SIGINT', stop);
  process.on('SIGTERM', stop);
  options.signal?.addEventListener('abort', stop);
  if (options.signal?.aborted) stopping = true;
  const warned = new Set<string>();
  // Files must be at least this old: a writer may still be writing a newer one.
  const minAgeMs = Math.min(intervalMs, 1000);
  let settled: string | undefined;
  let busy = false;
  let lost = false;
  process.stderr.write(`scd: watching ${flow.source?.path ?? '(no source.path)'} every ${intervalMs / 1000}s; Ctrl-C stops\n`);
  try {
    while (!stopping) {
      const listing = folderListing(flow, minAgeMs);
      if (listing === undefined || listing.signature !== settled) {
        try {
          const report = await applySource(flow, { database: options.database, waitMs: FILE_WAIT_MS, each, onProgress: progress, onCommit: print, minAgeMs });
          for (const w of report.warnings) {
            if (warned.has(w)) continue;
            warned.add(w);
            process.stderr.write(`scd: warning: ${w}\n`);
          }
          // Every file listed was old enough: until the listing changes there is nothing to do.
          settled = listing?.allOldEnough ? listing.signature : undefined;
          busy = false;
          if (lost) process.stderr.write('scd: the database answers again; watching goes on\n');
          lost = false;
        } catch (e) {
          if (connectionLost(e)) {
            if (!lost)
              process.stderr.write(
                `scd: lost the connection to the database (${lostReason(e)}); trying again every ${intervalMs / 1000}s (each file is still applied exactly once)\n`,
              );
            lost = true;
          } else {
            if (!(e instanceof ScdError && e.code === 'DB_IN_USE')) throw e;
            if (!busy) process.stderr.write(`scd: ${e.oneLine()}; trying again every ${intervalMs / 1000}s\n`);
            busy = true;
          }
        }
      }
      if (stopping) break;
      await new Promise<void>((resolve) => {
        wake = resolve;
        setTimeout(resolve, intervalMs);
      });
    }
  } finally {
    process.off('SIGINT', stop);
    process.off('SIGTERM', stop);
    options.signal?.removeEventListener('abort', stop);
  }
  process.stderr.write('scd: stopped\n');
}

/** The landing folder's files (path, size, time) as one string, or undefined when it cannot be listed (or the source is a table). */
function folderListing(flow: Flow, minAgeMs: number): { signature: string; allOldEnough: boolean } | undefined {
  const src = flow.source?.path;
  if (!src) return undefined;
  try {
    const now = Date.now();
    let allOldEnough = true;
    const files = statSync(src).isDirectory() ? folderFiles(src, flow.source?.format).map((f) => f.path) : [src];
    const parts = files.map((f) => {
      const st = statSync(f);
      if (now - st.mtimeMs < minAgeMs) allOldEnough = false;
      return `${f}\0${st.size}\0${st.mtimeMs}`;
    });
    return { signature: parts.join('\n'), allOldEnough };
  } catch {
    return undefined;
  }
}
