/**
 * A Spark target's lease without a server (unit: always run): a fake lease table answers the
 * lease's statements, and a fake clock drives its renewals. What a server adds (Delta's MERGE,
 * a process killed with -9) is tested in spark-lease.suite.ts.
 */
import { spawnSync } from 'node:child_process';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { describe, expect, it } from 'vitest';
import type { Driver } from '../../src/dialects/driver.js';
import { commandLine, describeHolder, holderGone, type LeaseHolder, processAlive, thisProcess } from '../../src/dialects/spark/lease-holder.js';
import { LEASE_SECONDS, type LeaseClock, RENEW_MS, SparkLease } from '../../src/dialects/spark/spark-lock.js';
import { lockTargetWaited } from '../../src/plan/lock-wait.js';
import { ROOT } from '../e2e/fixtures/cli.js';

/** A clock that moves only when told; its timers run as it passes them. */
class FakeClock implements LeaseClock {
  private at = 1_000_000;
  private timers: Array<{ due: number; fn: () => void; id: number }> = [];
  private ids = 0;
  now = () => this.at;
  setTimeout = (fn: () => void, ms: number) => {
    const id = ++this.ids;
    this.timers.push({ due: this.at + ms, fn, id });
    return id;
  };
  clearTimeout = (id: unknown) => {
    this.timers = this.timers.filter((t) => t.id !== id);
  };
  /** Move on by `ms`, running each timer due on the way (and what it awaits) in time order. */
  async advance(ms: number): Promise<void> {
    const end = this.at + ms;
    for (;;) {
      await settle();
      const next = this.timers.filter((t) => t.due <= end).sort((a, b) => a.due - b.due)[0];
      if (!next) break;
      this.timers = this.timers.filter((t) => t !== next);
      this.at = next.due;
      next.fn();
    }
    this.at = end;
    await settle();
  }
}
const settle = async () => {
  for (let i = 0; i < 20; i++) await Promise.resolve();
};

/** A lease table of one target's row, answering the statements SparkLease sends. */
function fakeTable(row?: Record<string, unknown>) {
  const sent: string[] = [];
  const state = { row, renew: 'ok' as 'ok' | 'refused' | 'taken' };
  const db = {
    // Spark runs a plain SELECT only as a query: as a command it answers no rows.
    query: async (sql: string) => {
      sent.push(sql);
      return sql.startsWith('SELECT') && state.row ? [state.row] : [];
    },
    execute: async (sql: string): Promise<Array<Record<string, unknown>>> => {
      sent.push(sql);
      if (sql.startsWith('MERGE')) {
        const mine = /'([0-9a-f-]{36})' AS holder/.exec(sql)![1]!;
        const takesOver = state.row && sql.includes(`OR l.holder = '${String(state.row.holder)}'`);
        if (state.row && state.row.holder !== mine && !takesOver) return [{ num_affected_rows: 0 }];
        state.row = { holder: mine };
        return [{ num_affected_rows: 1 }];
      }
      if (sql.startsWith('SELECT')) return [];
      if (sql.startsWith('UPDATE')) {
        if (state.renew === 'refused') throw new Error('query failed: [DELTA_CONCURRENT_APPEND] ConcurrentAppendException');
        return [{ num_affected_rows: state.renew === 'taken' ? 0 : 1 }];
      }
      if (sql.startsWith('DELETE')) state.row = undefined;
      return [];
    },
  };
  return { db, sent, state };
}

const here: LeaseHolder = { host: 'build-7', pid: 100, pidSpace: 'pid:[4026531836]', command: 'scd apply flow.yaml' };

/** A pid no process has now: a child that ran and ended. */
function deadPid(): number {
  const r = spawnSync(process.execPath, ['-e', '0']);
  expect(processAlive(r.pid!)).toBe(false);
  return r.pid!;
}

