/**
 * A disk that fills up during a commit (docs/decisions/0039-a-full-disk-is-one-line.md), for real:
 * the database (a DuckDB file, a PGlite data folder) lives on a tmpfs mounted in a private mount
 * namespace of a child shell (`unshare -m` as root, else `unshare -Urm`), so nothing is mounted
 * outside it and the mount goes with the child; after the first commit the tmpfs shrinks to 1 MB
 * more than it holds. The commit that does not fit is undone whole and said in one line: the disk
 * is full, the commit the target is still at, what to free. Once there is room, the next commit
 * follows it without a gap.
 *
 * The only skip: where this machine lets no process mount a tmpfs (a container without
 * CAP_SYS_ADMIN and without user namespaces); the mapping itself is tested everywhere in
 * test/safety/disk-full.test.ts.
 */
import { spawnSync } from 'node:child_process';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { errorLines, ndjson, parseNdjson, SCD, tempDir } from './fixtures/cli.js';

/** unshare's flags that let a child mount a tmpfs here, or undefined where none do. */
function mountFlags(): string[] | undefined {
  const dir = tempDir('scdkit-mount-probe-');
  try {
    for (const flags of [process.getuid?.() === 0 ? ['-m'] : [], ['-Urm']].filter((f) => f.length)) {
      const r = spawnSync('unshare', [...flags, 'sh', '-c', 'mount -t tmpfs -o size=1m tmpfs "$0"', dir.dir], { encoding: 'utf8' });
      if (r.status === 0) return flags;
    }
    return undefined;
  } finally {
    dir.cleanup();
  }
}

const flags = mountFlags();
if (!flags) console.warn('disk-full.test.ts: skipped: this machine lets no process mount a tmpfs (unshare -m / -Urm refused)');

let tmp: { dir: string; cleanup: () => void };
beforeAll(() => {
  tmp = tempDir();
});
afterAll(() => tmp?.cleanup());

/** The engines whose files can sit on the small disk: a DuckDB file, a PGlite data folder. */
const databases = [
  { engine: 'duckdb', database: 'small/w.duckdb', fix: /free space on the disk of .*small\/w\.duckdb .*SCD_DUCKDB_TEMP_DIRECTORY.*SCD_DUCKDB_MEMORY_LIMIT.*then run it again/ },
  { engine: 'pglite', database: 'pglite://small/pg', fix: /free space on the disk of the PostgreSQL server at pglite:\/\/small\/pg .*then run it again/ },
];

describe.skipIf(!flags).each(databases)('$engine: a full disk during a commit (its files on a tmpfs with 1 MB left)', ({ engine, database, fix }) => {
  it('is one line naming the commit kept and the fix; the target stays as it was; with room, the next commit follows', () => {
    const dir = path.join(tmp.dir, engine);
    mkdirSync(path.join(dir, 'small'), { recursive: true });
    writeFileSync(path.join(dir, 'flow.yaml'), `target: dim\nkeys: [id]\nsequenceBy: seq\ndatabase: ${database}\n`);
    writeFileSync(path.join(dir, 'b1.ndjson'), ndjson([{ id: 1, seq: 1, v: 'a' }]));
    // About 2.5 MB of records that do not compress away: more than the 1 MB left.
    writeFileSync(path.join(dir, 'big.ndjson'), ndjson(Array.from({ length: 30000 }, (_, i) => ({ id: i + 2, seq: 2, v: `${i}-${(i * 2654435761) % 4294967296}`.repeat(6) }))));
    const step = (name: string, args: string) => `node ${JSON.stringify(SCD)} ${args} > ${name}.out 2> ${name}.err; echo $? > ${name}.code`;
    writeFileSync(
      path.join(dir, 'run.sh'),
      [
        'set -e',
        'mount -t tmpfs -o size=256m tmpfs small',
        'set +e',
        step('first', 'apply flow.yaml --input b1.ndjson'),
        // The disk shrinks to what the database holds, and 1 MB more.
        'mount -o remount,size=$(( $(du -sk small | cut -f1) + 1024 ))k small',
        step('full', 'apply flow.yaml --input big.ndjson'),
        step('log1', 'log flow.yaml'),
        step('export1', 'export flow.yaml --format ndjson'),
        // Room again: the same input is the next commit.
        'mount -o remount,size=256m small',
        step('again', 'apply flow.yaml --input big.ndjson --json'),
        step('log2', 'log flow.yaml'),
      ].join('\n'),
    );
    const r = spawnSync('unshare', [...flags!, 'sh', 'run.sh'], { cwd: dir, encoding: 'utf8', env: { ...process.env, SCD_DEBUG: '' } });
    expect(r.status, r.stderr).toBe(0);
    const read = (name: string) => ({
      code: Number(readFileSync(path.join(dir, `${name}.code`), 'utf8')),
      out: readFileSync(path.join(dir, `${name}.out`), 'utf8'),
      err: readFileSync(path.join(dir, `${name}.err`), 'utf8'),
    });
    expect(read('first').code, read('first').err).toBe(0);
    const full = read('full');
    expect(full.code).toBe(1);
    const lines = errorLines(full.err);
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatch(/^scd: flow\.yaml: the disk is full: nothing of this apply was kept, and target "dim" is as commit 1 left it \(fix: .*\)$/);
    expect(lines[0]).toMatch(fix);
    expect(lines[0]).not.toMatch(/Failed to commit|IO Error|could not extend|likely a bug/);
    expect(parseNdjson(read('log1').out).map((c) => c.version)).toEqual([1]);
    expect(parseNdjson(read('export1').out)).toEqual([{ id: 1, seq: 1, v: 'a', __START_AT: 1, __END_AT: null }]);
    const again = read('again');
    expect(again.code, again.err).toBe(0);
    expect(JSON.parse(again.out)).toMatchObject({ version: 2, eventsApplied: 30000 });
    expect(parseNdjson(read('log2').out).map((c) => c.version)).toEqual([2, 1]);
  }, 240_000);
});
