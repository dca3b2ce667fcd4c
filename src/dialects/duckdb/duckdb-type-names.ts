/**
 * One spelling per DuckDB type. DuckDB accepts several names for one type (`TIMESTAMPTZ` and
 * `TIMESTAMP WITH TIME ZONE`, `INT8` and `BIGINT`, `NUMERIC(20,1)` and `DECIMAL(20,1)`), and its
 * catalog answers with one of them while the plan writes another: two types are the same exactly
 * when their canonical spellings are equal. The canonical spelling is the catalog's (what
 * `duckdb_columns().data_type` gives), upper case, a struct's field names without their quotes.
 */

const ALIASES: Record<string, string> = {
  INT8: 'BIGINT',
  LONG: 'BIGINT',
  INT4: 'INTEGER',
  INT: 'INTEGER',
  SIGNED: 'INTEGER',
  INT2: 'SMALLINT',
  SHORT: 'SMALLINT',
  INT1: 'TINYINT',
  INT128: 'HUGEINT',
  UINT8: 'UTINYINT',
  UINT16: 'USMALLINT',
  UINT32: 'UINTEGER',
  UINT64: 'UBIGINT',
  UINT128: 'UHUGEINT',
  FLOAT8: 'DOUBLE',
  'DOUBLE PRECISION': 'DOUBLE',
  FLOAT4: 'FLOAT',
  REAL: 'FLOAT',
  BOOL: 'BOOLEAN',
  LOGICAL: 'BOOLEAN',
  TEXT: 'VARCHAR',
  STRING: 'VARCHAR',
  CHAR: 'VARCHAR',
  BPCHAR: 'VARCHAR',
  NVARCHAR: 'VARCHAR',
  'CHARACTER VARYING': 'VARCHAR',
  CHARACTER: 'VARCHAR',
  BYTEA: 'BLOB',
  BINARY: 'BLOB',
  VARBINARY: 'BLOB',
  NUMERIC: 'DECIMAL',
  DATETIME: 'TIMESTAMP',
  TIMESTAMP_US: 'TIMESTAMP',
  'TIMESTAMP WITHOUT TIME ZONE': 'TIMESTAMP',
  TIMESTAMPTZ: 'TIMESTAMP WITH TIME ZONE',
  TIMETZ: 'TIME WITH TIME ZONE',
  'TIME WITHOUT TIME ZONE': 'TIME',
  BITSTRING: 'BIT',
};

/** The canonical spelling of a DuckDB type (see the file's comment). */
export function canonicalDuckdbType(type: string): string {
  const t = type.trim().replace(/\s+/g, ' ');
  const list = /^(.*)\[(\d*)\]$/s.exec(t);
  if (list) return `${canonicalDuckdbType(list[1]!)}[${list[2]}]`;
  const m = /^([A-Za-z_][A-Za-z0-9_ ]*?)\s*(?:\((.*)\))?$/s.exec(t);
  if (!m) return t.toUpperCase().replace(/"/g, '');
  const base = ALIASES[m[1]!.toUpperCase()] ?? m[1]!.toUpperCase();
  const args = m[2];
  if (base === 'DECIMAL') {
    // DECIMAL is DECIMAL(18,3); DECIMAL(p) is DECIMAL(p,0).
    const [p = '18', s = args === undefined ? '3' : '0'] = (args ?? '')
      .split(',')
      .map((x) => x.trim())
      .filter(Boolean);
    return `DECIMAL(${p},${s})`;
  }
  if (base === 'VARCHAR') return 'VARCHAR'; // a length is accepted and ignored
  if (args === undefined) return base;
  if (base === 'STRUCT' || base === 'UNION') return `${base}(${topLevel(args).map(field).join(', ')})`;
  if (base === 'MAP') return `MAP(${topLevel(args).map(canonicalDuckdbType).join(', ')})`;
  return `${base}(${args.replace(/\s+/g, '').toUpperCase()})`;
}

/** `"a b" TIMESTAMPTZ` → `A B TIMESTAMP WITH TIME ZONE` (names compared without quotes or case). */
function field(text: string): string {
  const m = /^\s*("(?:[^"]|"")*"|\S+)\s+(.+)$/s.exec(text);
  if (!m) return text.trim().toUpperCase();
  const name = m[1]!.startsWith('"') ? m[1]!.slice(1, -1).replace(/""/g, '"') : m[1]!;
  return `${name.toUpperCase()} ${canonicalDuckdbType(m[2]!)}`;
}

/** The comma-separated parts of a type's arguments, outside parentheses and quotes. */
function topLevel(args: string): string[] {
  const parts: string[] = [];
  let depth = 0;
  let quoted = false;
  let start = 0;
  for (let i = 0; i < args.length; i++) {
    const c = args[i];
    if (c === '"') quoted = !quoted;
    else if (quoted) continue;
    else if (c === '(') depth++;
    else if (c === ')') depth--;
    else if (c === ',' && depth === 0) {
      parts.push(args.slice(start, i));
      start = i + 1;
    }
  }
  parts.push(args.slice(start));
  return parts.map((p) => p.trim());
}
