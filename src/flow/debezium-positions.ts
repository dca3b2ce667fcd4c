import { ScdError } from '../errors.js';
import type { Flow } from '../flow/flow.js';

/**
 * Where a Debezium event stands in its connector's log: the fields of `source` that break ties of
 * `ts_ms`, and the columns they become in the flattened row (docs/FLOWS.md "Debezium positions").
 * Invariants: a value is copied as written (integers as their digits, texts as their JSON
 * strings), never through a JavaScript number; every part compares in its own type, left to right.
 */
export interface PositionPart {
  /** The field of `source`. */
  field: string;
  /** The flattened row's column. */
  column: string;
  /** integer: a JSON integer or a string of digits (an integer column); text: a JSON string. */
  kind: 'integer' | 'text';
  /** Where the record has no such field, this field of `source` stands for it. */
  orElse?: string;
}

export interface Connector {
  name: string;
  parts: PositionPart[];
}

export const CONNECTORS: Connector[] = [
  { name: 'PostgreSQL', parts: [{ field: 'lsn', column: '_lsn', kind: 'integer' }] },
  // Binlog file names (mysql-bin.000003) are numbered with a fixed width: they compare as text.
  {
    name: 'MySQL',
    parts: [
      { field: 'file', column: '_file', kind: 'text' },
      { field: 'pos', column: '_pos', kind: 'integer' },
    ],
  },
  // LSNs are fixed-width hex text (0000002b:000001a0:0002). Changes of one transaction share its
  // commit LSN, which orders transactions; the change LSN orders the changes inside one. A
  // snapshot read has no change LSN: its commit LSN (the snapshot's position) stands for it.
  {
    name: 'SQL Server',
    parts: [
      { field: 'commit_lsn', column: '_commit_lsn', kind: 'text' },
      { field: 'change_lsn', column: '_change_lsn', kind: 'text', orElse: 'commit_lsn' },
    ],
  },
  // ts_ms has whole seconds; ord numbers the events inside one.
  { name: 'MongoDB', parts: [{ field: 'ord', column: '_ord', kind: 'integer' }] },
  { name: 'Oracle', parts: [{ field: 'scn', column: '_scn', kind: 'integer' }] },
];

/** Columns a Debezium envelope adds to the row it carries. */
export const DEBEZIUM_COLUMNS = { op: '_op', tsMs: '_ts_ms' } as const;

/** The position columns of every connector. */
export const POSITION_COLUMNS: string[] = CONNECTORS.flatMap((c) => c.parts.map((p) => p.column));

/** The connectors whose position columns are among `columns`. */
function connectorsIn(columns: string[]): Connector[] {
  return CONNECTORS.filter((c) => c.parts.some((p) => columns.includes(p.column)));
}

/**
 * A Debezium flow's sequence and implied exceptColumns, for the columns of its target's source:
 * those of the input that creates the target, and after that the stored model's (the flattening
 * writes only the positions a target has, so they never change). The default sequence is `_ts_ms`
 * alone where no record carries a position, else `_ts_ms` then the connector's position parts.
 * Other flows are returned as they are.
 */
export function settleDebezium(flow: Flow, columns: string[]): Flow {
  if (flow.source?.format !== 'debezium') return flow;
  const positions = POSITION_COLUMNS.filter((c) => columns.includes(c));
  let sequenceBy = flow.sequenceBy;
  if (sequenceBy === 'debezium') {
    const found = connectorsIn(columns);
    if (found.length > 1)
      throw new ScdError(
        'SOURCE_INVALID',
        `the records carry the log positions of ${found.length} connectors (${found.map((c) => `${c.name}: ${c.parts.map((p) => `source.${p.field}`).join(', ')}`).join('; ')})`,
        { file: flow.origin, field: 'sequenceBy', fix: "give each connector's events their own flow, or set sequenceBy" },
      );
    sequenceBy = [DEBEZIUM_COLUMNS.tsMs, ...(found[0]?.parts.map((p) => p.column) ?? [])];
  }
  // Envelope columns are not output columns unless listed in `columns` (validate.ts excepts _op
  // and _ts_ms; the positions a target has are known only here).
  const except = flow.exceptColumns ?? [];
  const exceptColumns = flow.columns ? flow.exceptColumns : [...except, ...positions.filter((c) => !except.includes(c))];
  return { ...flow, sequenceBy, exceptColumns: exceptColumns?.length ? exceptColumns : undefined };
}

/** The sequence columns of a settled flow (one whose sequence its records decided). */
export function sequenceOf(flow: Flow): string[] {
  if (flow.sequenceBy === 'debezium') throw new Error('internal: a Debezium flow is used before its records decided its sequence (settleDebezium)');
  return flow.sequenceBy;
}
