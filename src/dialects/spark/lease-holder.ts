import { readlinkSync } from 'node:fs';
import { hostname } from 'node:os';
import path from 'node:path';

/**
 * Who holds a target's lease on Spark, as the lease row records it: enough for a person to find
 * the holder (host, process id, command), and for a commit on the same machine to tell that the
 * holder's process is gone.
 */
export interface LeaseHolder {
  host: string;
  pid: number;
  /**
   * The process-id namespace the pid belongs to (Linux: `/proc/self/ns/pid`, '' elsewhere): two
   * containers may share a host name but not their pids, and a pid is only compared within one.
   */
  pidSpace: string;
  /** The command line, without anything that may carry a credential. */
  command: string;
}

/** This process, as a lease row records its holder. */
export function thisProcess(): LeaseHolder {
  return { host: hostname(), pid: process.pid, pidSpace: pidNamespace(), command: commandLine(process.argv) };
}

function pidNamespace(): string {
  try {
    return readlinkSync('/proc/self/ns/pid');
  } catch {
    return '';
  }
}

/** Longest command a lease row keeps. */
const COMMAND_CHARS = 200;

/**
 * The program's name and its arguments, an argument that may hold a credential (a URL, a
 * `key=value`, anything naming a token, password or secret) written as `…`.
 */
export function commandLine(argv: readonly string[]): string {
  const [, program = '', ...args] = argv;
  const shown = args.map((a) => (/:\/\/|=|token|passw|secret|credential/i.test(a) ? '…' : a));
  const line = [path.basename(program), ...shown].join(' ');
  return line.length > COMMAND_CHARS ? `${line.slice(0, COMMAND_CHARS - 1)}…` : line;
}

/**
 * Whether `holder`'s process is known to be gone: it ran on this machine, in this process-id
 * namespace, and no process has its pid now. A holder elsewhere, or of unknown origin (a lease
 * row of an older scdkit), is never taken for gone: its lease runs out by itself.
 */
export function holderGone(holder: Partial<LeaseHolder>, here: LeaseHolder, alive: (pid: number) => boolean = processAlive): boolean {
  if (!holder.host || holder.host !== here.host || holder.pidSpace !== here.pidSpace) return false;
  if (typeof holder.pid !== 'number' || !Number.isInteger(holder.pid) || holder.pid <= 0) return false;
  return !alive(holder.pid);
}

/** Whether a process with this pid exists (one of another user's counts: signalling it is refused, not missing). */
export function processAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (e) {
    return (e as NodeJS.ErrnoException).code !== 'ESRCH';
  }
}

/** The holder as a person reads it: `pid 4242 on host build-7, command: scd apply flow.yaml`; '' when unknown. */
export function describeHolder(holder: Partial<LeaseHolder>): string {
  if (!holder.host) return '';
  const pid = typeof holder.pid === 'number' ? `pid ${holder.pid} on ` : '';
  return `${pid}host ${holder.host}${holder.command ? `, command: ${holder.command}` : ''}`;
}
