import { firstLine, QueryError } from '../../errors.js';
import type { ColumnInfo, Row } from '../driver.js';
import { type ExpressionProblem, spliced } from '../expression.js';
import { postgresDialect } from './postgres-dialect.js';

/** The little of the driver the check needs (each call one statement, extended protocol). */
export interface PostgresProbeHost {
  run(sql: string, params?: unknown[]): Promise<void>;
  query(sql: string, params?: unknown[]): Promise<Row[]>;
  /** Run fn in a savepoint (or a transaction) that is always rolled back: it leaves nothing. */
  probe<T>(fn: () => Promise<T>): Promise<T>;
}

const TABLE = '_scd_expr_record';
const COLUMN = '_scd_expr';

/**
 * PostgreSQL's verdict on a flow expression, by its own rule for an expression that is a function
 * of a row alone: a generated column. `CREATE TEMP TABLE (the record's columns, expr boolean
 * GENERATED ALWAYS AS ((expr\n)) STORED)`, one statement in a savepoint that is rolled back, has
 * the server parse the expression and refuse a subquery, a set-returning, aggregate or window
 * function, a parameter, a whole-row or system column, a function that is not IMMUTABLE (now(),
 * random(), pg_read_file(), table_to_xml()), a column the record does not have, and a value that
 * is not boolean. The table, empty, evaluates nothing; its column count proves the text added no
 * second column around the expression.
 */
export async function checkPostgresExpression(host: PostgresProbeHost, expr: string, columns: ColumnInfo[]): Promise<ExpressionProblem | undefined> {
  const q = postgresDialect.quote;
  const record = columns.map((c) => `${q(c.name)} ${c.type}`).join(', ');
  const failed = await host.probe(async () => {
    try {
      await host.run(`CREATE TEMP TABLE ${q(TABLE)} (${record}, ${q(COLUMN)} boolean GENERATED ALWAYS AS (${spliced(expr)}) STORED)`);
    } catch (e) {
      return e;
    }
    const [row] = await host.query(`SELECT CAST(count(*) AS integer) AS n FROM pg_attribute WHERE attrelid = to_regclass($1) AND attnum > 0 AND NOT attisdropped`, [
      `pg_temp.${q(TABLE)}`,
    ]);
    if (Number(row?.n) !== columns.length + 1) return 'extra';
    // A generated column may read tableoid, a system column the record does not have: its
    // parse tree then holds a column of a negative number.
    const [system] = await host.query(`SELECT CAST(count(*) AS integer) AS n FROM pg_attrdef WHERE adrelid = to_regclass($1) AND CAST(adbin AS text) ~ ':varattno -[0-9]'`, [
      `pg_temp.${q(TABLE)}`,
    ]);
    return Number(system?.n) === 0 ? undefined : 'system';
  });
  if (failed === undefined) return undefined;
  if (failed === 'extra') return { kind: 'syntax', reason: 'it is more than one expression' };
  if (failed === 'system') return { kind: 'reads', reason: 'it reads a system column (tableoid), which the record does not have' };
  const code = sqlState(failed);
  const reason = engineReason(failed);
  if (code === '42804') return (await typeOf(host, expr, columns)) ?? { kind: 'unbound', reason };
  return { kind: KINDS[code] ?? 'unbound', reason: READS[code]?.find(([english]) => english.test(reason))?.[1] ?? reason };
}

/** The server's (English) refusals, said as the DuckDB check says them; other texts are shown as they are. */
const READS: Record<string, Array<[RegExp, string]>> = {
  '0A000': [
    [/subquery/i, 'it contains a subquery'],
    [/set-returning/i, 'it calls a set-returning function (it reads rows, not the record)'],
  ],
  '42803': [[/aggregate/i, 'it calls an aggregate (it reads other records)']],
  '42P20': [[/window/i, 'it calls a window function (it reads other records)']],
  '42P17': [
    [/immutable/i, 'it calls a function whose result its arguments do not decide (such as now(), random() or pg_read_file()); a flow expression must be a function of the record'],
  ],
};

/** SQLSTATE → what kind of refusal it is; any other code is 'unbound' (names or types). */
const KINDS: Record<string, 'syntax' | 'reads'> = {
  '42601': 'syntax', // syntax error
  '0A000': 'reads', // subquery, set-returning function
  '42803': 'reads', // aggregate
  '42P20': 'reads', // window function
  '42P17': 'reads', // not immutable, whole-row variable
  '42P10': 'reads', // system column
  '42P02': 'reads', // parameter
};

/**
 * A value not boolean (or another type mismatch): the expression's type, as a view of it over the
 * record gives it (creating a view evaluates nothing); undefined when that fails too or is boolean.
 */
async function typeOf(host: PostgresProbeHost, expr: string, columns: ColumnInfo[]): Promise<ExpressionProblem | undefined> {
  const q = postgresDialect.quote;
  const record = columns.map((c) => `CAST(NULL AS ${c.type}) AS ${q(c.name)}`).join(', ');
  const type = await host.probe(async () => {
    try {
      await host.run(`CREATE TEMP VIEW ${q(TABLE)} AS SELECT ${spliced(expr)} AS ${q(COLUMN)} FROM (SELECT ${record}) AS ${q(TABLE)}`);
    } catch {
      return undefined;
    }
    const [row] = await host.query(`SELECT format_type(atttypid, atttypmod) AS t FROM pg_attribute WHERE attrelid = to_regclass($1) AND attname = $2`, [
      `pg_temp.${q(TABLE)}`,
      COLUMN,
    ]);
    return row === undefined ? undefined : String(row.t);
  });
  return type === undefined || type === 'boolean' ? undefined : { kind: 'type', type };
}

function sqlState(e: unknown): string {
  const cause = e instanceof QueryError ? e.cause : e;
  return String((cause as { code?: unknown } | undefined)?.code ?? '');
}

/** The server's message, without the name of the device that asked it. */
function engineReason(e: unknown): string {
  const msg = e instanceof QueryError ? e.reason : e instanceof Error ? firstLine(e.message) : String(e);
  return msg.replace(/ in (a )?column generation expressions?$/i, '');
}
