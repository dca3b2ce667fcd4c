// dbt snapshot (dbt-duckdb) as a peer: a dbt project of one snapshot over the source table,
// `strategy: timestamp` on updated_at, `unique_key: id`, `hard_deletes: invalidate` (ignore with
// --peer-source batch, see source.mjs). Its SQL time is read from dbt's own JSON log: the sum of
// every SQLQueryStatus event's `elapsed` (dbt times each statement around the cursor's execute).

import { readFileSync, rmSync } from 'node:fs';
import path from 'node:path';
import { SOURCE } from './source.mjs';

export const DBT_TABLE = 'dim_dbt';
/** The snapshot's history, in the shape the correctness query reads. */
export const DBT_HISTORY = { table: `main.${DBT_TABLE}`, from: 'dbt_valid_from', to: 'dbt_valid_to' };

/** The project's files ({relative path: text}); `db` is the DuckDB file every run works on. */
export function dbtProject({ db, sourceMode }) {
  return {
    'dbt_project.yml': `name: scdkit_bench_peer
version: '1.0'
profile: scdkit_bench_peer
snapshot-paths: [snapshots]
model-paths: [models]
`,
    'profiles.yml': `scdkit_bench_peer:
  target: bench
  outputs:
    bench:
      type: duckdb
      path: ${JSON.stringify(db)}
      threads: 1
`,
    'models/sources.yml': `sources:
  - name: raw
    schema: main
    tables:
      - name: ${SOURCE}
`,
    [`snapshots/${DBT_TABLE}.yml`]: `snapshots:
  - name: ${DBT_TABLE}
    relation: source('raw', '${SOURCE}')
    config:
      unique_key: id
      strategy: timestamp
      updated_at: updated_at
      hard_deletes: ${sourceMode === 'batch' ? 'ignore' : 'invalidate'}
`,
  };
}

/** The command line of one `dbt snapshot` in the project folder `dir` (its log replaced each run). */
export function dbtCommand(bin, dir) {
  rmSync(path.join(dir, 'logs'), { recursive: true, force: true });
  return {
    cmd: path.join(bin, 'dbt'),
    args: ['snapshot', '--project-dir', dir, '--profiles-dir', dir, '--log-format-file', 'json', '--log-level-file', 'debug'],
    env: { DBT_SEND_ANONYMOUS_USAGE_STATS: 'false', DO_NOT_TRACK: '1' },
  };
}

/** The SQL alone of the last run: statements and their time, from dbt's JSON log. */
export function dbtSqlTimes(dir) {
  const stmts = [];
  let pending = null;
  for (const line of readFileSync(path.join(dir, 'logs', 'dbt.log'), 'utf8').split('\n')) {
    if (!line.startsWith('{')) continue;
    const e = JSON.parse(line);
    if (e.info?.name === 'SQLQuery') pending = String(e.data.sql);
    else if (e.info?.name === 'SQLQueryStatus') {
      stmts.push({
        seconds: Number(e.data.elapsed),
        sql: (pending ?? '')
          .replace(/\/\*.*?\*\//s, '')
          .replace(/\s+/g, ' ')
          .trim()
          .slice(0, 120),
      });
      pending = null;
    }
  }
  return stmts;
}
