import { LoaderError } from '../shared/errors.js';
import { OutageTracker, probeDelay, type Outage, type OutagePolicy } from './outage.js';

/** What the watch says of an outage: when it starts and when it ends (the CLI's lines, --log json events). */
export type OutageEvent =
  { type: 'endpointDown'; endpoint: string; reason: string; since: string; waitMs: number } | { type: 'endpointBack'; endpoint: string; downMs: number };

export interface EndpointWatchOptions {
  policy: OutagePolicy;
  /** The endpoint as the user knows it: the URL of --endpoint-url, or "DynamoDB in region X". */
  endpoint: string;
  /** Monotonic clock in ms. */
  now: () => number;
  emit: (event: OutageEvent) => void;
  /** Aborted: the batches waiting for the endpoint stop at once (their rows count as not written). */
  signal?: AbortSignal | undefined;
}

type Waiter = (stop: LoaderError | undefined) => void;

/**
 * The I/O side of outages (src/writing/outage.ts): one per load, shared by every batch. Each send asks it
 * first; while the endpoint is down, sends wait, and one at a time is let through as a probe (a real
 * BatchWriteItem: the call that must work), with a doubling wait between probes. The first call answered
 * ends the outage and lets every batch go; once --outage-timeout has passed, every batch is told to stop
 * with ENDPOINT_UNREACHABLE (exit 75), its unsent rows neither written nor rejected.
 */
export class EndpointWatch {
  readonly #o: EndpointWatchOptions;
  readonly #tracker: OutageTracker;
  readonly #waiters: Waiter[] = [];
  #probes = 0;
  #probeTimer: NodeJS.Timeout | undefined;
  /** A probe was let through and has not reported yet. */
  #probeOut = false;
  /** The probe's time came with no batch waiting: the next send goes at once. */
  #probeReady = false;
  #deadline: NodeJS.Timeout | undefined;
  #stopped: LoaderError | undefined;
  #aborted = false;

  constructor(options: EndpointWatchOptions) {
    this.#o = options;
    this.#tracker = new OutageTracker(options.policy);
    // A stop asked for lets the batches in flight finish (docs/OPERATIONS.md, "Stopping"), but none waits for an outage.
    options.signal?.addEventListener(
      'abort',
      () => {
        this.#aborted = true;
        if (this.#tracker.outage) this.#stop(abortedWaiting());
      },
      { once: true },
    );
  }

  now(): number {
    return this.#o.now();
  }

  /** An outage is under way (a batch need not back off: its next send waits here). */
  get down(): boolean {
    return this.#tracker.outage !== undefined || this.#stopped !== undefined;
  }

  /**
   * Before each send: undefined to send at once; otherwise a promise of undefined (send: a probe, or the
   * endpoint is back) or of the error that stops the batch.
   */
  beforeSend(): Promise<LoaderError | undefined> | undefined {
    if (this.#stopped) return Promise.resolve(this.#stopped);
    if (!this.#tracker.outage) return undefined;
    if (this.#probeReady) {
      this.#probeReady = false;
      this.#probeOut = true;
      return undefined;
    }
    return new Promise((resolve) => {
      this.#waiters.push(resolve);
      this.#scheduleProbe();
    });
  }

  /** A call got an answer (any but a 5xx): the endpoint is up. */
  answered(): void {
    const ended = this.#tracker.answered();
    if (!ended || this.#stopped) return;
    this.#clearTimers();
    this.#probes = 0;
    this.#probeOut = false;
    this.#probeReady = false;
    this.#o.emit({ type: 'endpointBack', endpoint: this.#o.endpoint, downMs: Math.max(0, this.#o.now() - ended.since) });
    for (const wake of this.#waiters.splice(0)) wake(undefined);
  }

  /**
   * A call sent at `sentAt` failed with the endpoint's failure `reason`; its batch has had no answer since
   * `failingSince`. Returns the error that stops the batch, or undefined to send again.
   */
  failed(reason: string, sentAt: number, failingSince: number): LoaderError | undefined {
    if (this.#stopped) return this.#stopped;
    const now = this.#o.now();
    const declared = this.#tracker.failed(now, sentAt, reason);
    if (declared) {
      this.#declare(declared);
      return undefined;
    }
    if (this.#tracker.outage) {
      // A probe (or a call sent before the outage) failed: the next probe after a longer wait.
      this.#probeOut = false;
      this.#scheduleProbe();
      return undefined;
    }
    if (this.#tracker.batchExpired(now, failingSince)) {
      // The load stops: every other batch stops too, rather than wait for an outage no one will see out.
      this.#stop(this.#unreachable(reason, failingSince));
      return this.#stopped;
    }
    return undefined;
  }

  /** Ends the watch: timers cleared (the load is over). */
  close(): void {
    this.#clearTimers();
  }

  #declare(outage: Outage): void {
    const { policy, endpoint } = this.#o;
    this.#o.emit({ type: 'endpointDown', endpoint, reason: outage.reason, since: this.#wallClock(outage.since), waitMs: policy.timeoutMs });
    if (this.#aborted) return this.#stop(abortedWaiting());
    // Not unref'd (nor the probes' timer): batches waiting on promises alone would let the process exit mid-load.
    this.#deadline = setTimeout(() => {
      const current = this.#tracker.outage;
      if (current) this.#stop(this.#unreachable(current.reason, current.since, true));
    }, policy.timeoutMs);
  }

  #scheduleProbe(): void {
    if (this.#probeTimer || this.#probeOut || this.#probeReady || this.#stopped || !this.#tracker.outage) return;
    const wait = probeDelay(this.#probes++, this.#o.policy);
    this.#probeTimer = setTimeout(() => {
      this.#probeTimer = undefined;
      const probe = this.#waiters.shift();
      if (probe) {
        this.#probeOut = true;
        probe(undefined);
      } else this.#probeReady = true;
    }, wait);
  }

  #stop(error: LoaderError): void {
    if (this.#stopped) return;
    this.#stopped = error;
    this.#clearTimers();
    for (const wake of this.#waiters.splice(0)) wake(error);
  }

  #clearTimers(): void {
    if (this.#probeTimer) clearTimeout(this.#probeTimer);
    if (this.#deadline) clearTimeout(this.#deadline);
    this.#probeTimer = undefined;
    this.#deadline = undefined;
  }

  #unreachable(reason: string, since: number, waited = false): LoaderError {
    const seconds = formatSeconds(this.#o.policy.timeoutMs);
    const code = reason.startsWith('credentials') ? 'CREDENTIALS_UNAVAILABLE' : 'ENDPOINT_UNREACHABLE';
    return new LoaderError(
      code,
      `${waited ? 'the endpoint' : 'calls to the endpoint'} ${this.#o.endpoint} ${waited ? 'could not be reached' : 'kept failing'} (${reason}) since ${this.#wallClock(since)}; ` +
        `waited ${seconds} s (--outage-timeout); no row was rejected for it: rows not written are counted as not written, and with --checkpoint the same command resumes them`,
    );
  }

  /** A monotonic time as the wall clock's ISO time. */
  #wallClock(t: number): string {
    return new Date(Date.now() - (this.#o.now() - t)).toISOString();
  }
}

const abortedWaiting = () => new LoaderError('ABORTED', 'stopped on request while waiting for the endpoint; the rows not written are counted as not written');

function formatSeconds(ms: number): string {
  const s = ms / 1000;
  return Number.isInteger(s) ? String(s) : s.toFixed(1);
}
