import type { DuckDBQuery } from './duckdb-expression.js';
import { spliced } from '../expression.js';

/**
 * How DuckDB evaluates a flow expression so that a value it cannot take fails that record alone.
 *
 * DuckDB aborts the whole transaction on an error (no savepoint undoes it), so the commit's one
 * set-based statement evaluates each expression inside TRY(): NULL where it failed on the record.
 * Where PostgreSQL and Spark (ANSI) refuse a division by zero, DuckDB yields NULL or infinity
 * silently; the guarded expression makes every zero divisor fail the record too, so every engine
 * tells a division by zero alike. The unguarded expression tells which failure it was: if it holds
 * a value where the guarded one failed, the record divided by zero.
 */

/** The functions whose second argument is a divisor. */
const DIVISIONS = new Set(['/', '//', '%', 'divide', 'mod', 'fmod']);
/** The divisor's stand-in in the guard's template. */
const DIVISOR = '__scd_divisor';
/**
 * A divisor that fails the record where it is zero: the cast of a text that is no number fails
 * like any value that does not convert (TRY catches it; error() is volatile and TRY refuses it).
 */
const GUARD = `SELECT CASE WHEN "${DIVISOR}" = 0 THEN CAST('division by zero ' || CAST("${DIVISOR}" AS VARCHAR) AS UTINYINT) ELSE "${DIVISOR}" END`;

type Node = Record<string, unknown>;

/** `expr` (checked: one boolean expression over the record) with each zero divisor made a failure. */
export async function zeroDivisionGuarded(db: DuckDBQuery, expr: string): Promise<string> {
  const item = await selectItem(db, `SELECT ${spliced(expr)}`);
  const guard = await selectItem(db, GUARD);
  let divided = false;
  const walk = (v: unknown): unknown => {
    if (Array.isArray(v)) return v.map(walk);
    if (v === null || typeof v !== 'object') return v;
    const n = { ...(v as Node) };
    for (const [k, child] of Object.entries(n)) n[k] = walk(child);
    if (n.class === 'FUNCTION' && DIVISIONS.has(String(n.function_name).toLowerCase()) && Array.isArray(n.children) && n.children.length === 2) {
      divided = true;
      const divisor = n.children[1];
      n.children = [n.children[0], substitute(guard, divisor)];
    }
    return n;
  };
  const guarded = walk(item.node) as Node;
  if (!divided) return expr;
  guarded.alias = '';
  item.tree.statements[0]!.node.select_list = [guarded];
  const row = (await db.query(`SELECT json_deserialize_sql(CAST($1 AS JSON)) AS sql`, [JSON.stringify(item.tree)]))[0]!;
  const sql = String(row.sql);
  if (!sql.startsWith('SELECT ')) throw new Error(`DuckDB wrote the guarded expression back as ${sql}`);
  return sql.slice('SELECT '.length);
}

/** The guard template with its stand-in replaced by the divisor. */
function substitute(guard: { node: Node }, divisor: unknown): unknown {
  const walk = (v: unknown): unknown => {
    if (Array.isArray(v)) return v.map(walk);
    if (v === null || typeof v !== 'object') return v;
    const n = v as Node;
    if (n.class === 'COLUMN_REF' && Array.isArray(n.column_names) && n.column_names.length === 1 && n.column_names[0] === DIVISOR) return divisor;
    return Object.fromEntries(Object.entries(n).map(([k, c]) => [k, walk(c)]));
  };
  return walk(guard.node);
}

interface Tree {
  statements: Array<{ node: { select_list: unknown[] } }>;
}

async function selectItem(db: DuckDBQuery, select: string): Promise<{ tree: Tree; node: Node }> {
  const row = (await db.query(`SELECT json_serialize_sql(CAST($1 AS VARCHAR)) AS tree`, [select]))[0]!;
  // A position past 2^53 (DuckDB's "none") does not survive a JS number: positions are only for messages.
  const tree = JSON.parse(String(row.tree), (k, v: unknown) => (k === 'query_location' ? 0 : v)) as Tree & { error?: boolean; error_message?: string };
  if (tree.error) throw new Error(`DuckDB could not parse a checked expression again: ${tree.error_message}`);
  return { tree, node: tree.statements[0]!.node.select_list[0] as Node };
}
