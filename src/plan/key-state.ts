import type { Dialect } from '../dialects/dialect.js';
import type { ColumnInfo } from '../dialects/driver.js';
import { INTERNAL_COLUMN_PREFIX } from '../files/source-keys.js';
import type { StoreNames } from '../store/names.js';
import type { ColumnModel } from './model.js';

/**
 * The key state (a stored table of the target): per key, the sequence of its last applied event,
 * part by part, and whether the key is live. It tells a commit which keys are fast (every new
 * event after everything applied) without reading the event log (keys-sql.ts).
 */
export const LIVE = `${INTERNAL_COLUMN_PREFIX}live`;
/** The state's column for part `i` of the key's last sequence. */
export const lastPart = (i: number) => `${INTERNAL_COLUMN_PREFIX}l${i}`;

export function stateColumns(model: ColumnModel, d: Dialect): ColumnInfo[] {
  return [...model.keys, ...model.seq.map((s, i) => ({ name: lastPart(i), type: s.type })), { name: LIVE, type: d.types.bool }];
}

export function createStateSql(model: ColumnModel, d: Dialect, names: StoreNames): string {
  return d.createTable(
    names.state,
    stateColumns(model, d)
      .map((c) => `${d.quote(c.name)} ${c.type}`)
      .join(', '),
  );
}
