// The floors on Spark + Delta: the least a job must do to give what the issue asks of one in-order
// batch on Delta, written as the baseline is (hand-written Spark SQL through the same server, each
// write a Delta commit). None is a correct SCD engine; each answers one question with a measurement:
// could ANY design meet "in order ≤ 2.0× the two-step Delta MERGE" on this server?
// (docs/PERFORMANCE.md "The floors"; bench/floor.mjs has DuckDB's and PostgreSQL's.)
//
// `floor-log`: the baseline's own statements plus the narrowest event log (key, sequence,
// operation, commit of every event: docs/SEMANTICS.md §3), the log's append beside the close.
// `floor`: what the Delta contract adds, each write as narrow as it can be: a lease that survives a
// crashed holder (one conditional MERGE into a lease table, beside the file's read), ONE Delta
// commit on the target per commit (a single MERGE that closes and inserts, its source sent whole,
// the target with Delta's change feed on, which is the change feed), the narrowest log beside it,
// and the commit record last (which ends the lease, as scdkit's does).
// `floor-state`: the floor plus each key's last sequence — what tells a late event from an in-order
// one without reading the log: the batch's keys read against it, and its MERGE beside the target's.
// `floor-logread`: the floor plus the other way to tell late events: the batch's keys' last
// sequences read from the event log itself (scdkit's log of the base, 1.25M events; it grows with
// every commit, where a key state grows with the keys), and no state to write.
// Left out, in the floors' favour: reading with the types given (no check that every value fits,
// no quarantine), no deduplication of exact duplicates, no ties, no late events (an out-of-order
// batch gives a wrong history here, as for the baseline), no recovery check of an interrupted
// commit, no flow record to read, no time-travel pins.

import { randomUUID } from 'node:crypto';
import { TARGET } from './flow.mjs';
import { ATTRS, COLUMNS } from './generate.mjs';
import { BASE_TABLE, baselineSteps } from './spark.mjs';

export const FLOOR_LOG = 'floor_log';
export const FLOOR_LOCKS = 'floor_locks';
export const FLOOR_COMMITS = 'floor_commits';
export const FLOOR_STATE = 'floor_state';
/** The kinds of the Spark floors (bench/child.mjs tasks), each with its key in the results. */
export const SPARK_FLOORS = [
  ['floor-log', 'floorLog'],
  ['floor', 'floor'],
  ['floor-state', 'floorState'],
  ['floor-logread', 'floorLogRead'],
];
/** scdkit's event log in the base (bench/flow.mjs's target), which floor-logread reads. */
const BASE_LOG = `_scd_${TARGET}_events`;
/** The tables of the base a floor's copy takes. */
export const sparkFloorCopies = (kind) => (t) => t === BASE_TABLE || (kind === 'floor-logread' && t === BASE_LOG);

const sparkType = (t) => ({ BIGINT: 'BIGINT', VARCHAR: 'STRING', TIMESTAMP: 'TIMESTAMP_NTZ' })[t] ?? t;
const sqlString = (s) => `'${String(s).replace(/\\/g, '\\\\').replace(/'/g, "\\'")}'`;
const DELTA = 'USING delta TBLPROPERTIES (delta.enableDeletionVectors = true)';

/**
 * The floors' own tables, made untimed before each run in the floor's copy of the base: the
 * baseline table given Delta's change feed (the contract's feed) and deletion vectors (as scdkit's
 * target has), a lease row that a commit before released, one commit record, and (floor-state)
 * each key's last sequence, from the versions.
 */
export function sparkFloorTablesSql(kind) {
  const sql = [`CREATE TABLE ${FLOOR_LOG} (id BIGINT, updated_at TIMESTAMP_NTZ, op STRING, commit_version INT) ${DELTA}`];
  if (kind === 'floor-log') return sql;
  sql.push(
    `ALTER TABLE ${BASE_TABLE} SET TBLPROPERTIES (delta.enableChangeDataFeed = true, delta.enableDeletionVectors = true)`,
    `CREATE TABLE ${FLOOR_LOCKS} (target STRING NOT NULL, holder STRING NOT NULL, expires_at TIMESTAMP NOT NULL) USING delta`,
    `INSERT INTO ${FLOOR_LOCKS} VALUES ('dim', 'setup', current_timestamp() - INTERVAL 1 MINUTE)`,
    `CREATE TABLE ${FLOOR_COMMITS} (version INT NOT NULL, committed_at TIMESTAMP NOT NULL) USING delta`,
    `INSERT INTO ${FLOOR_COMMITS} VALUES (1, current_timestamp())`,
  );
  if (kind === 'floor-state')
    sql.push(
      `CREATE TABLE ${FLOOR_STATE} (id BIGINT NOT NULL, last_at TIMESTAMP_NTZ NOT NULL) ${DELTA}`,
      `INSERT INTO ${FLOOR_STATE} SELECT id, max(effective_from) FROM ${BASE_TABLE} GROUP BY id`,
    );
  return sql;
}

