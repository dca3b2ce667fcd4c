/**
 * `scd ARGS` run inside the test process: the same commands, options and printing as bin/scd
 * (src/cli/main.ts buildProgram), without a process start per command. stdout and stderr are
 * captured while the command runs; an error is reported as bin/scd reports it, with its exit code.
 */
import { buildProgram, reportError } from '../../src/cli/main.js';

export interface ScdRun {
  stdout: string;
  stderr: string;
  code: number;
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

export async function scdInProcess(args: string[]): Promise<ScdRun> {
  const out: string[] = [];
  const err: string[] = [];
  const stdout = process.stdout.write;
  const stderr = process.stderr.write;
  process.stdout.write = capture(out);
  process.stderr.write = capture(err);
  let code = 0;
  try {
    await buildProgram().exitOverride().parseAsync(args, { from: 'user' });
  } catch (e) {
    code = reportError(e);
  } finally {
    process.stdout.write = stdout;
    process.stderr.write = stderr;
  }
  return { stdout: out.join(''), stderr: err.join(''), code };
}
