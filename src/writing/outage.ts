/**
 * An outage is not bad data. A call that got no answer (connection refused or reset, a
 * DNS failure, a timeout) or an answer of 5xx says nothing about its rows: it is the endpoint's failure.
 * When every call fails so for a while, the endpoint is down: the load stops sending, says so, probes it
 * and waits a bounded time (--outage-timeout) for it. Its rows are never rejected for it: they are
 * written once it is back, or the load stops with exit 75 and they count as not written (a checkpoint
 * resumes them). Pure: the state of the endpoint as the calls' outcomes tell it, time passed in.
 */
import { isTransientCredentialFailure, TRANSPORT_ERROR_CODES, type ErrorFacts } from '../aws/backoff.js';

const NO_ANSWER_NAMES = new Set(['TimeoutError', 'RequestTimeout', 'RequestTimeoutException', 'AbortError']);
const SERVER_NAMES = new Set(['InternalServerError', 'InternalFailure', 'ServiceUnavailable', 'ServiceUnavailableException']);

/**
 * What a failed call says about the endpoint: a short label (`ECONNREFUSED`, `HTTP 503`, `TimeoutError`)
 * when it is the endpoint's failure, undefined when the endpoint answered (a throttle, a refused request,
 * access denied: those are the rows' or the caller's). Credentials that could not be fetched (a container
 * endpoint or SSO not answering) stop every call too, and pass the same way.
 */
export function endpointFailure(facts: ErrorFacts): string | undefined {
  if (facts.code && TRANSPORT_ERROR_CODES.has(facts.code)) return facts.code;
  if (facts.name && NO_ANSWER_NAMES.has(facts.name)) return facts.name;
  if (isTransientCredentialFailure(facts)) return `credentials not available: ${facts.name ?? 'error'}`;
  if (facts.name && SERVER_NAMES.has(facts.name)) return facts.httpStatus !== undefined ? `HTTP ${facts.httpStatus} ${facts.name}` : facts.name;
  if (facts.httpStatus !== undefined && facts.httpStatus >= 500) return `HTTP ${facts.httpStatus}`;
  return undefined;
}

export interface OutagePolicy {
  /** How long an outage is waited for before the load stops (--outage-timeout), in ms. */
  timeoutMs: number;
  /** Calls that failed since the last answer before the endpoint counts as down. @default 3 */
  minFailures: number;
  /** ... and the earliest of them sent at least this long ago (a burst of resets is noise), in ms. @default 2000 */
  quietMs: number;
  /** First wait between probes, doubled at each failed probe up to `probeCapMs`. @default 250 */
  probeBaseMs: number;
  /** @default 5000 */
  probeCapMs: number;
}

export const DEFAULT_OUTAGE_TIMEOUT_MS = 300_000;

export function outagePolicy(timeoutMs: number): OutagePolicy {
  return { timeoutMs, minFailures: 3, quietMs: 2000, probeBaseMs: 250, probeCapMs: 5000 };
}

/** An outage under way: since when no call got an answer, why the last one failed, when it was declared. */
export interface Outage {
  /** When the earliest failed call since the last answer was sent. */
  since: number;
  reason: string;
  declaredAt: number;
}

/**
 * The endpoint's state from the outcomes of the load's calls: any answer that is not a 5xx means it is
 * up; failures without one since the last answer, over `quietMs` and at least `minFailures` calls, mean
 * it is down until a call gets an answer again (a probe that merely connects is not enough: a service
 * answering 503 to every BatchWriteItem is down for the load).
 */
export class OutageTracker {
  readonly policy: OutagePolicy;
  #failures = 0;
  #firstSentAt = Infinity;
  #reason = '';
  #outage: Outage | undefined;

  constructor(policy: OutagePolicy) {
    this.policy = policy;
  }

  get outage(): Outage | undefined {
    return this.#outage;
  }

  /** A call got an answer: the outage under way, if any, is over (returned). */
  answered(): Outage | undefined {
    const ended = this.#outage;
    this.#outage = undefined;
    this.#failures = 0;
    this.#firstSentAt = Infinity;
    return ended;
  }

  /** A call sent at `sentAt` failed with the endpoint's failure `reason`; returns the outage when this call makes one. */
  failed(now: number, sentAt: number, reason: string): Outage | undefined {
    this.#failures++;
    this.#firstSentAt = Math.min(this.#firstSentAt, sentAt);
    this.#reason = reason;
    if (this.#outage) {
      this.#outage.reason = reason;
      return undefined;
    }
    if (this.#failures < this.policy.minFailures || now - this.#firstSentAt < this.policy.quietMs) return undefined;
    this.#outage = { since: this.#firstSentAt, reason, declaredAt: now };
    return this.#outage;
  }

  /** The outage under way has been waited for as long as the policy allows. */
  expired(now: number): boolean {
    return this.#outage !== undefined && now - this.#outage.declaredAt >= this.policy.timeoutMs;
  }

  /**
   * One batch whose calls have had no answer since `failingSince`, while the load as a whole is not
   * down (other calls are answered, or too few failed yet): it is given as long as an outage would be
   * (quietMs to be declared, then --outage-timeout), then the load stops.
   */
  batchExpired(now: number, failingSince: number): boolean {
    return this.#outage === undefined && now - failingSince >= this.policy.quietMs + this.policy.timeoutMs;
  }

  /** The last failure's reason (for a batch that gives up while the load is not down). */
  get lastReason(): string {
    return this.#reason;
  }
}

/** The wait before probe number `n` (0-based) of an outage: doubling from probeBaseMs, capped. */
export function probeDelay(n: number, policy: OutagePolicy): number {
  return Math.min(policy.probeCapMs, policy.probeBaseMs * 2 ** Math.max(0, n));
}
