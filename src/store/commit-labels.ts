/**
 * The label each engine commit of scdkit commit N carries on an engine whose writes are commits of
 * their own (Delta's `userMetadata`): how an interrupted commit's writes are found
 * (execute/delta/recovery.ts) and how time travel maps an scdkit commit to the engine's versions
 * (engine-versions.ts).
 */
export function commitLabel(target: string, version: number): string {
  return `scdkit commit ${version} of ${target}`;
}

/** The scdkit commit a write labelled `label` belongs to, if it is one of `target`'s. */
export function commitOfLabel(target: string, label: string | null): number | undefined {
  const prefix = 'scdkit commit ';
  const suffix = ` of ${target}`;
  if (!label?.startsWith(prefix) || !label.endsWith(suffix)) return undefined;
  const n = label.slice(prefix.length, label.length - suffix.length);
  return /^[1-9][0-9]*$/.test(n) ? Number(n) : undefined;
}
