// The source the peers read. dbt snapshots and SQLMesh SCD type 2 models version the rows of a
// source *table*: a key that is missing from it is a hard delete, a row is the key's latest state.
// The bench keeps that table, `src`, in each peer's database and lands every batch into it first
// ("landing", the work of the EL tool that feeds a dbt or SQLMesh project, timed apart from the tool):
// per key the newest event wins, a delete removes the row, an event older than the row is not
// applied (a state table has no place for it). See docs/decisions/0067-peers-in-the-bench.md.
//
// `--peer-source batch` makes `src` a view over the batch file instead (the tool reads the batch
// itself); the tools then must not invalidate missing keys (every key the batch does not mention
// would be closed), so a delete event is just another row to them (a version with empty values).

import { COLUMNS } from '../generate.mjs';

export const SOURCE = 'src';
/** The columns of the source table: the event's, without the operation (a table holds states). */
export const SOURCE_COLUMNS = Object.entries(COLUMNS).filter(([n]) => n !== 'op');

const sqlString = (s) => `'${String(s).replace(/'/g, "''")}'`;
const readEvents = (file) =>
  `read_json(${sqlString(file)}, format = 'newline_delimited', columns = {${Object.entries(COLUMNS)
    .map(([n, t]) => `${n}: '${t}'`)
    .join(', ')}})`;
const stateColumns = SOURCE_COLUMNS.map(([n]) => n).join(', ');

/**
 * The source table as it stood at `until` (exclusive; null: after every initial event): each key's
 * latest initial event before then. The peers' setup snapshots it twice, at the end of 2023 and
 * after every event, so that their history holds the initial dimension's closed versions too.
 */
export function sourceAtSql(initialFile, until) {
  return `CREATE OR REPLACE TABLE ${SOURCE} AS
    SELECT ${stateColumns} FROM ${readEvents(initialFile)}
    ${until ? `WHERE updated_at < TIMESTAMP ${sqlString(until)}` : ''}
    QUALIFY row_number() OVER (PARTITION BY id ORDER BY updated_at DESC) = 1`;
}

/** The landing of one batch into the source table, in one transaction (each step named). */
export function landingSteps(batchFile) {
  return [
    ['landing: read', `CREATE TEMP TABLE landing AS SELECT * FROM ${readEvents(batchFile)} QUALIFY row_number() OVER (PARTITION BY id ORDER BY updated_at DESC) = 1`],
    // the row of a key whose event is newer goes (an upsert replaces it, a delete removes it)
    ['landing: remove', `DELETE FROM ${SOURCE} s USING landing l WHERE s.id = l.id AND l.updated_at > s.updated_at`],
    ['landing: insert', `INSERT INTO ${SOURCE} SELECT ${stateColumns} FROM landing l WHERE l.op <> 'D' AND NOT EXISTS (SELECT 1 FROM ${SOURCE} s WHERE s.id = l.id)`],
    ['landing: drop', `DROP TABLE landing`],
  ];
}

/** `--peer-source batch`: the source is the batch file itself, read with the source table's columns. */
export function sourceViewSql(batchFile) {
  return `CREATE OR REPLACE VIEW ${SOURCE} AS SELECT ${stateColumns} FROM ${readEvents(batchFile)}`;
}
