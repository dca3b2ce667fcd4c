/**
 * Wait until every promise has ended, then throw the first failure (in the order given) or
 * return their values: work started at once is never left running behind an error.
 */
export async function allEnded<T extends readonly unknown[]>(promises: { readonly [K in keyof T]: Promise<T[K]> }): Promise<T> {
  const ended = await Promise.allSettled(promises as readonly Promise<unknown>[]);
  const failed = ended.find((r): r is PromiseRejectedResult => r.status === 'rejected');
  if (failed) throw failed.reason;
  return ended.map((r) => (r as PromiseFulfilledResult<unknown>).value) as unknown as T;
}
