import { LoaderError, bug } from '../shared/errors.js';

/**
 * Why a load is stopping. The first failure wins: whatever fails after it (a batch cut short, a file
 * that cannot be closed) is a consequence, and the load reports the cause. An abort signal asks for a
 * stop without being a failure.
 */
export class LoadStop {
  #error: LoaderError | undefined;
  readonly #signal: AbortSignal | undefined;
  /** Whether the abort counted, fixed once the load has settled (see settle()). */
  #settledAborted: boolean | undefined;

  constructor(signal?: AbortSignal) {
    this.#signal = signal;
  }

  /** The load's error: the first failure recorded. */
  get error(): LoaderError | undefined {
    return this.#error;
  }

  get failed(): boolean {
    return this.#error !== undefined;
  }

  /** The caller asked the load to stop (SIGINT, --stop-timeout). */
  get aborted(): boolean {
    return this.#settledAborted ?? this.#signal?.aborted === true;
  }

  /**
   * Every batch has settled and the checkpoint is about to record how the load ended: a signal after
   * this point (Ctrl-C a moment after the last write, a caller aborting on the final progress event)
   * stops nothing, so it must not turn a load its checkpoint calls complete into an aborted one.
   */
  settle(): void {
    this.#settledAborted ??= this.#signal?.aborted === true;
  }

  /** Failed or asked to stop: read no further, hand out no more held rows. */
  get stopping(): boolean {
    return this.failed || this.aborted;
  }

  /** Records a failure unless one is recorded already; anything but a LoaderError is a bug, said so with `context`. */
  fail(error: unknown, context = 'unexpected failure'): void {
    if (this.#error) return;
    this.#error = error instanceof LoaderError ? error : bug(`${context}: ${(error as Error | undefined)?.message ?? String(error)}`);
  }
}
