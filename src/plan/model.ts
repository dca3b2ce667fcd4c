import type { ColumnInfo } from '../dialects/driver.js';
import { ScdError } from '../errors.js';
import { INTERNAL_COLUMN_PREFIX } from '../files/source-keys.js';
import type { ColumnModel } from '../flow/column-model.js';
import { sequenceOf } from '../flow/debezium-positions.js';
import type { Flow } from '../flow/flow.js';
import { closest } from '../flow/validate.js';
import { sourceColumnsOf } from '../typing/staged-types.js';

export type { ColumnModel } from '../flow/column-model.js';

/** Derive the model from the first staged input. */
export function deriveModel(flow: Flow, staged: ColumnInfo[]): ColumnModel {
  const source = sourceColumnsOf(staged);
  const names = source.map((c) => c.name);
  const find = (field: string, name: string): ColumnInfo => {
    const c = source.find((s) => s.name === name);
    if (c) return c;
    const near = closest(name, names);
    throw new ScdError('SOURCE_INVALID', `column "${name}" is not in the source (its columns: ${names.join(', ') || 'none'})`, {
      file: flow.origin,
      field,
      fix: near ? `did you mean "${near}"?` : 'name a column the input has',
    });
  };
  const internal = names.find((n) => n.toLowerCase().startsWith(INTERNAL_COLUMN_PREFIX));
  if (internal)
    throw new ScdError('SOURCE_INVALID', `source column "${internal}" uses the reserved prefix ${INTERNAL_COLUMN_PREFIX}`, {
      file: flow.origin,
      fix: 'rename it in the source, or drop it with exceptColumns',
    });
  const keys = flow.keys.map((k) => find('keys', k));
  const sequenceBy = sequenceOf(flow);
  const seq = sequenceBy.map((s) => find('sequenceBy', s));
  for (const c of flow.exceptColumns ?? []) find('exceptColumns', c);
  for (const c of flow.columns ?? []) find('columns', c);
  const isOutput = (n: string) => flow.keys.includes(n) || (flow.columns ? flow.columns.includes(n) : !(flow.exceptColumns ?? []).includes(n));
  const payload = source.filter((c) => isOutput(c.name) && !flow.keys.includes(c.name));
  const candidates = payload.filter((c) => !sequenceBy.includes(c.name)).map((c) => c.name);
  for (const c of flow.trackHistory ?? []) {
    if (!candidates.includes(c)) {
      const why = sequenceBy.includes(c) ? 'a sequence column is never tracked' : 'it is not an output column';
      throw new ScdError('FLOW_INVALID', `cannot track "${c}": ${why}`, { file: flow.origin, field: 'trackHistory', fix: `remove "${c}"` });
    }
  }
  for (const c of flow.trackHistoryExcept ?? []) if (!payload.some((p) => p.name === c)) find('trackHistoryExcept', c);
  const tracked = flow.trackHistory ? candidates.filter((c) => flow.trackHistory!.includes(c)) : candidates.filter((c) => !(flow.trackHistoryExcept ?? []).includes(c));
  for (const [of, as] of Object.entries(flow.previousValues ?? {})) {
    if (!payload.some((p) => p.name === of)) find(`previousValues.${of}`, of);
    if (!payload.some((p) => p.name === of))
      throw new ScdError('FLOW_INVALID', `cannot keep the previous value of "${of}": it is not an output column`, {
        file: flow.origin,
        field: `previousValues.${of}`,
        fix: `remove "${of}" from previousValues, or keep it in the output`,
      });
    if (source.some((c) => c.name === as))
      throw new ScdError('FLOW_INVALID', `previousValues names "${as}", which is a source column`, {
        file: flow.origin,
        field: `previousValues.${of}`,
        fix: `name the column of previous values otherwise, e.g. previous_${of}`,
      });
  }
  const reserved = reservedNames(flow);
  const clash = [...keys, ...payload].find((c) => reserved.includes(c.name));
  if (clash)
    throw new ScdError('FLOW_INVALID', `source column "${clash.name}" has the name of an output column scdkit adds`, {
      file: flow.origin,
      field: 'startAtColumn',
      fix: 'rename the added column (startAtColumn, endAtColumn, ...) or except the source column',
    });
  return { source, keys, seq, payload, tracked };
}

/** Column names scdkit adds to the target. */
export function reservedNames(flow: Flow): string[] {
  const out = flow.storedAs === 'scd2' ? [flow.startAtColumn, flow.endAtColumn] : [];
  if (flow.isCurrentColumn) out.push(flow.isCurrentColumn);
  if (flow.surrogateKey) out.push(flow.surrogateKey);
  if (flow.deletes === 'tombstone') out.push(flow.deletedColumn);
  out.push(...Object.values(flow.previousValues ?? {}));
  return out;
}

/** Internal names of the sequence parts inside the walk. */
export function seqParts(model: ColumnModel): string[] {
  return model.seq.map((_, i) => `${INTERNAL_COLUMN_PREFIX}s${i}`);
}

/** `a > b` over tuples of sequence parts, left to right. */
export function greater(a: string[], b: string[]): string {
  if (a.length === 1) return `${a[0]} > ${b[0]}`;
  return `(${a[0]} > ${b[0]} OR (${a[0]} = ${b[0]} AND ${greater(a.slice(1), b.slice(1))}))`;
}
