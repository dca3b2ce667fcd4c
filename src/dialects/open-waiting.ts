import { readFileSync } from 'node:fs';
import { ScdError } from '../errors.js';
import type { Driver } from './driver.js';
import { type OpenOptions, openDriver } from './index.js';

/** How long a command waits for a database file another process holds (a commit in progress). */
export const FILE_WAIT_MS = 5000;
const STEP_MS = 100;

/**
 * Open a database, waiting up to `waitMs` while another process holds it (a DuckDB file is held
 * by one process at a time: an apply, a `--watch` while it applies, a reader). After the wait the
 * DB_IN_USE error says what holds it: the holder's pid and, where the system shows it, its
 * command line. The one wait of the CLI's commands and of `scd serve`'s requests.
 */
export async function openDriverWaiting(database: string, options: OpenOptions & { waitMs?: number } = {}): Promise<Driver> {
  const { waitMs = FILE_WAIT_MS, ...open } = options;
  const until = Date.now() + waitMs;
  for (;;) {
    try {
      return await openDriver(database, open);
    } catch (e) {
      if (!(e instanceof ScdError && e.code === 'DB_IN_USE')) throw e;
      if (Date.now() >= until) throw waitMs > 0 ? heldBy(e, waitMs) : e;
      await new Promise((r) => setTimeout(r, STEP_MS));
    }
  }
}

/** The error after the wait: how long it waited, and the holder's command when it can be read. */
function heldBy(e: ScdError, waitMs: number): ScdError {
  const pid = /\(pid (\d+)\)/.exec(e.problem)?.[1];
  const command = pid ? commandOf(pid) : undefined;
  const message = `${command ? e.problem.replace(`(pid ${pid})`, `(pid ${pid}: ${command})`) : e.problem}; waited ${waitMs / 1000} s`;
  return new ScdError('DB_IN_USE', message, { fix: e.fix ?? 'wait for it to finish, then run again' });
}

/** A process's command line, shortened for one line (Linux's /proc), or undefined. */
function commandOf(pid: string): string | undefined {
  try {
    const args = readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').filter(Boolean);
    // `node …/bin/scd apply flow.yaml --watch` reads as `scd apply flow.yaml --watch`.
    const scd = args.findIndex((a) => /(^|\/)scd(\.js)?$/.test(a));
    const shown = (scd >= 0 ? ['scd', ...args.slice(scd + 1)] : args).join(' ');
    return shown.length > 80 ? `${shown.slice(0, 77)}...` : shown || undefined;
  } catch {
    return undefined;
  }
}
