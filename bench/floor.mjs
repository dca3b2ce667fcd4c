// The floor: the least a DuckDB job must do to give what docs/SEMANTICS.md requires of one in-order batch,
// on the bench's data, written as the baseline is (hand-written SQL, one transaction, through the
// same driver). It is not a correct SCD engine; it answers one question with a measurement: could
// ANY design meet "in order ≤ 1.0× the two-step baseline"? (docs/PERFORMANCE.md "The floors").
//
// Three floors. `floor-log`: the baseline's own statements plus the narrowest event log, and no
// change feed. `floor-check`: floor-log plus the narrowest check that every value fits its column
// (SEMANTICS §6: a value that does not fit goes to quarantine, where the baseline's typed read fails the
// whole run or reads it as null): each value's JSON kind, in one pass, misfits kept aside.
// `floor`: the design the issue points to — one read of the target instead of the
// baseline's two — plus the two writes the semantics cannot do without, each as narrow as it can be:
// - the event log (SEMANTICS §3: the state is a function of every event ever received; an event that
//   changes nothing still decides where a later late event ends): key, sequence, operation and
//   commit only, the payload left to the target's rows (a reference, as if no version ever went);
// - the change feed (SEMANTICS §5: each target row a commit changed, per commit): key, start, change
//   type and commit only, the values left to the target's rows.
// Everything else scdkit does is left out, in the floor's favour: reading the file with the types
// given (no check that every value fits, no quarantine), no deduplication of exact duplicates, no
// ties, no late events (an out-of-order batch gives a wrong result here, as for the baseline), no
// key state (each key's last sequence, for telling late events), no commit record.

import { BASE_TABLE, baselineSteps, baselineStepsPostgres } from './baseline.mjs';
import { ATTRS, COLUMNS } from './generate.mjs';

const sqlString = (s) => `'${String(s).replace(/'/g, "''")}'`;
export const FLOOR_LOG = 'floor_log';
export const FLOOR_FEED = 'floor_feed';
export const FLOOR_QUARANTINE = 'floor_quarantine';

/** The JSON kind a value of each column must have (null aside): the narrowest check of a fit. */
const KIND = { BIGINT: 'number', VARCHAR: 'string', TIMESTAMP: 'string' };

/** The floor's own tables, created untimed before its transaction (empty: an append costs the same). */
export function floorTablesSql() {
  return [
    `CREATE TABLE IF NOT EXISTS ${FLOOR_LOG} (id BIGINT, updated_at TIMESTAMP, op VARCHAR, commit_version INTEGER)`,
    `CREATE TABLE IF NOT EXISTS ${FLOOR_FEED} (id BIGINT, start_at TIMESTAMP, change_type VARCHAR, commit_version INTEGER)`,
    `CREATE TABLE IF NOT EXISTS ${FLOOR_QUARANTINE} (raw VARCHAR, commit_version INTEGER)`,
  ];
}

/** The baseline's typed read of every event, for the log (the baseline reads only the latest per key). */
function loadSteps(file, version) {
  const columns = `{${Object.entries(COLUMNS)
    .map(([n, t]) => `${n}: '${t}'`)
    .join(', ')}}`;
  return [
    ['load', `CREATE TEMP TABLE ev AS SELECT * FROM read_json(${sqlString(file)}, format = 'newline_delimited', columns = ${columns})`],
    ['log', `INSERT INTO ${FLOOR_LOG} SELECT id, updated_at, op, ${version} FROM ev`],
  ];
}
const latest = `SELECT * FROM ev QUALIFY row_number() OVER (PARTITION BY id ORDER BY updated_at DESC) = 1`;

/**
 * The baseline's own two steps, unchanged, plus the narrowest event log and nothing else (no
 * change feed at all): a bound below every design, since each must keep the events.
 */
export function floorLogSteps(file, version = 2) {
  const [, close, insert, drop] = baselineSteps(file);
  return [...loadSteps(file, version), ['dedupe', `CREATE TEMP TABLE stg AS ${latest}`], close, insert, drop, ['drop staging', `DROP TABLE ev`]];
}

/**
 * floor-log, and before it the narrowest check of every value (its JSON kind; DuckDB reads the
 * records' text once more for it, as its typed read keeps no kind), misfits into the quarantine.
 */
