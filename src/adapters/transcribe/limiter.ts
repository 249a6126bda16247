/** A counting semaphore: at most `size` tasks run at once, the others wait in order. */
export class Limiter {
  private running = 0;
  private readonly waiting: (() => void)[] = [];
  private readonly size: number;

  constructor(size: number) {
    this.size = Math.max(1, size);
  }

  /** Runs `task` when a place is free. */
  async run<T>(task: () => Promise<T>): Promise<T> {
    // A finishing task hands its place to the first waiter, so no newcomer can slip in between.
    if (this.running >= this.size) await new Promise<void>((resolve) => this.waiting.push(resolve));
    else this.running++;
    try {
      return await task();
    } finally {
      const next = this.waiting.shift();
      if (next) next();
      else this.running--;
    }
  }
}
