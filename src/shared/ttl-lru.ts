// A bounded map whose entries expire: the least recently used goes when it is full, any entry once its time
// is up. For caches of secrets that must not outlive a revocation by more than the lifetime.
export class TtlLru<K, V> {
  readonly #entries = new Map<K, { value: V; expires: number }>();
  readonly #ttlMs: number;
  readonly #max: number;
  readonly #now: () => number;
  hits = 0;
  misses = 0;

  constructor(options: { ttlMs: number; max: number; now?: () => number }) {
    this.#ttlMs = options.ttlMs;
    this.#max = options.max;
    this.#now = options.now ?? Date.now;
  }

  get(key: K): V | undefined {
    const entry = this.#entries.get(key);
    if (entry && entry.expires > this.#now()) {
      // most recently used last: a Map keeps insertion order
      this.#entries.delete(key);
      this.#entries.set(key, entry);
      this.hits++;
      return entry.value;
    }
    if (entry) this.#entries.delete(key);
    this.misses++;
    return undefined;
  }

  set(key: K, value: V): void {
    this.#entries.delete(key);
    this.#entries.set(key, { value, expires: this.#now() + this.#ttlMs });
    while (this.#entries.size > this.#max) this.#entries.delete(this.#entries.keys().next().value as K);
  }

  /** drops every entry `drop` picks */
  deleteWhere(drop: (key: K, value: V) => boolean): void {
    for (const [key, entry] of this.#entries) if (drop(key, entry.value)) this.#entries.delete(key);
  }
}