/** Every event typed, read once and kept (the log takes all of them, the writes each key's latest). */
function loadSteps(file) {
  const schema = Object.entries(COLUMNS)
    .map(([n, t]) => `${n} ${sparkType(t)}`)
    .join(', ');
  return [
    ['load', `CREATE OR REPLACE TEMPORARY VIEW bench_raw (${schema}) USING json OPTIONS (path ${sqlString(file)})`],
    ['load', `CACHE TABLE bench_ev AS SELECT * FROM bench_raw`],
  ];
}
const dedupe = [
  'dedupe',
  `CACHE TABLE bench_stg AS
   SELECT ${Object.keys(COLUMNS).join(', ')} FROM (
     SELECT *, row_number() OVER (PARTITION BY id ORDER BY updated_at DESC) AS rn FROM bench_ev
   ) WHERE rn = 1`,
];
const logSql = (version) => `INSERT INTO ${FLOOR_LOG} SELECT id, updated_at, op, ${version} FROM bench_ev`;
const drops = [
  ['drop staging', 'UNCACHE TABLE bench_stg'],
  ['drop staging', 'UNCACHE TABLE bench_ev'],
  ['drop staging', 'DROP VIEW bench_stg'],
  ['drop staging', 'DROP VIEW bench_ev'],
  ['drop staging', 'DROP VIEW bench_raw'],
];

/**
 * Steps as bench/child.mjs runSteps takes them: [phase, sql], or [phase, [sql, …]] for statements
 * sent at once (as scdkit sends its writes that read nothing another writes).
 */
export function sparkFloorLogSteps(file, version = 2) {
  const [, , close, insert] = baselineSteps(file);
  return [...loadSteps(file), dedupe, ['close+log', [close[1], logSql(version)]], insert, ...drops];
}

/** The Delta contract's floor: lease, one MERGE on the target, the log beside it, the record. */
export function sparkFloorSteps(file, version = 2, { state = false, logRead = false } = {}) {
  const [view, cache] = loadSteps(file);
  const lease = `MERGE INTO ${FLOOR_LOCKS} l
    USING (SELECT 'dim' AS target, '${randomUUID()}' AS holder, current_timestamp() + INTERVAL 30 MINUTES AS expires_at) s
    ON l.target = s.target
    WHEN MATCHED AND l.expires_at < current_timestamp() THEN UPDATE SET holder = s.holder, expires_at = s.expires_at
    WHEN NOT MATCHED THEN INSERT (target, holder, expires_at) VALUES (s.target, s.holder, s.expires_at)`;
  const changed = (a, b) => ATTRS.map((c) => `NOT (${a}.${c} <=> ${b}.${c})`).join(' OR ');
  // One MERGE closes and inserts: each key's latest event once by its key (matches its current
  // row: close it), and once more without one where it opens a version over a current row.
  const target = `MERGE INTO ${BASE_TABLE} d
    USING (SELECT /*+ BROADCAST */ * FROM (
      SELECT s.id AS merge_id, s.* FROM bench_stg s
      UNION ALL
      SELECT CAST(NULL AS BIGINT) AS merge_id, s.* FROM bench_stg s JOIN ${BASE_TABLE} c ON c.id = s.id AND c.is_current
      WHERE s.op <> 'D' AND (${changed('c', 's')})
    ) whole) s
    ON d.id = s.merge_id AND d.is_current
    WHEN MATCHED AND (s.op = 'D' OR ${changed('d', 's')}) THEN UPDATE SET effective_to = s.updated_at, is_current = false
    WHEN NOT MATCHED AND s.op <> 'D' THEN INSERT (id, ${ATTRS.join(', ')}, effective_from, effective_to, is_current)
      VALUES (s.id, ${ATTRS.map((c) => `s.${c}`).join(', ')}, s.updated_at, TIMESTAMP_NTZ '9999-12-31', true)`;
  const writes = [target, logSql(version)];
  const steps = [view, ['lease+load', [lease, cache[1]]], dedupe];
  if (state) {
    // The batch's keys against their last sequences: a late event would send its key to a walk.
    steps.push(['state read', `CACHE TABLE bench_late AS SELECT count(*) AS late FROM bench_ev e JOIN ${FLOOR_STATE} k ON k.id = e.id WHERE e.updated_at <= k.last_at`]);
    writes.push(`MERGE INTO ${FLOOR_STATE} k
      USING (SELECT /*+ BROADCAST */ * FROM (SELECT id, max(updated_at) AS last_at FROM bench_ev GROUP BY id) whole) s
      ON k.id = s.id
      WHEN MATCHED AND s.last_at > k.last_at THEN UPDATE SET last_at = s.last_at
      WHEN NOT MATCHED THEN INSERT (id, last_at) VALUES (s.id, s.last_at)`);
  }
  if (logRead)
    // The batch's keys' last sequences from the log, its keys first sent whole to the scan.
    steps.push([
      'log read',
      `CACHE TABLE bench_late AS SELECT count(*) AS late FROM bench_ev e JOIN (
         SELECT l.id, max(l.updated_at) AS last_at FROM ${BASE_LOG} l LEFT SEMI JOIN (SELECT /*+ BROADCAST */ DISTINCT id FROM bench_stg) b ON b.id = l.id GROUP BY l.id
       ) k ON k.id = e.id WHERE e.updated_at <= k.last_at`,
    ]);
  steps.push(['writes', writes], ['record', `INSERT INTO ${FLOOR_COMMITS} VALUES (${version}, current_timestamp())`], ...drops);
  if (state || logRead) steps.push(['drop staging', 'UNCACHE TABLE bench_late'], ['drop staging', 'DROP VIEW bench_late']);
  return steps;
}
