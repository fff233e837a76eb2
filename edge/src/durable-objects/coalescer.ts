// Runs a batch operation one at a time, gathering everything that arrives
// while one runs into the next: under load each database round trip carries
// many items instead of one, and when idle an item goes at once.

export class Coalescer<T> {
  private waiting: { items: T[]; settle: { resolve(): void; reject(e: unknown): void }[] } = { items: [], settle: [] };
  private running = false;

  /** @param flush the batch operation; never called with an empty batch, never twice at once */
  constructor(private readonly flush: (items: T[]) => Promise<void>) {}

  /** Resolves once the batch holding `items` has been flushed (rejects with its error). */
  add(items: T[]): Promise<void> {
    return new Promise<void>((resolve, reject) => {
      this.waiting.items.push(...items);
      this.waiting.settle.push({ resolve, reject });
      if (!this.running) void this.drain();
    });
  }

  private async drain() {
    this.running = true;
    while (this.waiting.settle.length) {
      const batch = this.waiting;
      this.waiting = { items: [], settle: [] };
      try {
        if (batch.items.length) await this.flush(batch.items);
        for (const s of batch.settle) s.resolve();
      } catch (e) {
        for (const s of batch.settle) s.reject(e);
      }
    }
    this.running = false;
  }
}
