/**
 * What a load has acquired (locks, files, temporary folders, clients, watches), released in the reverse
 * order of acquiring: each setup step that takes something defers its release here at once, so a failure
 * at any later step still releases it, and load() releases everything on every way out.
 */
export class Disposer {
  readonly #releases: Array<() => unknown> = [];
  #released = false;

  /** Registers the release of what was just acquired. */
  defer(release: () => unknown): void {
    if (this.#released) throw new Error('Disposer.defer() after release(); this is a bug');
    this.#releases.push(release);
  }

  /**
   * Runs every release, the last deferred first. A release that throws does not keep the others from
   * running: the first such error is thrown once all have run.
   */
  async release(): Promise<void> {
    this.#released = true;
    let first: { error: unknown } | undefined;
    for (let release = this.#releases.pop(); release; release = this.#releases.pop()) {
      try {
        await release();
      } catch (error) {
        first ??= { error };
      }
    }
    if (first) throw first.error;
  }
}
