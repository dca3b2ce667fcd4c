// SQLMesh as a peer: a project of one SCD_TYPE_2_BY_TIME model over the source table (unique_key
// id, updated_at_name updated_at, invalidate_hard_deletes true — false with --peer-source batch,
// see source.mjs — and updated_at_as_valid_from true, so that a new key's first version starts at
// its event as scdkit's does; the default would start it at 1970-01-01). Its state lives in the
// same DuckDB file (SQLMesh's default for a DuckDB gateway).
//
// What a run processes: `sqlmesh run` evaluates the model for the intervals its cron (@daily) says
// are missing, and SQLMesh evaluates an SCD type 2 model once for all of them. The setup leaves the
// state processed up to SETUP_END (a date in the past), so every bench run finds intervals missing
// and evaluates the model once, reading the whole source and rewriting the whole table (SQLMesh's
// SCD type 2 is one CREATE OR REPLACE TABLE … AS on DuckDB).
//
// Its SQL time comes from sqlmesh-timed.py, which runs SQLMesh's own command line with every
// statement of its engine adapter timed (SQLMesh logs statements, not their time).

import { readFileSync, rmSync } from 'node:fs';
import path from 'node:path';
import { SOURCE, SOURCE_COLUMNS } from './source.mjs';

export const SQLMESH_MODEL = 'main.dim_sqlmesh';
/** The model's view (virtual layer) onto its physical table, in the shape the correctness query reads. */
export const SQLMESH_HISTORY = { table: SQLMESH_MODEL, from: 'valid_from', to: 'valid_to' };
/** The first setup step is planned as of this time, the second runs up to SETUP_END. */
export const SETUP_PLAN_TIME = '2024-06-01';
export const SETUP_END = '2024-06-05';

const here = path.dirname(new URL(import.meta.url).pathname);
const duckType = (t) => (t === 'VARCHAR' ? 'TEXT' : t);

export function sqlmeshProject({ db, sourceMode }) {
  return {
    'config.yaml': `gateways:
  bench:
    connection:
      type: duckdb
      database: ${JSON.stringify(db)}
default_gateway: bench
model_defaults:
  dialect: duckdb
  start: '2024-01-01'
`,
    'external_models.yaml': `- name: main.${SOURCE}
  columns:
${SOURCE_COLUMNS.map(([n, t]) => `    ${n}: ${duckType(t)}`).join('\n')}
`,
    'models/dim_sqlmesh.sql': `MODEL (
  name ${SQLMESH_MODEL},
  kind SCD_TYPE_2_BY_TIME (
    unique_key id,
    updated_at_name updated_at,
    invalidate_hard_deletes ${sourceMode === 'batch' ? 'false' : 'true'},
    updated_at_as_valid_from true
  ),
  cron '@daily'
);
SELECT ${SOURCE_COLUMNS.map(([n]) => n).join(', ')} FROM main.${SOURCE}
`,
  };
}

/** The command line of one SQLMesh command (`args` after `sqlmesh -p DIR`), its statements timed into `times`. */
export function sqlmeshCommand(bin, dir, args) {
  const times = path.join(dir, 'sql-times.json');
  rmSync(times, { force: true });
  rmSync(path.join(dir, 'logs'), { recursive: true, force: true });
  return {
    cmd: path.join(bin, 'python'),
    args: [path.join(here, 'sqlmesh-timed.py'), '-p', dir, ...args],
    env: { SCD_BENCH_SQL_TIMES: times },
  };
}

/** The SQL alone of the last run: statements and their time. */
export function sqlmeshSqlTimes(dir) {
  return JSON.parse(readFileSync(path.join(dir, 'sql-times.json'), 'utf8'));
}
