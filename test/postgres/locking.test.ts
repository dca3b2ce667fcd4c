/**
 * PostgreSQL only (a real server: SCD_TEST_POSTGRES_URL): two applies of one target never
 * interleave. The second waits on the target's advisory lock, or fails at once with --no-wait.
 */
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { applyRows, defineFlow, readTargetWith, ScdError } from '../../src/index.js';
import { PostgresDriver } from '../../src/dialects/postgres/index.js';
import { freshSchema } from '../engines.js';
import { ndjson, scd, tempDir } from '../e2e/fixtures/cli.js';

const url = process.env.SCD_TEST_POSTGRES_URL;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe.skipIf(!url)('postgres: one apply at a time per target', () => {
  const flow = defineFlow({ target: 'dim_lock', keys: 'id', sequenceBy: 'seq' });

  /** Hold the target's lock in an open transaction of another connection until `release` resolves. */
  async function holdLock(schema: string, release: Promise<void>): Promise<{ held: Promise<void>; done: Promise<void> }> {
    const holder = await PostgresDriver.connect(url!, { schema });
    let held!: () => void;
    const heldP = new Promise<void>((r) => (held = r));
    const done = holder
      .transaction(async () => {
        await holder.lockTarget('dim_lock');
        held();
        await release;
      })
      .finally(() => holder.close());
    await heldP;
    return { held: heldP, done };
  }

  it('the second apply waits for the first to commit, then applies', async () => {
    const schema = freshSchema();
    const a = await PostgresDriver.connect(url!, { schema, dropSchemaOnClose: true });
    try {
      await applyRows(a, flow, [{ id: 1, v: 'a', seq: 1 }]);
      let release!: () => void;
      const { done } = await holdLock(schema, new Promise<void>((r) => (release = r)));
      let finished = false;
      const second = applyRows(a, flow, [{ id: 1, v: 'b', seq: 2 }]).then((r) => {
        finished = true;
        return r;
      });
      await sleep(700);
      expect(finished, 'the apply must wait while another transaction holds the target').toBe(false);
      release();
      await done;
      const r = await second;
      expect(r.version).toBe(2);
      expect((await readTargetWith(a, flow)).map((x) => x.v)).toEqual(['a', 'b']);
    } finally {
      await a.close();
    }
  });

  it('with noWait the second apply fails at once with a clear message, and changes nothing', async () => {
    const schema = freshSchema();
    const a = await PostgresDriver.connect(url!, { schema, dropSchemaOnClose: true, noWait: true });
    try {
      await applyRows(a, flow, [{ id: 1, v: 'a', seq: 1 }]);
      let release!: () => void;
      const { done } = await holdLock(schema, new Promise<void>((r) => (release = r)));
      const started = Date.now();
      const e = await applyRows(a, flow, [{ id: 1, v: 'b', seq: 2 }]).catch((x: unknown) => x);
      release();
      await done;
      expect(e).toBeInstanceOf(ScdError);
      expect((e as ScdError).code).toBe('DB_IN_USE');
      expect((e as ScdError).message).toContain('another scdkit process');
      expect(Date.now() - started).toBeLessThan(5000);
      expect((await readTargetWith(a, flow)).map((x) => x.v)).toEqual(['a']);
    } finally {
      await a.close();
    }
  });

  it('scd apply --no-wait exits 1 with one line while another apply holds the target', async () => {
    const schema = freshSchema();
    const { dir, cleanup } = tempDir();
    const owner = await PostgresDriver.connect(url!, { schema, dropSchemaOnClose: true });
    try {
      writeFileSync(path.join(dir, 'flow.yaml'), `target: dim_lock\nkeys: id\nsequenceBy: seq\nschema: ${schema}\n`);
      writeFileSync(path.join(dir, 'a.ndjson'), ndjson([{ id: 1, v: 'a', seq: 1 }]));
      const first = await scd(['apply', 'flow.yaml', '--db', url!, '--input', 'a.ndjson'], dir);
      expect(first.code, first.stderr).toBe(0);
      let release!: () => void;
      const { done } = await holdLock(schema, new Promise<void>((r) => (release = r)));
      const r = await scd(['apply', 'flow.yaml', '--db', url!, '--input', 'a.ndjson', '--no-wait'], dir);
      release();
      await done;
      expect(r.code).toBe(1);
      expect(r.stderr).toMatch(/^scd: .*another scdkit process/m);
      const again = await scd(['apply', 'flow.yaml', '--db', url!, '--input', 'a.ndjson'], dir);
      expect(again.code, again.stderr).toBe(0);
      expect(again.stdout).toContain('commit 2');
    } finally {
      await owner.close();
      cleanup();
    }
  });
});