export function floorCheckSteps(file, version = 2) {
  const fits = Object.entries(COLUMNS)
    .map(([n, t]) => `coalesce(json_type(json, '$.${n}'), 'NULL') IN ('NULL', ${KIND[t] === 'number' ? `'BIGINT', 'UBIGINT', 'DOUBLE'` : `'VARCHAR'`})`)
    .join(' AND ');
  const check = `INSERT INTO ${FLOOR_QUARANTINE} SELECT CAST(json AS VARCHAR), ${version} FROM read_ndjson_objects(${sqlString(file)}) WHERE NOT (${fits})`;
  return [['check', check], ...floorLogSteps(file, version)];
}

/**
 * The design the issue points to: one read of the target (a join of the batch's latest events
 * with the current rows), the closes by row id and the new versions from it, plus the narrowest
 * event log and change feed.
 */
export function floorSteps(file, version = 2) {
  return [...loadSteps(file, version), ...oneRead(`(${latest})`, 'rowid', version), ['drop staging', `DROP TABLE ev`]];
}

/** The one read of the target and the writes from it: closes by row id (`rowid`), new versions, feed. */
function oneRead(latestEvents, rowid, version) {
  const changed = ATTRS.map((c) => `d.${c} IS DISTINCT FROM s.${c}`).join(' OR ');
  const opens = `(rid IS NULL OR closes) AND op <> 'D'`;
  return [
    [
      'join',
      `CREATE TEMP TABLE j AS
       SELECT s.*, d.${rowid} AS rid, d.effective_from AS old_from, (d.id IS NOT NULL AND (s.op = 'D' OR ${changed})) AS closes
       FROM ${latestEvents} s LEFT JOIN ${BASE_TABLE} d ON d.id = s.id AND d.is_current`,
    ],
    ['close', `UPDATE ${BASE_TABLE} SET effective_to = j.updated_at, is_current = FALSE FROM j WHERE j.closes AND ${BASE_TABLE}.${rowid} = j.rid`],
    ['insert', `INSERT INTO ${BASE_TABLE} (id, ${ATTRS.join(', ')}, effective_from) SELECT id, ${ATTRS.join(', ')}, updated_at FROM j WHERE ${opens}`],
    [
      'feed',
      `INSERT INTO ${FLOOR_FEED}
       SELECT id, old_from, v.t, ${version} FROM j, (VALUES ('update_preimage'), ('update_postimage')) v(t) WHERE closes AND op <> 'D'
       UNION ALL SELECT id, old_from, 'delete', ${version} FROM j WHERE closes AND op = 'D'
       UNION ALL SELECT id, updated_at, 'insert', ${version} FROM j WHERE ${opens}`,
    ],
    ['drop staging', `DROP TABLE j`],
  ];
}

/** The floor on PostgreSQL: the baseline's load, log and dedup (with its ANALYZE), one read by ctid, the feed. */
export function floorStepsPostgres(file, version = 2) {
  const steps = floorLogStepsPostgres(file, version);
  const close = steps.findIndex(([name]) => name === 'close');
  const drops = steps.filter(([name]) => name === 'drop staging');
  return [...steps.slice(0, close), ...oneRead('stg', 'ctid', version), ...drops];
}

/** floor-log on PostgreSQL: the baseline's steps, and the narrowest log from its loaded lines. */
export function floorLogStepsPostgres(file, version = 2) {
  const steps = baselineStepsPostgres(file);
  const at = steps.findIndex(([name]) => name === 'dedupe');
  const log = `INSERT INTO ${FLOOR_LOG} SELECT r.id, r.updated_at, r.op, ${version} FROM raw, jsonb_to_record(raw.doc) AS r(id bigint, updated_at timestamp, op text)`;
  return [...steps.slice(0, at), ['log', log], ...steps.slice(at)];
}

/** floor-check on PostgreSQL: floor-log, with the kind of every value checked in the loaded records. */
export function floorCheckStepsPostgres(file, version = 2) {
  const steps = floorLogStepsPostgres(file, version);
  const fits = Object.entries(COLUMNS)
    .map(([n, t]) => `coalesce(jsonb_typeof(raw.doc->'${n}'), 'null') IN ('null', '${KIND[t]}')`)
    .join(' AND ');
  const at = steps.findIndex(([name]) => name === 'log');
  return [...steps.slice(0, at), ['check', `INSERT INTO ${FLOOR_QUARANTINE} SELECT CAST(doc AS text), ${version} FROM raw WHERE NOT (${fits})`], ...steps.slice(at)];
}

/** floorTablesSql on PostgreSQL. */
export function floorTablesSqlPostgres() {
  return floorTablesSql().map((s) => s.replace(/\bVARCHAR\b/g, 'text'));
}
