import type { ColumnInfo } from '../dialects/driver.js';

/**
 * The columns of a flow, decided once from the first input and stored with the flow
 * (docs/TYPES.md): later inputs are cast to these types.
 */
export interface ColumnModel {
  /** Every source column, typed: the event log keeps all of them, so a rebuild can change the flow. */
  source: ColumnInfo[];
  keys: ColumnInfo[];
  /** Sequence parts, compared left to right. */
  seq: ColumnInfo[];
  /** Output columns other than keys, in source order (includes kept sequence columns). */
  payload: ColumnInfo[];
  /** Names of the payload columns whose change opens a new version. */
  tracked: string[];
}
