import { describe, expect, it } from 'vitest';
import { commitLabel, commitOfLabel } from '../../src/store/commit-labels.js';
import { standingVersions, versionAfter } from '../../src/store/engine-versions.js';

const label = (n: number, target = 'dim') => commitLabel(target, n);

describe("a Delta target's versions as scdkit commits (store/engine-versions.ts)", () => {
  it('reads the commit number back from its label, and only for its own target', () => {
    expect(commitOfLabel('dim', label(12))).toBe(12);
    expect(commitOfLabel('dim', label(12, 'dim2'))).toBeUndefined();
    expect(commitOfLabel('dim2', label(12, 'dim'))).toBeUndefined();
    expect(commitOfLabel('dim', null)).toBeUndefined();
    expect(commitOfLabel('dim', 'scdkit commit x of dim')).toBeUndefined();
  });

  it('keeps labelled versions, drops unlabelled ones, and drops what a restore undid (and the restore itself)', () => {
    const history = [
      { version: 0, label: null }, // CREATE TABLE before any label
      { version: 1, label: label(1) },
      { version: 2, label: label(2) },
      { version: 3, label: label(3) }, // interrupted commit 3 ...
      { version: 4, label: label(3), restoredTo: 2 }, // ... put back
      { version: 5, label: label(3) }, // commit 3 again
      { version: 6, label: 'someone else' },
      { version: 7, label: label(4) },
    ];
    const standing = standingVersions('dim', history);
    expect(standing).toEqual([
      { commit: 1, engineVersion: 1 },
      { commit: 2, engineVersion: 2 },
      { commit: 3, engineVersion: 5 },
      { commit: 4, engineVersion: 7 },
    ]);
    expect(versionAfter(standing, 3)).toBe(5);
    // A commit that did not write the target stands at the version before it.
    expect(
      versionAfter(
        standingVersions(
          'dim',
          history.filter((h) => h.version !== 5),
        ),
        3,
      ),
    ).toBe(2);
    expect(versionAfter(standing, 0)).toBeUndefined();
  });
});