describe("a Spark target's lease: renewal, takeover, what a waiting commit is told", () => {
  it(`is renewed every ${RENEW_MS / 1000} s while held, and renewal stops when it ends`, async () => {
    const clock = new FakeClock();
    const { db, sent } = fakeTable();
    const lease = new SparkLease(db, 'sc://spark/db', here, clock);
    await lease.acquire('dim', true);
    const updates = () => sent.filter((s) => s.startsWith('UPDATE')).length;
    await clock.advance(RENEW_MS - 1);
    expect(updates()).toBe(0);
    await clock.advance(1);
    expect(updates()).toBe(1);
    expect(sent.at(-1)).toMatch(
      new RegExp(`^UPDATE _scd_locks SET expires_at = current_timestamp\\(\\) \\+ INTERVAL ${LEASE_SECONDS} SECONDS WHERE target = 'dim' AND holder = '`),
    );
    // A commit of ten minutes keeps its lease: renewed all along, never refused a write.
    for (let i = 0; i < 40; i++) {
      await clock.advance(RENEW_MS);
      lease.check();
    }
    expect(updates()).toBe(41);
    await lease.end(false);
    await clock.advance(10 * RENEW_MS);
    expect(updates()).toBe(41);
    expect(sent.at(-1)).toMatch(/^DELETE FROM _scd_locks/);
  });

  it('a renewal Delta refused (a concurrent write) is sent again a second later', async () => {
    const clock = new FakeClock();
    const { db, sent, state } = fakeTable();
    const lease = new SparkLease(db, 'sc://spark/db', here, clock);
    await lease.acquire('dim', true);
    state.renew = 'refused';
    await clock.advance(RENEW_MS);
    state.renew = 'ok';
    await clock.advance(1000);
    expect(sent.filter((s) => s.startsWith('UPDATE')).length).toBe(2);
    await clock.advance(RENEW_MS * 3);
    lease.check();
    await lease.release();
  });

  it(`a holder whose renewals do not get through stops writing once ${LEASE_SECONDS} s have passed since the last one was sent`, async () => {
    const clock = new FakeClock();
    const { db, state } = fakeTable();
    const lease = new SparkLease(db, 'sc://spark/db', here, clock);
    await lease.acquire('dim', true);
    state.renew = 'refused';
    await clock.advance(LEASE_SECONDS * 1000 - 1);
    expect(() => lease.check()).not.toThrow();
    await clock.advance(1);
    expect(() => lease.check()).toThrow(
      /lost its lease on target "dim" in sc:\/\/spark\/db: its renewals did not reach the server within 60 s, so it stopped before its next write/,
    );
    await lease.release();
    // Given back: no lease held, nothing to check.
    expect(() => lease.check()).not.toThrow();
  });

  it('a holder whose renewal finds its lease taken over stops writing at once', async () => {
    const clock = new FakeClock();
    const { db, state } = fakeTable();
    const lease = new SparkLease(db, 'sc://spark/db', here, clock);
    await lease.acquire('dim', true);
    state.renew = 'taken';
    await clock.advance(RENEW_MS);
    expect(() => lease.check()).toThrow(/lost its lease/);
  });

  it('the lease row names its holder: host, pid, pid namespace, command', async () => {
    const { db, sent } = fakeTable();
    const lease = new SparkLease(db, 'sc://spark/db', here, new FakeClock());
    await lease.acquire('dim', true);
    expect(sent[0]).toContain(`'build-7' AS host, CAST(100 AS INT) AS pid, 'pid:[4026531836]' AS pid_space, 'scd apply flow.yaml' AS command`);
    expect(sent[0]).toContain(`current_timestamp() + INTERVAL ${LEASE_SECONDS} SECONDS AS expires_at`);
    await lease.release();
  });

  it('a lease of a process gone from this machine is taken over at once (also with noWait), without waiting', async () => {
    const me = thisProcess();
    const { db, sent } = fakeTable({
      holder: 'dead-holder',
      host: me.host,
      pid: deadPid(),
      pid_space: me.pidSpace,
      command: 'scd apply flow.yaml',
      expires: '2026-12-07 10:00:00',
    });
    const lease = new SparkLease(db, 'sc://spark/db', me, new FakeClock());
    const said: string[] = [];
    await lease.acquire('dim', true, (m) => said.push(m));
    expect(said).toEqual([]);
    expect(sent.map((s) => s.split(/\s/)[0])).toEqual(['MERGE', 'SELECT', 'MERGE']);
    expect(sent[2]).toContain(`OR l.holder = 'dead-holder')`);
    await lease.release();
  });

  it('a lease of a live process, or of another host, is not taken over: noWait refuses, a waiting commit says whose lease and until when', async () => {
    const me = thisProcess();
    for (const row of [
      { holder: 'alive', host: me.host, pid: process.pid, pid_space: me.pidSpace, command: 'scd apply a.yaml', expires: '2026-12-07 10:00:00.5' },
      { holder: 'far', host: 'other-host', pid: deadPid(), pid_space: me.pidSpace, command: 'scd apply a.yaml', expires: '2026-12-07 10:00:00.5' },
    ]) {
      const { db } = fakeTable(row);
      await expect(new SparkLease(db, 'sc://spark/db', me, new FakeClock()).acquire('dim', true)).rejects.toThrow(
        /target "dim" in sc:\/\/spark\/db is being changed by another scdkit commit/,
      );
    }
    const clock = new FakeClock();
    const { db, state } = fakeTable({ holder: 'far', host: 'other-host', pid: 77, pid_space: 'x', command: 'scd apply a.yaml --db …', expires: '2026-12-07 10:00:00.5' });
    const said: string[] = [];
    const taking = new SparkLease(db, 'sc://spark/db', me, clock).acquire('dim', false, (m) => said.push(m));
    await clock.advance(3000);
    // Told once for one holder, however long it waits.
    expect(said).toEqual([
      'waiting for target "dim" in sc://spark/db: another scdkit commit is changing it (held by pid 77 on host other-host, command: scd apply a.yaml --db …; its lease holds until 2026-12-07 10:00:00 UTC unless renewed; a holder renews it every 15 s while it works)',
    ]);
    state.row = { ...state.row, holder: 'next', pid: 78 };
    await clock.advance(1000);
    expect(said[1]).toMatch(/held by pid 78 on host other-host/);
    state.row = undefined;
    await clock.advance(1000);
    await taking;
  });

  it('a process that has nothing to do but wait for the lease stays alive until it has it (the built lease, system clock)', () => {
    const lock = pathToFileURL(path.join(ROOT, 'dist', 'dialects', 'spark', 'spark-lock.js')).href;
    const program = `
      const { SparkLease } = await import(${JSON.stringify(lock)});
      let merges = 0;
      const row = { holder: 'far', host: 'other-host', pid: 7, pid_space: 'x', command: 'scd apply a.yaml', expires: '2026-12-07 10:00:00' };
      const db = { execute: async (sql) => (sql.startsWith('MERGE') ? [{ num_affected_rows: ++merges < 3 ? 0 : 1 }] : []), query: async () => [row] };
      const lease = new SparkLease(db, 'sc://spark/db');
      await lease.acquire('dim', false, (m) => console.log('told'));
      console.log('held after', merges, 'merges');
      await lease.release();`;
    const r = spawnSync(process.execPath, ['--input-type=module', '-e', program], { encoding: 'utf8', timeout: 30_000 });
    expect(r.stderr).toBe('');
    expect(r.stdout).toBe('told\nheld after 3 merges\n');
  });

  it('a holder is taken for gone only on this host, in this pid namespace, with no process of its pid', () => {
    const alive = (pid: number) => pid === 1;
    expect(holderGone({ host: 'build-7', pid: 5, pidSpace: here.pidSpace }, here, alive)).toBe(true);
    expect(holderGone({ host: 'build-7', pid: 1, pidSpace: here.pidSpace }, here, alive)).toBe(false);
    expect(holderGone({ host: 'build-8', pid: 5, pidSpace: here.pidSpace }, here, alive)).toBe(false);
    // Another container with the same host name: its pids are not this one's.
    expect(holderGone({ host: 'build-7', pid: 5, pidSpace: 'pid:[1]' }, here, alive)).toBe(false);
    // A lease row of an older scdkit names no holder.
    expect(holderGone({}, here, alive)).toBe(false);
    expect(holderGone({ host: 'build-7', pidSpace: here.pidSpace }, here, alive)).toBe(false);
    expect(describeHolder({})).toBe('');
  });

  it('the command a lease row keeps has no credential: a URL or key=value argument is left out', () => {
    expect(commandLine(['/usr/bin/node', '/opt/scdkit/bin/scd', 'apply', 'flow.yaml', '--db', 'sc://h:443/;token=S3cr3t', '--each'])).toBe('scd apply flow.yaml --db … --each');
    expect(commandLine(['node', 'scd', 'apply', 'f.yaml', '--db=postgres://u:pw@h/db', 'TOKEN', 'my-password'])).toBe('scd apply f.yaml … … …');
    expect(commandLine(['node', 'scd', 'x'.repeat(300)]).length).toBe(200);
  });
});

describe("a commit's wait for its target's lock (any engine)", () => {
  /** A driver whose lock is held by another commit for `heldMs` of the fake clock. */
  const waitingDriver = (clock: FakeClock, heldMs: number) =>
    ({
      lockTarget: async (target: string, waiting?: (m: string) => void) => {
        if (heldMs === 0) return;
        waiting?.(`waiting for target "${target}"`);
        await clock.advance(heldMs);
      },
    }) as unknown as Driver;

  it('returns how long the commit waited for another commit, and tells progress that it waits', async () => {
    const clock = new FakeClock();
    const told: string[] = [];
    expect(await lockTargetWaited(waitingDriver(clock, 42_000), 'dim', (m) => told.push(m), undefined, clock.now)).toBe(42_000);
    expect(told).toEqual(['waiting for target "dim"']);
    expect(await lockTargetWaited(waitingDriver(clock, 0), 'dim', (m) => told.push(m), undefined, clock.now)).toBe(0);
    expect(told.length).toBe(1);
  });
});
