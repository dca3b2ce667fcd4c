// The flow every scdkit case uses. updated_at is the sequence; it is excepted from the output (the
// version's __START_AT carries it), as the baseline keeps it only in effective_from/effective_to.
export const TARGET = 'dim';

export const FLOW_INPUT = {
  name: 'bench',
  target: TARGET,
  keys: ['id'],
  sequenceBy: 'updated_at',
  applyAsDeletes: "op = 'D'",
  exceptColumns: ['op', 'updated_at'],
};

/** The flow, built with the defineFlow of the scdkit build under test. */
export function benchFlow(scdkit, database, schema) {
  return scdkit.defineFlow({ ...FLOW_INPUT, database, ...(schema ? { schema } : {}) });
}
