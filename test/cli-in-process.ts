/**
 * `scd ARGS` run inside the test process: the same commands, options and printing as bin/scd
 * (src/cli/main.ts buildProgram), without a process start per command. For the duration of the
 * command it runs in the given folder with the given environment (SCD_DEBUG cleared, as the
 * process helpers do), stdout and stderr are captured (and are not terminals, as in a child
 * process with pipes), and it ends with the exit code bin/scd gives: commander's own for --help,
 * --version and usage errors, reportError's for an error of the command, process.exitCode if the
 * command set one, else 0. Everything is put back after it: folder, environment, writers,
 * process.exitCode; a listener the command left on `process` is removed and fails the run (a
 * command must be re-entrant to run here).
 *
 * One command at a time in a process: a second call while one runs throws (their output would be
 * captured together). Two at once, signals, stdin, commands that run until stopped (--watch,
 * serve), crashes and the bin/scd shell itself need a real process (scdProcess in the fixtures).
 */
import { type Command, CommanderError } from 'commander';
import { buildProgram, reportError } from '../src/cli/main.js';

export interface ScdRun {
  stdout: string;
  stderr: string;
  code: number;
}

export interface InProcessOptions {
  /** The working folder of the command (default: the test process's). */
  cwd?: string;
  /** Environment variables set for the command; undefined unsets one. */
  env?: NodeJS.ProcessEnv;
}

type Write = typeof process.stdout.write;

function capture(into: string[]): Write {
  return ((chunk: string | Uint8Array, a?: unknown, b?: unknown) => {
    into.push(typeof chunk === 'string' ? chunk : Buffer.from(chunk).toString('utf8'));
    const done = typeof a === 'function' ? a : typeof b === 'function' ? b : undefined;
    if (done) queueMicrotask(() => (done as () => void)());
    return true;
  }) as Write;
}

/** Commander calls process.exit unless told otherwise, on every command: each throws instead, and the error is kept. */
function throwOnExit(cmd: Command, exits: Set<CommanderError>): void {
  cmd.exitOverride((e) => {
    exits.add(e);
    throw e;
  });
  for (const sub of cmd.commands) throwOnExit(sub, exits);
}

/** Set a property of a stream for the duration; returns what puts it back. */
function override(target: object, key: string, value: unknown): () => void {
  const before = Object.getOwnPropertyDescriptor(target, key);
  Object.defineProperty(target, key, { value, configurable: true, writable: true, enumerable: true });
  return () => {
    if (before) Object.defineProperty(target, key, before);
    else delete (target as Record<string, unknown>)[key];
  };
}

type Listeners = Map<string | symbol, ReturnType<NodeJS.EventEmitter['rawListeners']>>;

function listenersOf(emitter: NodeJS.EventEmitter): Listeners {
  return new Map(emitter.eventNames().map((name) => [name, emitter.rawListeners(name)]));
}

/** Remove the listeners added since `before`; returns the events they were on. */
function removeAdded(emitter: NodeJS.EventEmitter, before: Listeners): string[] {
  const leaked: string[] = [];
  for (const name of emitter.eventNames()) {
    for (const l of emitter.rawListeners(name)) {
      if (before.get(name)?.includes(l)) continue;
      emitter.removeListener(name, l as (...args: unknown[]) => void);
      leaked.push(String(name));
    }
  }
  return leaked;
}

let running: string | undefined;

export async function scdInProcess(args: string[], options: InProcessOptions = {}): Promise<ScdRun> {
  if (running !== undefined)
    throw new Error(
      `scdInProcess: \`scd ${args.join(' ')}\` called while \`scd ${running}\` runs: one command at a time in a process ` +
        '(their output would be captured together); await the first, or run both as processes (scdProcess)',
    );
  running = args.join(' ');
  const cwd = process.cwd();
  const env: NodeJS.ProcessEnv = { SCD_DEBUG: '', ...options.env };
  const envBefore = new Map(Object.keys(env).map((k) => [k, Object.hasOwn(process.env, k) ? process.env[k] : undefined]));
  const exitCodeBefore = process.exitCode;
  const listeners = listenersOf(process);
  const out: string[] = [];
  const err: string[] = [];
  const stdout = process.stdout.write;
  const stderr = process.stderr.write;
  const restore: Array<() => void> = [];
  let code = 0;
  try {
    if (options.cwd !== undefined) process.chdir(options.cwd);
    for (const [k, v] of Object.entries(env)) {
      if (v === undefined) delete process.env[k];
      else process.env[k] = v;
    }
    process.exitCode = undefined;
    // A child process's stdout and stderr are pipes: not terminals (table output, help width).
    restore.push(override(process.stdout, 'isTTY', undefined), override(process.stderr, 'isTTY', undefined));
    process.stdout.write = capture(out);
    process.stderr.write = capture(err);
    const exits = new Set<CommanderError>();
    const program = buildProgram();
    throwOnExit(program, exits);
    try {
      await program.parseAsync(args, { from: 'user' });
      if (process.exitCode !== undefined) code = Number(process.exitCode);
    } catch (e) {
      // Commander's exits (--help, --version, usage errors) have printed what they print; any
      // other error is reported as bin/scd's main reports it.
      code = e instanceof CommanderError && exits.has(e) ? e.exitCode : reportError(e);
    }
  } finally {
    process.stdout.write = stdout;
    process.stderr.write = stderr;
    for (const r of restore.reverse()) r();
    process.exitCode = exitCodeBefore;
    for (const [k, v] of envBefore) {
      if (v === undefined) delete process.env[k];
      else process.env[k] = v;
    }
    process.chdir(cwd);
    running = undefined;
  }
  const leaked = removeAdded(process, listeners);
  if (leaked.length) throw new Error(`scdInProcess: \`scd ${args.join(' ')}\` left listeners on process (${leaked.join(', ')}): a command run in-process must remove what it adds`);
  return { stdout: out.join(''), stderr: err.join(''), code };
}
