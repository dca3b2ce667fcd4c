import type { Dialect } from '../dialects/dialect.js';
import { duckdbDialect } from '../dialects/duckdb/duckdb-dialect.js';
import { postgresDialect } from '../dialects/postgres/postgres-dialect.js';
import { sparkDialect } from '../dialects/spark/spark-dialect.js';
import { ScdError } from '../errors.js';
import type { Flow } from '../flow/flow.js';
import { type EngineName, engineOfDatabase } from './engine-of.js';

/** The engines by name, as a flow's database or a caller names them. */
const DIALECTS: Record<string, Dialect> = { duckdb: duckdbDialect, postgres: postgresDialect, spark: sparkDialect };

export interface AsOfJoinOptions {
  /** The fact table (a table name; quoted for you). */
  fact: string;
  /** The fact column holding the time to look the dimension up at (same type as the sequence). */
  time: string;
  /** Dimension columns to bring in, e.g. ['city']. */
  columns: string[];
  /** Fact column → dimension key column; default: the flow's keys, same names on both sides. */
  keys?: Record<string, string>;
  /** 'left' (default) keeps facts with no valid version (their dimension columns are null). */
  join?: 'left' | 'inner';
  /**
   * The engine the SQL is for: a Dialect (the driver's `driver.dialect`) or its name; default: the
   * engine of the flow's database (a postgres:// or pglite:// URL: PostgreSQL; sc://: Spark; else DuckDB).
   */
  dialect?: Dialect | EngineName;
}

/**
 * SQL joining each fact to the ONE dimension version valid at the fact's time:
 * same key, `__START_AT <= time` and (`time < __END_AT` or current). Versions of a key never
 * overlap, so a fact never multiplies; a tombstone (deleted) version never matches.
 */
export function asOfJoin(flow: Flow, options: AsOfJoinOptions): string {
  if (flow.storedAs !== 'scd2') throw new ScdError('USAGE', 'asOfJoin needs an scd2 target; join an scd1 target on its keys', { file: flow.origin });
  if (!options.columns.length) throw new ScdError('USAGE', 'asOfJoin needs at least one dimension column', { fix: "pass columns: ['city']" });
  const d = dialectOf(flow, options.dialect);
  const q = (name: string) => d.quote(name);
  const keys = options.keys ?? Object.fromEntries(flow.keys.map((k) => [k, k]));
  const seq = flow.sequenceBy;
  if (seq === 'debezium')
    throw new ScdError('USAGE', "asOfJoin needs the flow's sequence; this Debezium flow's is decided by its records", {
      file: flow.origin,
      fix: 'set sequenceBy in the flow to the sequence its target has, e.g. [_ts_ms, _lsn]',
    });
  const part = (col: string) => (seq.length === 1 ? `d.${q(col)}` : `(d.${q(col)}).${q(seq[0]!)}`);
  const t = `f.${q(options.time)}`;
  const on = [
    ...Object.entries(keys).map(([f, k]) => `f.${q(f)} = d.${q(k)}`),
    `${part(flow.startAtColumn)} <= ${t}`,
    // An inclusive end (endInclusive) is the version's last value: it matches there too.
    `(${t} ${flow.endInclusive ? '<=' : '<'} ${part(flow.endAtColumn)} OR d.${q(flow.endAtColumn)} IS NULL)`,
    ...(flow.deletes === 'tombstone' ? [`NOT d.${q(flow.deletedColumn)}`] : []),
  ];
  return `SELECT f.*, ${options.columns.map((c) => `d.${q(c)}`).join(', ')}
FROM ${q(options.fact)} f
${options.join === 'inner' ? 'JOIN' : 'LEFT JOIN'} ${q(flow.target)} d
  ON ${on.join('\n AND ')}`;
}

/** The dialect asked for, by object or name, or the one of the flow's database. */
function dialectOf(flow: Flow, asked: Dialect | EngineName | undefined): Dialect {
  if (asked === undefined) return DIALECTS[engineOfDatabase(flowDatabase(flow))]!;
  if (typeof asked === 'string') {
    const d = DIALECTS[asked];
    if (!d)
      throw new ScdError('USAGE', `asOfJoin: "${asked}" is not an engine scdkit writes SQL for`, { fix: `pass dialect: 'duckdb', 'postgres' or 'spark' (or driver.dialect)` });
    return d;
  }
  if (typeof (asked as Partial<Dialect>).quote !== 'function')
    throw new ScdError('USAGE', 'asOfJoin: dialect is neither an engine name nor a Dialect', { fix: "pass dialect: 'duckdb', 'postgres' or 'spark', or driver.dialect" });
  return asked;
}

/** The database a flow opens when none is given (its own, or SCD_DATABASE_URL when it names none). */
function flowDatabase(flow: Flow): string {
  const env = process.env.SCD_DATABASE_URL;
  return flow.databaseIsDefault && env ? env : flow.database;
}
