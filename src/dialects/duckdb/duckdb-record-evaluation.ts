import { spliced } from '../expression.js';
import type { DuckDBQuery } from './duckdb-expression.js';

/**
 * How DuckDB evaluates a flow expression so that a value it cannot take fails that record alone.
 *
 * DuckDB aborts the whole transaction on an error (no savepoint undoes it), so the commit's one
 * set-based statement evaluates each expression inside TRY(): NULL where it failed on the record.
 * Where PostgreSQL and Spark (ANSI) refuse a division by zero, DuckDB yields NULL or infinity
 * silently; the guarded expression makes every zero divisor fail the record too, so every engine
 * tells a division by zero alike. The unguarded expression tells which failure it was: if it holds
 * a value where the guarded one failed, the record divided by zero.
 *
 * DuckDB evaluates both sides of AND and OR on every record, where PostgreSQL stops at the first
 * side that decides; so a guard written first (`d <> 0 AND 100 / d > 10`) would not guard. Each
 * AND and OR is made to stop there too: its later sides are only evaluated where the earlier ones
 * leave the result open (a CASE evaluates a branch only for the records that take it).
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

/** `a AND b` that evaluates b only where a is not false; `a OR b`, only where a is not true. */
const AND = `SELECT CASE WHEN NOT coalesce("__scd_a", true) THEN false ELSE "__scd_a" AND "__scd_b" END`;
const OR = `SELECT CASE WHEN coalesce("__scd_a", false) THEN true ELSE "__scd_a" OR "__scd_b" END`;

type Node = Record<string, unknown>;

/**
 * `expr` (checked: one boolean expression over the record) with each zero divisor made a failure
 * and each AND and OR stopping at the first side that decides.
 */
export async function recordSafeForm(db: DuckDBQuery, expr: string): Promise<string> {
  const item = await selectItem(db, `SELECT ${spliced(expr)}`);
  const guard = await template(db, GUARD);
  const and = await template(db, AND);
  const or = await template(db, OR);
  let rewritten = false;
  const walk = (v: unknown): unknown => {
    if (Array.isArray(v)) return v.map(walk);
    if (v === null || typeof v !== 'object') return v;
    const n = { ...(v as Node) };
    for (const [k, child] of Object.entries(n)) n[k] = walk(child);
    if (n.class === 'FUNCTION' && DIVISIONS.has(String(n.function_name).toLowerCase()) && Array.isArray(n.children) && n.children.length === 2) {
      rewritten = true;
      const divisor = n.children[1];
      n.children = [n.children[0], substitute(guard, { [DIVISOR]: divisor })];
    }
    if (n.class === 'CONJUNCTION' && Array.isArray(n.children) && n.children.length >= 2) {
      rewritten = true;
      const template = n.type === 'CONJUNCTION_AND' ? and : n.type === 'CONJUNCTION_OR' ? or : undefined;
      if (!template) return n;
      // a AND b AND c: a AND (b AND c), each level stopping where its first side decides.
      const [first, ...rest] = n.children as unknown[];
      const second = rest.length === 1 ? rest[0] : conjunctionOf(template, rest);
      return substitute(template, { __scd_a: first, __scd_b: second });
    }
    return n;
  };
  const guarded = walk(item.node) as Node;
  // Nothing to guard: the expression as written.
  if (!rewritten) return expr;
  guarded.alias = '';
  item.tree.statements[0]!.node.select_list = [guarded];
  const row = (await db.query(`SELECT json_deserialize_sql(CAST($1 AS JSON)) AS sql`, [JSON.stringify(item.tree)]))[0]!;
  const sql = String(row.sql);
  if (!sql.startsWith('SELECT ')) throw new Error(`DuckDB wrote the guarded expression back as ${sql}`);
  return sql.slice('SELECT '.length);
}

/** The later sides of an n-ary AND or OR as one of the same kind, stopping alike. */
function conjunctionOf(template: { node: Node }, sides: unknown[]): unknown {
  const [first, ...rest] = sides;
  const second = rest.length === 1 ? rest[0] : conjunctionOf(template, rest);
  return substitute(template, { __scd_a: first, __scd_b: second });
}

/** A template with its stand-in columns replaced by the nodes given. */
function substitute(template: { node: Node }, nodes: Record<string, unknown>): unknown {
  const walk = (v: unknown): unknown => {
    if (Array.isArray(v)) return v.map(walk);
    if (v === null || typeof v !== 'object') return v;
    const n = v as Node;
    if (n.class === 'COLUMN_REF' && Array.isArray(n.column_names) && n.column_names.length === 1 && String(n.column_names[0]) in nodes) return nodes[String(n.column_names[0])];
    return Object.fromEntries(Object.entries(n).map(([k, c]) => [k, walk(c)]));
  };
  const node = walk(template.node) as Node;
  return { ...node, alias: '' };
}

/**
 * The templates' parse trees, parsed once per connection (the same for every database, but kept
 * per connection so that what a connection is sent does not depend on what others parsed before).
 */
const templatesOf = new WeakMap<DuckDBQuery, Map<string, { tree: Tree; node: Node }>>();

async function template(db: DuckDBQuery, select: string): Promise<{ tree: Tree; node: Node }> {
  let templates = templatesOf.get(db);
  if (!templates) {
    templates = new Map();
    templatesOf.set(db, templates);
  }
  let parsed = templates.get(select);
  if (!parsed) {
    parsed = await selectItem(db, select);
    templates.set(select, parsed);
  }
  return parsed;
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
