/**
 * The real program a few times: `node bin/scd` in a child process (the shell, dist/, the process's
 * own exit codes). Most CLI tests run scd's commands in the test process (test/cli-in-process.ts);
 * each command here runs that way too, and must give the same exit code and output.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { copyFixture, errorLines, parseNdjson, ROOT, type RunResult, scd, scdProcess, tempDir } from './fixtures/cli.js';

let tmp: { dir: string; cleanup: () => void };
let dir: string;
beforeAll(() => {
  tmp = tempDir('scdkit-smoke-');
  dir = copyFixture('accounts', path.join(tmp.dir, 'accounts'));
});
afterAll(() => tmp.cleanup());

/** bin/scd ARGS in `dir`; the same in-process must print the same (durations aside). */
async function both(args: string[]): Promise<RunResult> {
  const real = await scdProcess(args, dir);
  const here = await scd(args, dir);
  const timeless = (r: RunResult) => ({ ...r, stdout: r.stdout.replace(/\(\d+ ms\)|"durationMs":\d+|"ms":\d+/g, 'MS') });
  expect(timeless(here), `in-process scd ${args.join(' ')}`).toEqual(timeless(real));
  return real;
}

// In order, on one copy of the accounts fixture: the read before any apply comes before the apply.
describe('bin/scd in a child process', () => {
  it('--help prints the usage on stdout and exits 0; --version prints the package version', async () => {
    const help = await both(['--help']);
    expect(help.code).toBe(0);
    expect(help.stdout).toMatch(/^Usage: scd \[options\] \[command\]/);
    expect(help.stdout).toMatch(/^ {2}apply \[options\] <flow>/m);
    expect(help.stderr).toBe('');
    const version = await both(['--version']);
    const pkg = JSON.parse(readFileSync(path.join(ROOT, 'package.json'), 'utf8')) as { version: string };
    expect(version).toEqual({ code: 0, stdout: `${pkg.version}\n`, stderr: '' });
  });

  it("a usage error exits 1 with commander's line and the hint; no command prints the usage on stderr and exits 1", async () => {
    const unknown = await both(['export', 'flow.yaml', '--frobnicate']);
    expect(unknown.code).toBe(1);
    expect(unknown.stderr).toBe("error: unknown option '--frobnicate'\n(run `scd --help` for usage)\n");
    const bare = await both([]);
    expect(bare.code).toBe(1);
    expect(bare.stdout).toBe('');
    expect(bare.stderr).toMatch(/^Usage: scd /);
  });

  it('a read before any apply exits 1 with one scd: line', async () => {
    const r = await both(['export', 'flow.yaml', '--format', 'ndjson']);
    expect(r.code).toBe(1);
    expect(r.stdout).toBe('');
    expect(errorLines(r.stderr)).toEqual([expect.stringMatching(/^scd: flow.yaml: target "dim_account": database .* does not exist \(fix: .+\)$/)]);
  });

  it('apply --each commits each file of the landing folder and prints a JSON line for each', async () => {
    const r = await scdProcess(['apply', 'flow.yaml', '--each', '--json'], dir);
    expect(r.code, r.stderr).toBe(0);
    expect(parseNdjson(r.stdout).map((c) => [c.version, c.rowsRead])).toEqual([
      [1, 3],
      [2, 3],
      [3, 4],
    ]);
    // Nothing new: the same line in-process as from bin/scd.
    const again = await both(['apply', 'flow.yaml', '--json']);
    expect(parseNdjson(again.stdout)).toEqual([{ version: null, nothingNew: true, alreadyApplied: 3, warnings: [] }]);
  });

  it('export prints the target as NDJSON, exactly', async () => {
    const r = await both(['export', 'flow.yaml', '--format', 'ndjson']);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toBe(readFileSync(path.join(dir, 'expected.ndjson'), 'utf8'));
  });

  it('show prints every version of a key; an unknown key exits 1', async () => {
    const r = await both(['show', 'flow.yaml', '--key', 'account_id=1', '--format', 'ndjson']);
    expect(r.code, r.stderr).toBe(0);
    expect(parseNdjson(r.stdout).map((v) => v.tier)).toEqual(['gold', 'silver', 'platinum']);
    const none = await both(['show', 'flow.yaml', '--key', 'account_id=999', '--format', 'ndjson']);
    expect(none.code).toBe(1);
    expect(errorLines(none.stderr)).toEqual([expect.stringContaining('key account_id=999 has no versions in dim_account')]);
  });
});

describe('scd in-process (test/cli-in-process.ts)', () => {
  it('refuses a second command while one runs, and puts back the folder, environment and exit code', async () => {
    const cwd = process.cwd();
    const first = scd(['export', 'flow.yaml', '--format', 'ndjson'], dir, { SCD_SMOKE: 'set' });
    await expect(scd(['log', 'flow.yaml'], dir)).rejects.toThrow(/one command at a time in a process/);
    expect((await first).code).toBe(0);
    expect([process.cwd(), process.env.SCD_SMOKE, process.exitCode]).toEqual([cwd, undefined, undefined]);
  });
});
