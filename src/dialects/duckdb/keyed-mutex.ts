/**
 * An in-process async mutex per key: `acquire(key)` resolves once every earlier holder of that key
 * has released it, in the order they asked (first come, first served). Keys are independent.
 * A key nobody holds or waits for keeps no state.
 */
export class KeyedMutex {
  /** Per key: settles when the last holder or waiter so far has released it. */
  private readonly tails = new Map<string, Promise<void>>();

  /** Wait for the key; the returned release (idempotent) hands it to the next waiter. */
  async acquire(key: string): Promise<() => void> {
    const before = this.tails.get(key) ?? Promise.resolve();
    let open!: () => void;
    const mine = new Promise<void>((resolve) => (open = resolve));
    const tail = before.then(() => mine);
    this.tails.set(key, tail);
    await before;
    return this.releaser(key, tail, open);
  }

  /** The key at once if nobody holds or waits for it (its release), else undefined. */
  tryAcquire(key: string): (() => void) | undefined {
    if (this.tails.has(key)) return undefined;
    let open!: () => void;
    const tail = new Promise<void>((resolve) => (open = resolve));
    this.tails.set(key, tail);
    return this.releaser(key, tail, open);
  }

  private releaser(key: string, tail: Promise<void>, open: () => void): () => void {
    let released = false;
    return () => {
      if (released) return;
      released = true;
      open();
      if (this.tails.get(key) === tail) this.tails.delete(key);
    };
  }
}
