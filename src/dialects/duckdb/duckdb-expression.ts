import { firstLine, QueryError } from '../../errors.js';
import type { ColumnInfo, Row } from '../driver.js';
import { type ExpressionProblem, spliced } from '../expression.js';
import { duckdbDialect } from './duckdb-dialect.js';

/** The little of the driver the check needs (each call one statement, its values bound). */
export interface DuckDBQuery {
  query(sql: string, params?: unknown[]): Promise<Row[]>;
}

/** The alias of the checked expression, and of the record it is bound against. */
const PROBE = '__scd_probe';
const RECORD = '__scd_record';

/** The node classes of DuckDB's parse tree that are expressions over a row and nothing more. */
const EXPRESSION_CLASSES = new Set(['BETWEEN', 'CASE', 'CAST', 'COLLATE', 'COLUMN_REF', 'COMPARISON', 'CONJUNCTION', 'CONSTANT', 'FUNCTION', 'LAMBDA', 'OPERATOR']);
/** Parse-tree nodes that are queries or tables (only a subquery holds them; refused wherever found). */
const QUERY_NODES = new Set([
  'SELECT_NODE',
  'SET_OPERATION_NODE',
  'RECURSIVE_CTE_NODE',
  'CTE_NODE',
  'BASE_TABLE',
  'TABLE_FUNCTION',
  'JOIN',
  'SUBQUERY',
  'EXPRESSION_LIST',
  'PIVOT',
  'SHOW_REF',
  'COLUMN_DATA',
  'DELIM_GET',
]);
/**
 * Functions whose result is the session's, the engine's or the clock's, not their arguments',
 * that duckdb_functions() lists as CONSISTENT or as macros of constant bodies. Besides these, every
 * function only in the pg_catalog schema (has_table_privilege, pg_get_viewdef, ...) reads the catalog.
 */
const SESSION_STATE = new Set([
  'current_setting',
  'getvariable',
  'version',
  'current_localtime',
  'current_localtimestamp',
  'current_user',
  'current_role',
  'session_user',
  'user',
  'current_catalog',
  'current_database',
  'current_schema',
  'current_schemas',
  'current_query',
  'in_search_path',
]);
/** Macros call macros; deeper than this is refused rather than followed. */
const MAX_MACRO_DEPTH = 8;

interface FunctionCall {
  name: string;
  schema: string;
  operator: boolean;
  /** Written as a column name (no parentheses): a call only when a function has that name. */
  bare?: boolean;
}

/**
 * DuckDB's verdict on a flow expression, from its own parser (json_serialize_sql: the parse tree
 * of `SELECT (expr\n) AS probe`, given as a bound value, so the text is never run) and binder
 * (DESCRIBE of the expression over a record of the columns' types):
 * - exactly one statement, a SELECT of one item and nothing else (no FROM, WHERE, ...);
 * - every node of the item an expression class: no subquery, window, parameter or `*`;
 * - every function a scalar one whose result its arguments decide (duckdb_functions(): stability
 *   CONSISTENT, no side effects), no aggregate or table function; a macro's body is checked alike;
 * - the binder resolves it over the record's columns alone, to BOOLEAN.
 */
export async function checkDuckDBExpression(db: DuckDBQuery, expr: string, columns: ColumnInfo[]): Promise<ExpressionProblem | undefined> {
  const q = duckdbDialect.quote;
  const tree = await parse(db, `SELECT ${spliced(expr)} AS ${q(PROBE)}`);
  if ('problem' in tree) return tree.problem;
  const item = tree.item;
  if (item.alias !== PROBE) return { kind: 'syntax', reason: 'it is more than one expression' };
  const problem = await checkTree(db, item, new Set(columns.map((c) => c.name.toLowerCase())), 0);
  if (problem) return problem;
  const record = columns.map((c) => `CAST(NULL AS ${c.type}) AS ${q(c.name)}`).join(', ');
  let type: string;
  try {
    const rows = await db.query(`DESCRIBE SELECT ${spliced(expr)} AS ${q(PROBE)} FROM (SELECT ${record}) AS ${q(RECORD)}`);
    type = String(rows[0]?.column_type);
  } catch (e) {
    return { kind: 'unbound', reason: engineReason(e) };
  }
  return type === 'BOOLEAN' ? undefined : { kind: 'type', type };
}

