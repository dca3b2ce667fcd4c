import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { againOnPlanValidation, PLAN_ATTEMPTS, planRefusal, rulesToLeaveOut } from '../../src/dialects/spark/plan-refusals.js';
import { SparkDriver, viewMadeBy } from '../../src/dialects/spark/spark-driver.js';
import { LOCKS_TABLE, SparkLease } from '../../src/dialects/spark/spark-lock.js';
import { bindParams, sparkLiteral } from '../../src/dialects/spark/spark-params.js';
import { applyRows, defineFlow, readTargetWith } from '../../src/index.js';
import { freshSchema } from '../engines.js';

describe('the views a Spark commit makes, for dropping them newest first (unit: always run)', () => {
  it('names the temporary view a statement makes, and only those', () => {
    expect(viewMadeBy('CACHE TABLE `_scd_keys` AS SELECT 1')).toBe('_scd_keys');
    expect(viewMadeBy('CACHE LAZY TABLE y AS SELECT 1')).toBe('y');
    expect(viewMadeBy('CREATE TEMP VIEW `a``b` AS SELECT 1')).toBe('a`b');
    expect(viewMadeBy('  create or replace temporary view x_1 AS SELECT 1')).toBe('x_1');
    expect(viewMadeBy('ALTER VIEW `m` RENAME TO `_scd_rejects`')).toBe('_scd_rejects');
    expect(viewMadeBy('DROP VIEW `x`')).toBeUndefined();
    expect(viewMadeBy('CREATE TABLE `t` (a INT) USING delta')).toBeUndefined();
    expect(viewMadeBy('MERGE INTO t USING (SELECT 1) s ON true WHEN MATCHED THEN DELETE')).toBeUndefined();
  });
});

describe("Spark's intermittent plan validation failure (unit: always run)", () => {
  const refused = (rule = 'org.apache.spark.sql.catalyst.optimizer.PushDownPredicates') =>
    new Error(
      `query failed: [PLAN_VALIDATION_FAILED_RULE_IN_BATCH] Rule ${rule} in batch Operator Optimization before Inferring Filters generated an invalid plan: The plan was previously resolved and now became unresolved. SQLSTATE: XXKD0`,
    );
  it('sends a statement that failed in compilation again, each time without the rules that made the invalid plans', async () => {
    const seen: string[][] = [];
    const rules = ['a.B', 'c.D'];
    const ran = await againOnPlanValidation(async (excluded) => {
      seen.push([...excluded]);
      return seen.length < 3 ? Promise.reject(refused(rules[seen.length - 1])) : 'ran';
    });
    expect(ran).toBe('ran');
    expect(seen).toEqual([[], ['a.B'], ['a.B', 'c.D']]);
  });
  it('a refusal by one of the predicate pushdown rules leaves out all three (seen: PushDownPredicates, then PushPredicateThroughNonJoin)', async () => {
    const seen: string[][] = [];
    await againOnPlanValidation(async (excluded) => {
      seen.push([...excluded]);
      return seen.length < 2 ? Promise.reject(refused()) : 'ran';
    });
    const family = ['PushDownPredicates', 'PushPredicateThroughNonJoin', 'PushPredicateThroughJoin'].map((r) => `org.apache.spark.sql.catalyst.optimizer.${r}`);
    expect(seen).toEqual([[], family]);
    expect(rulesToLeaveOut(family[1]!)).toEqual(family);
    expect(rulesToLeaveOut('x.Other')).toEqual(['x.Other']);
  });
  it(`gives up after ${PLAN_ATTEMPTS} attempts, with Spark's error`, async () => {
    let calls = 0;
    await expect(
      againOnPlanValidation(async () => {
        calls++;
        return Promise.reject(refused());
      }),
    ).rejects.toThrow(/PLAN_VALIDATION/);
    expect(calls).toBe(PLAN_ATTEMPTS);
  });
  it('never sends again a statement its caller may not repeat (a streamed read that delivered rows)', async () => {
    let calls = 0;
    await expect(
      againOnPlanValidation(
        async () => {
          calls++;
          return Promise.reject(refused());
        },
        () => false,
      ),
    ).rejects.toThrow(/PLAN_VALIDATION/);
    expect(calls).toBe(1);
  });
  it('never sends again a statement that failed for another reason', async () => {
    let calls = 0;
    await expect(
      againOnPlanValidation(async () => {
        calls++;
        return Promise.reject(new Error('[TABLE_OR_VIEW_NOT_FOUND] x'));
      }),
    ).rejects.toThrow(/NOT_FOUND/);
    expect(calls).toBe(1);
  });
  it('reads the rule from the refusal, also from the cause of a wrapped error', () => {
    expect(planRefusal(refused())).toEqual({ rule: 'org.apache.spark.sql.catalyst.optimizer.PushDownPredicates' });
    expect(planRefusal(new Error('statement failed', { cause: refused('x.Y') }))).toEqual({ rule: 'x.Y' });
    expect(planRefusal(new Error('[PLAN_VALIDATION_FAILED_RULE_IN_BATCH] something else'))).toEqual({});
    expect(planRefusal(new Error('[PARSE_SYNTAX_ERROR] near Rule x in batch'))).toBeUndefined();
  });
  it('sends again a statement met by an unresolved object in compilation (seen after a refusal), with the rules already left out', async () => {
    const unresolved = new Error('query failed', { cause: new Error('[INTERNAL_ERROR] Invalid call to exprId on unresolved object SQLSTATE: XX000') });
    expect(planRefusal(unresolved)).toEqual({});
    expect(planRefusal(new Error('[INTERNAL_ERROR] something else SQLSTATE: XX000'))).toBeUndefined();
    const seen: string[][] = [];
    const ran = await againOnPlanValidation(async (excluded) => {
      seen.push([...excluded]);
      return seen.length === 1 ? Promise.reject(refused()) : seen.length === 2 ? Promise.reject(unresolved) : 'ran';
    });
    expect(ran).toBe('ran');
    const family = rulesToLeaveOut('org.apache.spark.sql.catalyst.optimizer.PushDownPredicates');
    expect(seen).toEqual([[], family, family]);
  });
});

