import { describe, expect, it } from 'vitest';
import { applyBatches } from '../helpers.js';

describe('apply (smoke)', () => {
  it('closes a version when a tracked column changes', async () => {
    const { rows, results } = await applyBatches({ target: 't', keys: 'id', sequenceBy: 'ts' }, [[{ id: 1, v: 'a', ts: 1 }], [{ id: 1, v: 'b', ts: 2 }]]);
    expect(rows).toEqual([
      { id: 1, v: 'a', ts: 1, __START_AT: 1, __END_AT: 2 },
      { id: 1, v: 'b', ts: 2, __START_AT: 2, __END_AT: null },
    ]);
    expect(results[1]!.versionsClosed).toBe(1);
  });
});
