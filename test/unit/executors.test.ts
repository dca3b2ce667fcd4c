import { describe, expect, it } from 'vitest';
import { sparkDialect } from '../../src/dialects/spark/spark-dialect.js';
import { SENT_WHOLE_VALUES } from '../../src/execute/delta/merge-source.js';
import { LOOK_BACK } from '../../src/execute/delta/recovery.js';
import { executorFor, stagesWhileLocking, writesMayRunAtOnce } from '../../src/execute/executor.js';
import type { StateChange } from '../../src/execute/state-change.js';
import type { TargetChange } from '../../src/execute/target-change.js';
import { type Dialect, type Driver, duckdbDialect, postgresDialect } from '../../src/index.js';
import type { FlowRecord } from '../../src/store/catalog.js';
import { storeNames } from '../../src/store/names.js';

/**
 * A commit's executor is chosen by the dialect's capabilities: the transactional one writes the
 * target by row id in up to three statements, each only when it has rows; the Delta one in exactly
 * one MERGE by identity, after undoing an interrupted commit and labelling this one.
 */
const change = (d: Dialect, rowId?: string): TargetChange => ({
  target: d.quote('dim'),
  columns: ['id', 'v', 'start', 'end'],
  identity: ['id', 'start'],
  closing: ['end'],
  removed: d.quote('removed'),
  added: d.quote('added'),
  rowId,
  flags: { rowId: '__scd_rowid', close: '__scd_close', ofRow: '__scd_of_row' },
});

const state = (d: Dialect, over: Partial<StateChange> = {}): StateChange => ({
  state: d.quote('_scd_dim_keys'),
  keys: ['id'],
  columns: ['id', '__scd_l0', '__scd_live'],
  recomputed: d.quote('_scd_keys'),
  rows: 'SELECT 1, 2, true',
  empty: false,
  ...over,
});

/** A driver that records what is sent; each table's latest version carries `label` (Delta's history). */
function recording(d: Dialect, label: string | null = null) {
  const sent: string[] = [];
  const driver = {
    dialect: d,
    location: 'test',
    run: async (sql: string) => void sent.push(sql),
    query: async (sql: string) => {
      sent.push(sql);
      return [];
    },
    tableHistory: async (table: string, latest?: number) => {
      sent.push(`history ${table} ${latest}`);
      return [{ version: 7, label }];
    },
  } as unknown as Driver;
  return { sent, driver };
}

