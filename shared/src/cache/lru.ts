// A bounded map for per-isolate (or per-process) caches: once full, the
// least recently used entry makes room. Clearing everything at a size cap
// would drop the hot entries together with the cold ones.

/**
 * @example
 * const ids = new LruCache<string, DurableObjectId>(10_000);
 * const id = ids.get(name) ?? ids.set(name, namespace.idFromName(name));
 */
export class LruCache<K, V> {
  private readonly entries = new Map<K, V>();

  constructor(readonly capacity: number) {
    if (!(capacity >= 1)) throw new RangeError('LruCache capacity must be at least 1');
  }

  get size(): number {
    return this.entries.size;
  }

  /** The value, now the most recently used; undefined when absent. */
  get(key: K): V | undefined {
    const value = this.entries.get(key);
    if (value !== undefined) {
      // Map keeps insertion order: re-inserting moves the key to the young end.
      this.entries.delete(key);
      this.entries.set(key, value);
    }
    return value;
  }

  /** Stores the value, evicting the least recently used entry when full; returns the value. */
  set(key: K, value: V): V {
    if (this.entries.has(key)) this.entries.delete(key);
    else if (this.entries.size >= this.capacity) this.entries.delete(this.entries.keys().next().value as K);
    this.entries.set(key, value);
    return value;
  }

  delete(key: K): boolean {
    return this.entries.delete(key);
  }
}