describe("a Spark target's lease (unit: always run)", () => {
  /** A fake server's statements: a query goes where a command does. */
  const withQuery = (db: { execute: (sql: string) => Promise<Array<Record<string, unknown>>> }) => ({ ...db, query: (sql: string) => db.execute(sql) });
  it('a commit that finds the lease held says so once, with whose lease it is and until when, and asks again until it is free', async () => {
    const sent: string[] = [];
    let merges = 0;
    const lease = new SparkLease(
      withQuery({
        execute: async (sql) => {
          sent.push(sql.split(/\s/)[0]!);
          if (sql.startsWith('MERGE')) return [{ num_affected_rows: ++merges < 3 ? 0 : 1 }];
          if (sql.startsWith('SELECT'))
            return [{ holder: 'h1', host: 'elsewhere', pid: 4242, pid_space: 'pid:[1]', command: 'scd apply flow.yaml', expires: '2026-12-03 19:30:00.123456' }];
          return [];
        },
      }),
      'sc://spark/db',
    );
    const said: string[] = [];
    await lease.acquire('dim', false, (m) => said.push(m));
    await lease.release();
    expect(said).toEqual([
      'waiting for target "dim" in sc://spark/db: another scdkit commit is changing it (held by pid 4242 on host elsewhere, command: scd apply flow.yaml; its lease holds until 2026-12-03 19:30:00 UTC unless renewed; a holder renews it every 15 s while it works)',
    ]);
    expect(sent).toEqual(['MERGE', 'SELECT', 'MERGE', 'SELECT', 'MERGE', 'DELETE']);
  });

  /**
   * A lease over a fake server that records every statement and grants every MERGE, once its lease
   * table is there and has the ends column: a MERGE before fails as Spark's does (first line).
   */
  const recordingLease = (table: 'current' | 'missing' | 'without-ends' = 'current') => {
    const sent: string[] = [];
    let state = table;
    const lease = new SparkLease(
      withQuery({
        execute: async (sql) => {
          sent.push(sql);
          if (sql.startsWith('CREATE TABLE IF NOT EXISTS _scd_locks') && state === 'missing') state = 'current';
          if (sql.startsWith('ALTER TABLE _scd_locks ADD COLUMNS (ends_at_commit INT, host STRING, pid INT, pid_space STRING, command STRING)') && state === 'without-ends')
            state = 'current';
          if (sql.startsWith('DESCRIBE')) return ['target', 'holder', 'expires_at'].map((col_name) => ({ col_name, data_type: 'string' }));
          if (sql.startsWith('MERGE') && state === 'missing') {
            throw new Error(
              'query failed: [TABLE_OR_VIEW_NOT_FOUND] The table or view `_scd_locks` cannot be found. Verify the spelling and correctness of the schema and catalog.',
            );
          }
          if (sql.startsWith('MERGE') && state === 'without-ends') {
            throw new Error(
              'query failed: [DELTA_MERGE_UNRESOLVED_EXPRESSION] Cannot resolve ends_at_commit in UPDATE clause given columns l.target, l.holder, l.expires_at.; line 1 pos 0',
            );
          }
          if (sql.startsWith('MERGE')) return [{ num_affected_rows: 1 }];
          return [];
        },
      }),
      'sc://spark/db',
    );
    return { lease, sent };
  };
  const records = { lastRecorded: `SELECT max(version) FROM _scd_commits WHERE target = 'dim'`, endsWithRecord: true };

  it("a lease taken to end with its holder's record is taken over once the records reach it, and needs no DELETE after work that succeeded", async () => {
    const { lease, sent } = recordingLease();
    await lease.acquire('dim', true, undefined, records);
    const merge = sent.find((s) => s.startsWith('MERGE'))!;
    // Ends at the commit after the last recorded one; an earlier holder's lease ended once the records reached its own.
    expect(merge).toContain(`(SELECT max(version) FROM _scd_commits WHERE target = 'dim') + 1 AS ends_at_commit`);
    expect(merge).toContain('OR l.ends_at_commit <= s.recorded)');
    const before = sent.length;
    await lease.end(true);
    expect(sent.length).toBe(before);
  });

  it('a lease is given back by a DELETE after work that failed, or where a write may follow the record', async () => {
    const failed = recordingLease();
    await failed.lease.acquire('dim', true, undefined, records);
    await failed.lease.end(false);
    expect(failed.sent.at(-1)).toMatch(/^DELETE FROM _scd_locks WHERE target = 'dim' AND holder = '/);
    const watermark = recordingLease();
    await watermark.lease.acquire('dim', true, undefined, { ...records, endsWithRecord: false });
    expect(watermark.sent.find((s) => s.startsWith('MERGE'))).toContain('CAST(NULL AS INT) AS ends_at_commit');
    await watermark.lease.end(true);
    expect(watermark.sent.at(-1)).toMatch(/^DELETE FROM _scd_locks/);
  });

  it('a lease table made by an older scdkit gets the columns it lacks when its MERGE fails for one, once', async () => {
    const { lease, sent } = recordingLease('without-ends');
    await lease.acquire('dim', true);
    await lease.end(false);
    await lease.acquire('dim', true);
    await lease.release();
    expect(sent.map((s) => s.split(/\s/)[0])).toEqual(['MERGE', 'DESCRIBE', 'ALTER', 'MERGE', 'DELETE', 'MERGE', 'DELETE']);
    expect(sent.filter((s) => s.startsWith('ALTER'))).toEqual(['ALTER TABLE _scd_locks ADD COLUMNS (ends_at_commit INT, host STRING, pid INT, pid_space STRING, command STRING)']);
  });

  it('a database with the lease table: the lease is one MERGE, no statement to make or describe the table', async () => {
    const { lease, sent } = recordingLease();
    await lease.acquire('dim', true, undefined, records);
    expect(sent.map((s) => s.split(/\s/)[0])).toEqual(['MERGE']);
  });

  it('a database without the lease table: the first MERGE says so, the table is made, the MERGE runs again', async () => {
    const { lease, sent } = recordingLease('missing');
    await lease.acquire('dim', true, undefined, records);
    expect(sent.map((s) => s.split(/\s/)[0])).toEqual(['MERGE', 'CREATE', 'MERGE']);
    expect(sent[1]).toBe(
      'CREATE TABLE IF NOT EXISTS _scd_locks (target STRING NOT NULL, holder STRING NOT NULL, expires_at TIMESTAMP NOT NULL, ends_at_commit INT, host STRING, pid INT, pid_space STRING, command STRING) USING delta',
    );
  });

  it("another missing table (the commit log the MERGE reads), or the table still missing after it was made, is the MERGE's own error", async () => {
    const commitsMissing = new SparkLease(
      withQuery({
        execute: async (sql) => {
          if (sql.startsWith('MERGE'))
            throw new Error(
              'query failed: [TABLE_OR_VIEW_NOT_FOUND] The table or view `_scd_commits` cannot be found. Verify the spelling and correctness of the schema and catalog.',
            );
          return [];
        },
      }),
      'sc://spark/db',
    );
    await expect(commitsMissing.acquire('dim', true, undefined, records)).rejects.toThrow(/`_scd_commits` cannot be found/);
    const sent: string[] = [];
    const neverMade = new SparkLease(
      withQuery({
        execute: async (sql) => {
          sent.push(sql.split(/\s/)[0]!);
          if (sql.startsWith('MERGE')) throw new Error('query failed: [TABLE_OR_VIEW_NOT_FOUND] The table or view `_scd_locks` cannot be found.');
          return [];
        },
      }),
      'sc://spark/db',
    );
    await expect(neverMade.acquire('dim', true)).rejects.toThrow(/`_scd_locks` cannot be found/);
    expect(sent).toEqual(['MERGE', 'CREATE', 'MERGE']);
  });

  it('a lease table another driver made at the same moment (its CREATE refused) is used as it is', async () => {
    const sent: string[] = [];
    let made = false;
    const lease = new SparkLease(
      withQuery({
        execute: async (sql) => {
          sent.push(sql.split(/\s/)[0]!);
          if (sql.startsWith('CREATE')) {
            made = true;
            throw new Error('query failed: [TABLE_OR_VIEW_ALREADY_EXISTS] Cannot create table or view `default`.`_scd_locks` because it already exists.');
          }
          if (sql.startsWith('MERGE') && !made) throw new Error('query failed: [TABLE_OR_VIEW_NOT_FOUND] The table or view `_scd_locks` cannot be found.');
          return [{ num_affected_rows: 1 }];
        },
      }),
      'sc://spark/db',
    );
    await lease.acquire('dim', true);
    expect(sent).toEqual(['MERGE', 'CREATE', 'MERGE']);
  });
});

describe('Spark parameters (unit: always run)', () => {
  it('binds $n as literals, never inside a string literal, a quoted name or a comment', () => {
    expect(bindParams(`SELECT $1, '$1', \`$2\`, $2 -- $1\n, $10`, ['a', 2, null, null, null, null, null, null, null, "it's"])).toBe(
      `SELECT 'a', '$1', \`$2\`, 2 -- $1\n, 'it\\'s'`,
    );
    expect(bindParams(`SELECT 'a\\'$1', $1`, [true])).toBe(`SELECT 'a\\'$1', TRUE`);
    expect(() => bindParams('SELECT $2', [1])).toThrow(/refers to \$2 but has 1 parameter/);
  });

  it('writes each kind of value as the literal Spark reads back', () => {
    expect(sparkLiteral(null)).toBe('NULL');
    expect(sparkLiteral(12345678901234567890n)).toBe('12345678901234567890');
    expect(sparkLiteral(1.5)).toBe(`CAST('1.5' AS DOUBLE)`);
    expect(sparkLiteral('a\\b')).toBe(`'a\\\\b'`);
    expect(sparkLiteral(new Date('2025-01-02T03:04:05.006Z'))).toBe(`TIMESTAMP '2025-01-02T03:04:05.006Z'`);
  });
});

const url = process.env.SCD_TEST_SPARK_URL;

describe.skipIf(!url)('Spark driver on a live server (SCD_TEST_SPARK_URL; skipped when unset)', { timeout: 300_000 }, () => {
  const schema = freshSchema();
  let a: SparkDriver;
  let b: SparkDriver;
  let dir: string;

  beforeAll(async () => {
    a = await SparkDriver.connect(url!, { schema, dropSchemaOnClose: true });
    b = await SparkDriver.connect(url!, { schema, noWait: true });
    dir = mkdtempSync(path.join(tmpdir(), 'scd-spark-'));
  });
  afterEach(async () => {
    await a?.discardScratch(['_scd_stage', '_scd_rejects'], []);
  });
  afterAll(async () => {
    await b?.close();
    await a?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it("sets its session's settings: UTC, views keep their analyzed plans, no adaptive execution", async () => {
    const setting = async (key: string) => String((await a.query(`SET ${key}`))[0]!.value);
    expect(await setting('spark.sql.session.timeZone')).toBe('UTC');
    expect(await setting('spark.sql.legacy.storeAnalyzedPlanForView')).toBe('true');
    expect(await setting('spark.sql.adaptive.enabled')).toBe('false');
  });

  it('a target held by one commit is refused to another with noWait, and free again once the first dropped its scratch', async () => {
    let inside: Promise<void> | undefined;
    await a.transaction(async () => {
      await a.lockTarget('dim');
      inside = b.transaction(async () => b.lockTarget('dim'));
      await expect(inside).rejects.toThrow(/target "dim" .* is being changed by another scdkit commit/);
    });
    // The lease goes back while the commit's scratch is dropped; the drop waits for it.
    await a.discardScratch([], []);
    await b.transaction(async () => b.lockTarget('dim'));
    await b.discardScratch([], []);
    await a.transaction(async () => a.lockTarget('dim'));
    // Any later statement of the session waits for it too.
    expect(await a.query(`SELECT CAST(count(*) AS INT) AS n FROM ${LOCKS_TABLE} WHERE target = 'dim'`)).toEqual([{ n: 0 }]);
  });

  it("drops a commit's cached views first (newest first), then its plain views: a plain view's drop is cheap once no cached plan is left", async () => {
    await a.run('CACHE TABLE `_scd_t1` AS SELECT 1 AS x');
    await a.run('CREATE TEMP VIEW `_scd_v1` AS SELECT x FROM `_scd_t1`');
    await a.run('CACHE TABLE `_scd_t2` AS SELECT x FROM `_scd_v1`');
    await a.run('CREATE TEMP VIEW `_scd_v2` AS SELECT x FROM `_scd_t2`');
    expect(await a.query('SELECT x FROM `_scd_v2`')).toEqual([{ x: 1 }]);
    const client = (a as unknown as { client: { execute: (sql: string) => Promise<unknown> } }).client;
    const execute = client.execute.bind(client);
    const sent: string[] = [];
    client.execute = async (sql: string) => {
      sent.push(sql);
      return execute(sql);
    };
    try {
      await a.discardScratch([], []);
    } finally {
      client.execute = execute;
    }
    const dropped = sent
      .join('\n')
      .match(/DROP VIEW IF EXISTS `(_scd_[tv]\d)`/g)
      ?.map((x) => x.slice(-8, -1));
    expect(dropped).toEqual(['_scd_t2', '_scd_t1', '_scd_v2', '_scd_v1']);
    expect((await a.query(`SHOW VIEWS LIKE '_scd_[tv]*'`)).filter((r) => r.isTemporary === true)).toEqual([]);
  });

  it("a commit's lease ends with its record: no DELETE after it, and another driver (noWait) takes the target at once", async () => {
    const flow = defineFlow({ target: 'dim_ends', keys: 'id', sequenceBy: 'ts' });
    await applyRows(a, flow, [{ id: 1, ts: 1, v: 'a' }]);
    const lease = `SELECT ends_at_commit FROM ${LOCKS_TABLE} WHERE target = 'dim_ends'`;
    // Still there after the commit (nothing was sent to give it back), ended by record 1.
    expect(await a.query(lease)).toEqual([{ ends_at_commit: 1 }]);
    await applyRows(b, flow, [{ id: 1, ts: 2, v: 'b' }]);
    expect(await b.query(lease)).toEqual([{ ends_at_commit: 2 }]);
    await applyRows(a, flow, [{ id: 1, ts: 3, v: 'c' }]);
    expect((await readTargetWith(a, flow)).map((r) => r.v)).toEqual(['a', 'b', 'c']);
  });

  it('a lease whose holder died is taken over once it expires, and only then', async () => {
    // The lease table exists once a lease was taken (whichever test runs first).
    await a.transaction(async () => a.lockTarget('first'));
    await a.run(`INSERT INTO ${LOCKS_TABLE} (target, holder, expires_at) VALUES ('gone', 'dead-holder', current_timestamp() + INTERVAL 1 HOURS)`);
    await expect(b.transaction(async () => b.lockTarget('gone'))).rejects.toThrow(/being changed by another scdkit commit/);
    await a.run(`UPDATE ${LOCKS_TABLE} SET expires_at = current_timestamp() - INTERVAL 1 MINUTES WHERE target = 'gone'`);
    await b.transaction(async () => b.lockTarget('gone'));
    expect(await b.query(`SELECT * FROM ${LOCKS_TABLE} WHERE target = 'gone'`)).toEqual([]);
  });

  it('a catalog.schema flow (Unity Catalog names) keeps its tables in that catalog and schema', async () => {
    const own = freshSchema();
    const flow = defineFlow({ target: 'dim_uc', keys: 'id', sequenceBy: 'ts', schema: `spark_catalog.${own}` });
    const uc = await SparkDriver.connect(url!, { schema: flow.schema, dropSchemaOnClose: true });
    try {
      expect(uc.location).toMatch(new RegExp(`/spark_catalog\\.${own}$`));
      await applyRows(uc, flow, [
        { id: 1, ts: 1, v: 'a' },
        { id: 1, ts: 2, v: 'b' },
      ]);
      expect((await readTargetWith(uc, flow)).map((r) => r.v)).toEqual(['a', 'b']);
      const tables = (await a.query(`SHOW TABLES IN spark_catalog.${own}`)).map((r) => String(r.tableName));
      expect(tables).toContain('dim_uc');
    } finally {
      await uc.close();
    }
    expect((await a.query(`SHOW DATABASES LIKE '${own}'`)).length).toBe(0);
  });

  // BIGINT values come back as text (as every driver gives them: no number beyond 2^53 is rounded).
  it('stages NDJSON by line: values as JSON text (null as NULL), each line that is not a JSON object rejected alone with its text', async () => {
    const file = path.join(dir, 'in.ndjson');
    writeFileSync(file, '{"id":1,"v":"a","n":1.50}\r\n\n[1,2]\n{"id":2,"v":null}\n{bad\n42\n{"id":3,"w":{"x":[1]}}\n');
    const staged = await a.stageFiles([{ path: file, format: 'ndjson', label: 'in.ndjson' }], '_scd_stage', '_scd_rejects');
    expect(staged.records).toBe(6);
    expect([...staged.lexical.entries()]).toEqual([
      ['id', 'json'],
      ['v', 'json'],
      ['n', 'json'],
      ['w', 'json'],
    ]);
    const rows = await a.query('SELECT id, v, n, w, __scd_line AS line, __scd_raw AS raw FROM _scd_stage ORDER BY __scd_line');
    expect(rows).toEqual([
      { id: '1', v: '"a"', n: '1.5', w: null, line: '1', raw: '{"id":1,"v":"a","n":1.50}' },
      // JSON null is SQL NULL, as on DuckDB and PostgreSQL (a null key is then "key is null", not "does not fit")
      { id: '2', v: null, n: null, w: null, line: '4', raw: '{"id":2,"v":null}' },
      { id: '3', v: null, n: null, w: '{"x":[1]}', line: '7', raw: '{"id":3,"w":{"x":[1]}}' },
    ]);
    const rejects = await a.query('SELECT __scd_file AS f, __scd_line AS line, reason, raw FROM _scd_rejects ORDER BY __scd_line');
    expect(rejects).toEqual([
      { f: 'in.ndjson', line: '3', reason: 'not a JSON object', raw: '[1,2]' },
      { f: 'in.ndjson', line: '5', reason: 'malformed JSON', raw: '{bad' },
      { f: 'in.ndjson', line: '6', reason: 'not a JSON object', raw: '42' },
    ]);
    await a.discardScratch(['_scd_stage', '_scd_rejects'], []);
    expect(await a.columns('_scd_stage')).toBeUndefined();
  });

  it('a statement the optimizer refused is sent again without the rule it named, and only that statement is', async () => {
    const client = (a as unknown as { client: { execute(sql: string): Promise<Array<Record<string, unknown>>> } }).client;
    const execute = client.execute.bind(client);
    const setting = async () => (await execute('SET spark.sql.optimizer.excludedRules'))[0]!.value;
    const before = await setting();
    let refusals = 0;
    const seen: unknown[] = [];
    client.execute = async (sql: string) => {
      if (sql.startsWith('SELECT 42')) {
        seen.push(await setting());
        if (refusals++ === 0)
          throw new Error('[PLAN_VALIDATION_FAILED_RULE_IN_BATCH] Rule org.apache.spark.sql.catalyst.optimizer.PushDownPredicates in batch X generated an invalid plan');
      }
      return execute(sql);
    };
    try {
      await a.run('SELECT 42 AS n');
    } finally {
      client.execute = execute;
    }
    expect(seen).toEqual([
      before,
      ['PushDownPredicates', 'PushPredicateThroughNonJoin', 'PushPredicateThroughJoin'].map((r) => `org.apache.spark.sql.catalyst.optimizer.${r}`).join(','),
    ]);
    expect(await setting()).toBe(before);
  });

  it("judges a flow expression by Spark's own parser and analyzer, running nothing", async () => {
    const columns = [
      { name: 'op', type: 'STRING' },
      { name: 'n', type: 'BIGINT' },
    ];
    expect(await a.checkExpression("op = 'D'", columns)).toBeUndefined();
    expect(await a.checkExpression('n > 2 AND op IS NOT NULL', columns)).toBeUndefined();
    expect(await a.checkExpression('nope = 1', columns)).toMatchObject({ kind: 'unbound' });
    expect(await a.checkExpression("op = = 'D'", columns)).toMatchObject({ kind: 'syntax' });
    expect(await a.checkExpression("op = 'D') AS x, (SELECT 1", columns)).toMatchObject({ kind: 'reads' });
    expect(await a.checkExpression('n = (SELECT max(id) FROM range(3))', columns)).toMatchObject({ kind: 'reads' });
    expect(await a.checkExpression('rand() > 0.5', columns)).toMatchObject({ kind: 'reads' });
    // The session's, the engine's or the catalog's values are not the record's.
    for (const expr of ["version() <> ''", "current_user() <> ''", "user() <> ''", "session_user() <> ''", "current_database() <> ''"])
      expect(await a.checkExpression(expr, columns), expr).toMatchObject({ kind: 'reads' });
    expect(await a.checkExpression('upper(op)', columns)).toEqual({ kind: 'type', type: 'STRING' });
    expect(await a.checkExpression("op = 'D') AS x, (1", columns)).toMatchObject({ kind: 'syntax' });
  });

  it('stages CSV values as the text written, with their lines', async () => {
    const file = path.join(dir, 'in.csv');
    // A quoted header and a quoted value with a comma (a header with a comma is refused: Delta cannot name it).
    writeFileSync(file, 'id,"name",when\n1,"a, b",2025-01-01T00:00:00Z\n2,1.50,\n');
    const staged = await a.stageFiles([{ path: file, format: 'csv' }], '_scd_stage', '_scd_rejects');
    expect(staged.records).toBe(2);
    const rows = await a.query('SELECT id, name, `when` AS w, __scd_line AS line FROM _scd_stage ORDER BY __scd_line');
    expect(rows).toEqual([
      { id: '1', name: 'a, b', w: '2025-01-01T00:00:00Z', line: '2' },
      { id: '2', name: '1.50', w: null, line: '3' },
    ]);
    await a.discardScratch(['_scd_stage', '_scd_rejects'], []);
  });
});