type Node = Record<string, unknown>;

/** The one select item of `select`, or why the parser does not give exactly that. */
async function parse(db: DuckDBQuery, select: string): Promise<{ item: Node } | { problem: ExpressionProblem }> {
  const row = (await db.query(`SELECT json_serialize_sql(CAST($1 AS VARCHAR)) AS tree`, [select]))[0]!;
  const tree = JSON.parse(String(row.tree)) as { error?: boolean; error_message?: string; statements?: Array<{ node: Node }> };
  const syntax = (reason: string) => ({ problem: { kind: 'syntax' as const, reason } });
  if (tree.error) {
    // Only a SELECT serializes: a second statement of another kind is this error.
    if (/only select statements/i.test(tree.error_message ?? '')) return syntax('it holds more than one statement');
    return syntax(firstLine(tree.error_message ?? 'the parser refused it'));
  }
  const statements = tree.statements ?? [];
  if (statements.length !== 1) return syntax('it holds more than one statement');
  const node = statements[0]!.node;
  const list = node.select_list as Node[] | undefined;
  const from = node.from_table as Node | undefined;
  const empty = (v: unknown) => v === null || v === undefined || (Array.isArray(v) && v.length === 0);
  const one =
    node.type === 'SELECT_NODE' &&
    list?.length === 1 &&
    from?.type === 'EMPTY' &&
    ['where_clause', 'having', 'qualify', 'sample', 'group_expressions', 'group_sets', 'modifiers'].every((k) => empty(node[k])) &&
    empty((node.cte_map as { map?: unknown[] } | undefined)?.map) &&
    node.aggregate_handling === 'STANDARD_HANDLING';
  return one ? { item: list[0]! } : syntax('it is more than one expression');
}

/**
 * Walk an expression tree: every node an expression class, every function a deterministic scalar
 * (or a macro whose body is one). `columns`: the record's columns (lower case), for qualified
 * names; undefined inside a macro body (its names are its parameters).
 */
async function checkTree(db: DuckDBQuery, root: Node, columns: Set<string> | undefined, depth: number): Promise<ExpressionProblem | undefined> {
  const calls: FunctionCall[] = [];
  let problem: ExpressionProblem | undefined;
  const reads = (reason: string) => (problem ??= { kind: 'reads', reason });
  const visit = (v: unknown): void => {
    if (problem) return;
    if (Array.isArray(v)) {
      v.forEach(visit);
      return;
    }
    if (v === null || typeof v !== 'object') return;
    const n = v as Node;
    if (typeof n.type === 'string' && QUERY_NODES.has(n.type)) return void reads('it contains a subquery');
    if (typeof n.class === 'string') {
      const cls = n.class;
      if (cls === 'SUBQUERY') return void reads('it contains a subquery');
      if (cls === 'WINDOW') return void reads(`it calls the window function ${String(n.function_name)}() (it reads other records)`);
      if (cls === 'PARAMETER') return void reads('it contains a parameter');
      if (cls === 'STAR') return void reads('it contains * or COLUMNS(...)');
      if (!EXPRESSION_CLASSES.has(cls)) return void reads(`it contains ${cls.toLowerCase().replace(/_/g, ' ')}`);
      if (cls === 'COLUMN_REF' && columns) {
        const names = (n.column_names as string[] | undefined) ?? [];
        // a.b is a field of column a; anything else names a table, which the record is not.
        if (names.length > 1 && !columns.has(names[0]!.toLowerCase())) {
          problem = { kind: 'unbound', reason: `"${names.join('.')}" is not a column of the record (name its columns without a table)` };
          return;
        }
        // A bare name the record does not have is bound as a call of that name, if there is one
        // (current_user, current_date): checked as the call it is.
        if (names.length === 1 && !columns.has(names[0]!.toLowerCase())) calls.push({ name: names[0]!, schema: '', operator: false, bare: true });
      }
      if (cls === 'FUNCTION') {
        if (n.filter || n.distinct || ((n.order_bys as { orders?: unknown[] } | undefined)?.orders?.length ?? 0) > 0)
          return void reads(`it calls ${String(n.function_name)}() as an aggregate (it reads other records)`);
        calls.push({ name: String(n.function_name), schema: String(n.schema ?? ''), operator: n.is_operator === true });
      }
    }
    for (const child of Object.values(n)) visit(child);
  };
  visit(root);
  if (problem) return problem;
  for (const call of dedupe(calls)) {
    const p = await checkFunction(db, call, depth);
    if (p) return p;
  }
  return undefined;
}

