/**
 * A token bucket that lends: a reservation always succeeds and may take the bucket below zero, and the
 * caller waits until the debt is repaid before it sends. Reservations are served in the order they are
 * made, so pacing keeps the write order, and a request larger than the bucket (a batch of 25 items of
 * 40 KB against a small rate) is paced instead of refused forever.
 *
 * Pure: time is passed in (monotonic milliseconds, never decreasing), nothing sleeps here.
 */
export class TokenBucket {
  #rate: number;
  #capacity: number;
  #capacitySeconds: number;
  #tokens: number;
  #last: number;

  /**
   * @param rate units per second (> 0; Infinity means no limit)
   * @param capacitySeconds unused capacity kept, in seconds of `rate`: the largest burst after a pause
   * @param now time of creation
   * @param initialSeconds tokens at creation, in seconds of `rate` @default capacitySeconds
   */
  constructor(rate: number, capacitySeconds: number, now: number, initialSeconds = capacitySeconds) {
    this.#rate = rate;
    this.#capacitySeconds = capacitySeconds;
    this.#capacity = rate * capacitySeconds;
    this.#tokens = Number.isFinite(rate) ? rate * Math.min(initialSeconds, capacitySeconds) : 0;
    this.#last = now;
  }

  get rate(): number {
    return this.#rate;
  }

  /** Units available now (negative while a debt is outstanding). */
  tokens(now: number): number {
    this.#refill(now);
    return this.#tokens;
  }

  /** Changes the rate from `now` on; what was earned at the old rate is kept (up to the new capacity). */
  setRate(now: number, rate: number): void {
    this.#refill(now);
    // A debt keeps the time at which it is repaid, so reservations made before the change are still
    // served first (a faster rate must not let a later reservation overtake an earlier one).
    if (this.#tokens < 0 && Number.isFinite(this.#rate) && Number.isFinite(rate)) this.#tokens = (this.#tokens / this.#rate) * rate;
    else if (this.#tokens < 0) this.#tokens = 0;
    this.#rate = rate;
    this.#capacity = rate * this.#capacitySeconds;
    if (this.#tokens > this.#capacity) this.#tokens = this.#capacity;
  }

  /** Takes `units`; returns how many milliseconds from `now` the caller must wait before using them. */
  reserve(now: number, units: number): number {
    if (!Number.isFinite(this.#rate)) return 0;
    this.#refill(now);
    this.#tokens -= units;
    return this.#tokens >= 0 ? 0 : (-this.#tokens * 1000) / this.#rate;
  }

  /**
   * Lends nothing for `ms` from `now`: the bucket owes at least that much time at its rate, so what is
   * reserved next waits until then (and after any debt already owed). Called again, it does not add up.
   */
  hold(now: number, ms: number): void {
    if (!Number.isFinite(this.#rate)) return;
    this.#refill(now);
    this.#tokens = Math.min(this.#tokens, (-ms * this.#rate) / 1000);
  }

  /** Milliseconds until `units` could be taken without waiting (0 if now). Takes nothing. */
  waitFor(now: number, units: number): number {
    if (!Number.isFinite(this.#rate)) return 0;
    this.#refill(now);
    const short = units - this.#tokens;
    return short <= 0 ? 0 : (short * 1000) / this.#rate;
  }

  /** True when the bucket is full at `now`: it holds nothing a later reservation depends on. */
  isFull(now: number): boolean {
    this.#refill(now);
    return this.#tokens >= this.#capacity;
  }

  #refill(now: number): void {
    if (now > this.#last) {
      if (Number.isFinite(this.#rate)) this.#tokens = Math.min(this.#capacity, this.#tokens + ((now - this.#last) * this.#rate) / 1000);
      this.#last = now;
    }
  }
}