describe('the executor of a commit', () => {
  it('is chosen by capabilities, and says what the engine guarantees: transactions for DuckDB and PostgreSQL, versioned labelled commits for Spark', () => {
    const transactional = { transactions: true, versionedTables: false, labelledCommits: false };
    expect(executorFor(duckdbDialect).guarantees).toEqual(transactional);
    expect(executorFor(postgresDialect).guarantees).toEqual(transactional);
    expect(executorFor(sparkDialect).guarantees).toEqual({ transactions: false, versionedTables: true, labelledCommits: true });
    // What the plan derives from them: staging while the lock is taken, writes at once.
    expect([stagesWhileLocking(executorFor(duckdbDialect).guarantees), writesMayRunAtOnce(executorFor(duckdbDialect).guarantees)]).toEqual([false, false]);
    expect([stagesWhileLocking(executorFor(sparkDialect).guarantees), writesMayRunAtOnce(executorFor(sparkDialect).guarantees)]).toEqual([true, true]);
    // Labelled commits without their order mattering are what lets writes run at once, not the lack of a transaction alone.
    expect(writesMayRunAtOnce({ transactions: false, versionedTables: true, labelledCommits: false })).toBe(false);
  });

  it('an engine without transactions and without MERGE is refused by name, with what it lacks', () => {
    // A dialect like Spark's with one thing less (its row id is a getter that throws: not spread).
    const like = (over: Partial<Dialect>) => Object.assign(Object.create(sparkDialect), over) as Dialect;
    const lacking = like({ name: 'nosql', capabilities: { ...sparkDialect.capabilities, merge: false } });
    expect(() => executorFor(lacking)).toThrow('a commit without transactions (each write one MERGE) needs merge, which the nosql dialect lacks');
    const unlabelled = like({ name: 'plain', commitLabel: undefined });
    expect(() => executorFor(unlabelled)).toThrow('a commit without transactions (each write labelled) needs commitLabel, which the plain dialect lacks');
  });

  it('transactional: a delete, an update of the closes and an insert, each only when the counts give it rows', () => {
    const x = executorFor(duckdbDialect);
    const c = change(duckdbDialect, 'rowid');
    const verbs = (sizes: { added: number; closes: number; removed: number }) => x.targetWrites(duckdbDialect, c, sizes).map((s) => s.split(' ')[0]);
    expect(verbs({ added: 0, closes: 0, removed: 0 })).toEqual([]);
    // A new version of a live key: the old one closed in place, the new one inserted.
    expect(verbs({ added: 2, closes: 1, removed: 1 })).toEqual(['UPDATE', 'INSERT']);
    // A late event inside a version: the version replaced (deleted and inserted), no close.
    expect(verbs({ added: 2, closes: 0, removed: 1 })).toEqual(['DELETE', 'INSERT']);
    expect(verbs({ added: 0, closes: 0, removed: 3 })).toEqual(['DELETE']);
    // scd1 has nothing to close: no update statement at all.
    expect(x.targetWrites(duckdbDialect, { ...c, closing: [] }, { added: 1, closes: 1, removed: 1 })).toEqual([]);
  });

  it('transactional: by row id where the target has one (PostgreSQL fetches by ctid), by identity where a column hides it', () => {
    const x = executorFor(postgresDialect);
    const [del, upd] = x.targetWrites(postgresDialect, change(postgresDialect, 'ctid'), { added: 1, closes: 1, removed: 2 });
    expect(del).toMatch(/^DELETE FROM "dim" WHERE ctid = ANY\(ARRAY\(SELECT r\."__scd_rowid" FROM "removed" r WHERE NOT EXISTS/);
    expect(upd).toMatch(/"dim"\.ctid = a\."__scd_of_row" AND "dim"\.ctid = ANY\(ARRAY\(SELECT c\."__scd_of_row"/);
    const [byId] = executorFor(duckdbDialect).targetWrites(duckdbDialect, change(duckdbDialect), { added: 0, closes: 0, removed: 1 });
    expect(byId).toMatch(/^DELETE FROM "dim" WHERE EXISTS \(SELECT 1 FROM "removed" r WHERE r\."id" = "dim"\."id" AND r\."start" = "dim"\."start"/);
    expect(byId).not.toMatch(/rowid/);
  });

  it('Delta: the whole change in one MERGE by identity, none when nothing changes, no row id', () => {
    const x = executorFor(sparkDialect);
    const c = change(sparkDialect);
    expect(x.targetWrites(sparkDialect, c, { added: 0, closes: 0, removed: 0 })).toEqual([]);
    for (const sizes of [
      { added: 2, closes: 1, removed: 1 },
      { added: 0, closes: 0, removed: 3 },
      { added: 1, closes: 0, removed: 0 },
    ]) {
      const sql = x.targetWrites(sparkDialect, c, sizes);
      expect(sql).toHaveLength(1);
      expect(sql[0]).toMatch(/^MERGE INTO `dim` t USING \(/);
      expect(sql[0]).toMatch(/ON t\.`id` = s\.`__scd_m0` AND t\.`start` = s\.`__scd_m1`/);
      expect(sql[0]).toMatch(/WHEN MATCHED AND s\.`__scd_action` = 'close' THEN UPDATE SET `end` = s\.`end`/);
      expect(sql[0]).not.toMatch(/rowid|ctid|__scd_of_row/);
    }
  });

  it("Delta: a small MERGE source is sent whole to the join with its table (Spark's BROADCAST hint), a large one left to the engine", () => {
    const x = executorFor(sparkDialect);
    const whole = /^MERGE INTO `dim` t USING \(SELECT \/\*\+ BROADCAST \*\/ \* FROM \(\n {2}SELECT coalesce/;
    // Four columns a row: the values the source holds decide.
    expect(x.targetWrites(sparkDialect, change(sparkDialect), { added: 2, closes: 1, removed: 1 })[0]).toMatch(whole);
    expect(x.targetWrites(sparkDialect, change(sparkDialect), { added: SENT_WHOLE_VALUES / 8, closes: 0, removed: SENT_WHOLE_VALUES / 8 })[0]).toMatch(whole);
    const large = x.targetWrites(sparkDialect, change(sparkDialect), { added: SENT_WHOLE_VALUES / 8, closes: 0, removed: SENT_WHOLE_VALUES / 8 + 1 })[0]!;
    expect(large).toMatch(/^MERGE INTO `dim` t USING \(\n {2}SELECT coalesce/);
    expect(large).not.toMatch(/BROADCAST/);
    // The key state: by how many keys are recomputed, where counted (uncounted: the engine's choice).
    expect(x.stateWrites(sparkDialect, state(sparkDialect, { keyCount: 1000 }))[0]).toMatch(
      /^MERGE INTO `_scd_dim_keys` t USING \(SELECT \/\*\+ BROADCAST \*\/ \* FROM \(\n {2}SELECT k\.`id`/,
    );
    expect(x.stateWrites(sparkDialect, state(sparkDialect, { keyCount: SENT_WHOLE_VALUES }))[0]).not.toMatch(/BROADCAST/);
    expect(x.stateWrites(sparkDialect, state(sparkDialect))[0]).not.toMatch(/BROADCAST/);
    // An engine that cannot be told keeps its own join.
    expect(sparkDialect.sentWhole).toBeDefined();
    expect(duckdbDialect.sentWhole).toBeUndefined();
  });

  it('transactional: nothing is sent before the writes, and the tables are read by their own names', async () => {
    const { sent, driver } = recording(duckdbDialect);
    const x = executorFor(duckdbDialect);
    expect(await x.begin(driver, storeNames('dim'), 3, true)).toEqual({ undone: [] });
    await x.beforeCreate(driver, storeNames('dim'), 1);
    expect(await x.pinReads(driver, storeNames('dim'))).toEqual(storeNames('dim'));
    expect(sent).toEqual([]);
  });

  it('Delta: a commit looks for an interrupted one only when the target has a record, and labels its writes', async () => {
    const x = executorFor(sparkDialect);
    const first = recording(sparkDialect);
    expect(await x.begin(first.driver, storeNames('dim'), 1, false)).toEqual({ undone: [], latest: undefined });
    expect(first.sent).toEqual(['SET spark.databricks.delta.commitInfo.userMetadata = scdkit commit 1 of dim']);
    // The latest version of each of the target's tables, read at once: written by recorded commits only.
    const later = recording(sparkDialect, 'scdkit commit 3 of dim');
    // Nothing to undo: the versions read are the tables' latest, which the pinned reads take as they are.
    expect(await x.begin(later.driver, storeNames('dim'), 4, true)).toEqual({ undone: [], latest: { _scd_dim_events: 7, _scd_dim_quarantine: 7, _scd_dim_keys: 7, dim: 7 } });
    expect(later.sent).toEqual([
      'history _scd_dim_events 1',
      'history _scd_dim_quarantine 1',
      'history _scd_dim_keys 1',
      'history dim 1',
      'SET spark.databricks.delta.commitInfo.userMetadata = scdkit commit 4 of dim',
    ]);
  });

  it("Delta: the tables' latest versions read ahead (look, while the flow record is read) serve begin; none read for a first commit", async () => {
    const x = executorFor(sparkDialect);
    const ahead = recording(sparkDialect, 'scdkit commit 3 of dim');
    const looked = x.look(ahead.driver, storeNames('dim'));
    expect(await x.begin(ahead.driver, storeNames('dim'), 4, true, looked)).toEqual({
      undone: [],
      latest: { _scd_dim_events: 7, _scd_dim_quarantine: 7, _scd_dim_keys: 7, dim: 7 },
    });
    expect(ahead.sent.filter((s) => s.startsWith('history'))).toHaveLength(4);
    // A look that could not read (a first commit: no tables yet) is no answer, and a first commit needs none.
    const failing = { ...recording(sparkDialect).driver, tableHistory: async () => Promise.reject(new Error('TABLE_OR_VIEW_NOT_FOUND')) } as unknown as Driver;
    expect(await x.look(failing, storeNames('dim'))).toBeUndefined();
    expect(await x.begin(failing, storeNames('dim'), 1, false, x.look(failing, storeNames('dim')))).toEqual({ undone: [], latest: undefined });
    expect(await executorFor(duckdbDialect).look(failing, storeNames('dim'))).toBeUndefined();
  });

  it("Delta: a table whose latest version carries the label of a commit without a record is an interrupted commit's, and is undone", async () => {
    const x = executorFor(sparkDialect);
    // Another target's label, or none, is not this target's interrupted commit; each table whose
    // newest version is not scdkit's is read again, further back, for scdkit's latest write.
    for (const label of [null, 'scdkit commit 4 of other', "a user's write"]) {
      const { sent, driver } = recording(sparkDialect, label);
      await x.begin(driver, storeNames('dim'), 4, true);
      expect(sent.at(-1)).toMatch(/scdkit commit 4 of dim$/);
      expect(sent.filter((s) => s.startsWith('history')).sort()).toEqual(
        ['_scd_dim_events', '_scd_dim_quarantine', '_scd_dim_keys', 'dim'].flatMap((t) => [`history ${t} 1`, `history ${t} ${LOOK_BACK}`]).sort(),
      );
      expect(sent).toHaveLength(9);
    }
    // Commit 4's label, not recorded: the undo starts (this fake has no restoreTable, which says so).
    const { driver } = recording(sparkDialect, 'scdkit commit 4 of dim');
    await expect(x.begin(driver, storeNames('dim'), 4, true)).rejects.toThrow(/nothing is left to undo/);
  });

  it('Delta: a driver without pinned reads is refused by name', async () => {
    const { driver } = recording(sparkDialect);
    await expect(executorFor(sparkDialect).pinReads(driver, storeNames('dim'))).rejects.toThrow('a commit without transactions needs pinReads, which the spark driver lacks');
  });

  it("transactional: the key state loses the recomputed keys' rows (by row id where they carry it), then gets the new ones", () => {
    const pg = executorFor(postgresDialect);
    const [forget, insert] = pg.stateWrites(postgresDialect, state(postgresDialect, { byRow: { rowId: 'ctid', column: '__scd_srow' } }));
    expect(forget).toBe('DELETE FROM "_scd_dim_keys" WHERE ctid = ANY(ARRAY(SELECT k."__scd_srow" FROM "_scd_keys" k WHERE k."__scd_srow" IS NOT NULL))');
    expect(insert).toBe('INSERT INTO "_scd_dim_keys" ("id", "__scd_l0", "__scd_live")\nSELECT 1, 2, true');
    const duck = executorFor(duckdbDialect);
    expect(duck.stateWrites(duckdbDialect, state(duckdbDialect))[0]).toBe('DELETE FROM "_scd_dim_keys" WHERE "id" IN (SELECT k."id" FROM "_scd_keys" k)');
    const twoKeys = duck.stateWrites(duckdbDialect, state(duckdbDialect, { keys: ['a', 'b'], columns: ['a', 'b', '__scd_l0', '__scd_live'] }));
    expect(twoKeys[0]).toBe('DELETE FROM "_scd_dim_keys" WHERE EXISTS (SELECT 1 FROM "_scd_keys" k WHERE k."a" = "_scd_dim_keys"."a" AND k."b" = "_scd_dim_keys"."b")');
    // A state just made (a rebuild) has no row to lose.
    expect(duck.stateWrites(duckdbDialect, state(duckdbDialect, { empty: true })).map((x) => x.split(' ')[0])).toEqual(['INSERT']);
  });

  it('Delta: the key state in one MERGE of the recomputed keys (a key without a new row loses its row)', () => {
    const x = executorFor(sparkDialect);
    const [merge, ...more] = x.stateWrites(sparkDialect, state(sparkDialect));
    expect(more).toEqual([]);
    expect(merge).toMatch(/^MERGE INTO `_scd_dim_keys` t USING \(/);
    expect(merge).toMatch(/FROM \(SELECT DISTINCT `id` FROM `_scd_keys`\) k/);
    expect(merge).toMatch(/WHEN MATCHED AND NOT s\.`__scd_has` THEN DELETE/);
    expect(x.stateWrites(sparkDialect, state(sparkDialect, { empty: true }))[0]).toMatch(/^INSERT INTO `_scd_dim_keys`/);
  });

  /** A driver whose statements each take a turn of the event loop per character of their last word, logging start and end. */
  function timed(d: Dialect, fails?: string) {
    const log: string[] = [];
    const driver = {
      dialect: d,
      run: async (sql: string) => {
        log.push(`start ${sql}`);
        for (let i = 0; i < sql.length; i++) await Promise.resolve();
        log.push(`end ${sql}`);
        if (sql === fails) throw new Error(`${sql} failed`);
      },
    } as unknown as Driver;
    return { log, driver };
  }

  it('transactional: independent groups of writes one statement after another, in the order given', async () => {
    const { log, driver } = timed(duckdbDialect);
    await executorFor(duckdbDialect).runWrites(driver, [['state-a', 'state-b'], ['target']]);
    expect(log).toEqual(['start state-a', 'end state-a', 'start state-b', 'end state-b', 'start target', 'end target']);
  });

  it('Delta: independent groups of writes at once (each in order), all ended before a failure is thrown', async () => {
    const x = executorFor(sparkDialect);
    const { log, driver } = timed(sparkDialect);
    await x.runWrites(driver, [['state-merge-long', 'state-2'], ['target']]);
    // The target's write starts before the key state's first has ended; each group stays in order.
    expect(log.indexOf('start target')).toBeLessThan(log.indexOf('end state-merge-long'));
    expect(log.indexOf('end state-merge-long')).toBeLessThan(log.indexOf('start state-2'));
    const failing = timed(sparkDialect, 'target');
    await expect(x.runWrites(failing.driver, [['state-merge-long'], ['target']])).rejects.toThrow('target failed');
    expect(failing.log).toContain('end state-merge-long');
  });
});

describe("the log's rewrites and the flow record: one change each, whole in a transaction or in one write", () => {
  /** A driver that records each statement with its parameters; pinned reads name each table `<name>@pinned`. */
  function recorder(d: Dialect) {
    const sent: Array<{ sql: string; params?: unknown[] }> = [];
    const driver = {
      dialect: d,
      run: async (sql: string, params?: unknown[]) => void sent.push({ sql, ...(params && { params }) }),
      pinReads: async (tables: string[]) => Object.fromEntries(tables.map((t) => [t, `${t}@pinned`])),
    } as unknown as Driver;
    return { sent, driver };
  }
  const record = { model: [], settings: { keys: ['id'] } } as unknown as FlowRecord;
  const fold = (d: Dialect) => ({
    log: d.quote('_scd_dim_events'),
    keys: [d.quote('id')],
    keysTable: d.quote('_scd_keys'),
    columns: [d.quote('id'), d.quote('v')],
    folds: ['SELECT 1, 2', 'SELECT 3, 4'],
    old: { column: d.quote('ts'), below: 'CAST($1 AS BIGINT)' },
    params: [10],
  });

  it('transactional: the log replaced by a new table, the state made anew, the fold as a delete and inserts, the record deleted and inserted', async () => {
    const x = executorFor(duckdbDialect);
    const { sent, driver } = recorder(duckdbDialect);
    const names = storeNames('dim');
    expect(await x.replaceLog(driver, names, { select: 'SELECT 1', columns: ['"id"'] })).toBe(names);
    await x.emptyState(driver, names, 'CREATE TABLE state');
    await x.foldLog(driver, fold(duckdbDialect));
    await x.writeFlowRecord(driver, names, record, '2026-01-01T00:00:00Z');
    const sql = sent.map((s) => s.sql.replace(/\s+/g, ' '));
    expect(sql.slice(0, 4)).toEqual([
      'DROP TABLE IF EXISTS "_scd_dim_events_rebuild"',
      'CREATE TABLE "_scd_dim_events_rebuild" AS SELECT 1',
      'DROP TABLE "_scd_dim_events"',
      'ALTER TABLE "_scd_dim_events_rebuild" RENAME TO "_scd_dim_events"',
    ]);
    expect(sql.slice(4, 6)).toEqual(['DROP TABLE IF EXISTS "_scd_dim_keys"', 'CREATE TABLE state']);
    expect(sql[6]).toMatch(
      /^DELETE FROM "_scd_dim_events" WHERE .* AND "ts" < CAST\(\$1 AS BIGINT\) AND EXISTS \(SELECT 1 FROM "_scd_keys" k WHERE k\."id" = "_scd_dim_events"\."id"\)$/,
    );
    expect(sent[6]!.params).toEqual([10]);
    expect(sql.slice(7, 9)).toEqual(['INSERT INTO "_scd_dim_events" ("id", "v") SELECT 1, 2', 'INSERT INTO "_scd_dim_events" ("id", "v") SELECT 3, 4']);
    expect(sql.slice(9).map((s) => s.split(' ')[0])).toEqual(['DELETE', 'INSERT']);
    expect(sent[10]!.params).toEqual(['dim', JSON.stringify(record.model), JSON.stringify(record.settings), '2026-01-01T00:00:00Z']);
  });

  it('Delta: each change one write (an overwrite, a delete, a MERGE, a MERGE) of the pinned table, and the log read again after its overwrite', async () => {
    const x = executorFor(sparkDialect);
    const { sent, driver } = recorder(sparkDialect);
    const names = await x.pinReads(driver, storeNames('dim'));
    const after = await x.replaceLog(driver, names, { select: 'SELECT 1', columns: ['`id`'] });
    expect(after.writes?.events).toBe('_scd_dim_events@pinned');
    await x.emptyState(driver, names, 'CREATE TABLE state');
    await x.foldLog(driver, { ...fold(sparkDialect), log: '`_scd_dim_events@pinned`' });
    await x.writeFlowRecord(driver, names, record, '2026-01-01T00:00:00Z');
    const writes = sent.map((s) => s.sql).filter((s) => !/^CREATE (OR REPLACE )?(TEMP|TEMPORARY)|CACHE/i.test(s));
    expect(writes.map((s) => s.split(/\s+/).slice(0, 2).join(' '))).toEqual(['INSERT OVERWRITE', 'DELETE FROM', 'MERGE INTO', 'MERGE INTO']);
    expect(writes[0]).toContain('SELECT `id` FROM');
    expect(writes[1]).not.toContain('_scd_dim_events');
    expect(writes[2]).toMatch(/WHEN MATCHED THEN DELETE\s+WHEN NOT MATCHED AND s\.`__scd_fold` THEN INSERT \(`id`, `v`\)/);
    expect(writes[2]).toContain('l.`ts` < CAST($1 AS BIGINT)');
    expect(sent.find((s) => s.sql === writes[2])!.params).toEqual([10]);
    expect(writes[3]).toMatch(/^MERGE INTO `_scd_flows` f/);
    // No DROP anywhere: a Delta table goes back by RESTORE, not by being made anew.
    expect(sent.some((s) => /^DROP TABLE/.test(s.sql))).toBe(false);
  });
});