/** A function is deterministic and scalar, or a macro whose body is checked the same way. */
async function checkFunction(db: DuckDBQuery, call: FunctionCall, depth: number): Promise<ExpressionProblem | undefined> {
  const rows = await db.query(
    `SELECT function_type AS kind, stability, has_side_effects AS effects, macro_definition AS body, schema_name AS schema FROM duckdb_functions()
     WHERE lower(function_name) = lower($1) AND ($2 = '' OR lower(schema_name) = lower($2))`,
    [call.name, call.schema],
  );
  const shown = call.operator ? `the operator ${call.name}` : call.bare ? call.name : `${call.name}()`;
  // An operator the catalog does not list (||) is the binder's to resolve; a named function is
  // only called when the catalog shows what it is (and never loads an extension to find out).
  if (!rows.length) return call.operator || call.bare ? undefined : { kind: 'unbound', reason: `it calls ${shown}, which this database does not have` };
  const reads = (why: string): ExpressionProblem => ({ kind: 'reads', reason: `it calls ${shown}, ${why}` });
  // The catalog calls these CONSISTENT (or their macro bodies are constants), but what they give
  // is the session's, the build's or the catalog's, never the record's.
  if (SESSION_STATE.has(call.name.toLowerCase()) || (rows.length && rows.every((r) => r.schema === 'pg_catalog')))
    return reads('which reads the session, the engine or its catalog, not the record (a flow expression must be a function of the record)');
  if (rows.some((r) => r.kind === 'scalar' && (r.stability !== 'CONSISTENT' || r.effects === true)))
    return reads('whose result its arguments do not decide (a flow expression must be a function of the record)');
  // A bare name is a call of no arguments at most (or a lambda's parameter): no aggregate or table function.
  if (call.bare) return undefined;
  if (rows.some((r) => r.kind === 'aggregate')) return reads('an aggregate (it reads other records)');
  if (!rows.some((r) => r.kind === 'scalar' || r.kind === 'macro')) return reads('a table function (it reads rows, not the record)');
  for (const r of rows.filter((r) => r.kind === 'macro')) {
    if (depth >= MAX_MACRO_DEPTH) return reads('a macro nested too deeply to check');
    const body = await parse(db, `SELECT ${spliced(String(r.body))}`);
    const p = 'problem' in body ? body.problem : await checkTree(db, body.item, undefined, depth + 1);
    if (p) return p.kind === 'reads' || p.kind === 'syntax' ? reads(`a macro that ${p.kind === 'reads' ? p.reason.replace(/^it /, '') : 'cannot be checked'}`) : p;
  }
  return undefined;
}

function dedupe(calls: FunctionCall[]): FunctionCall[] {
  const seen = new Map<string, FunctionCall>();
  for (const c of calls) seen.set(`${c.schema.toLowerCase()}.${c.name.toLowerCase()}`, c);
  return [...seen.values()];
}

function engineReason(e: unknown): string {
  const msg = e instanceof QueryError ? e.reason : e instanceof Error ? firstLine(e.message) : String(e);
  return msg.replace(/^[A-Za-z ]+Error: /, '');
}
