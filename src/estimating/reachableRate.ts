import type { RateControlOptions } from '../pacing/rateControl.js';

/** How an on-demand table's rate may grow: from `initial`, `factor` × the peak of `windowMs` earlier, up to `cap`. */
export type Growth = NonNullable<RateControlOptions['growth']>;

export interface GrowthSchedule {
  /** Seconds to write the units at the most the growth allows. */
  seconds: number;
  /** The highest rate the load reaches. */
  peakWcu: number;
  /** units / seconds. */
  averageWcu: number;
}

/**
 * The fastest a load of `units` write units can go on an on-demand table: at `initial` for the
 * first window, then at twice that, and so on up to `cap` ("throttling can still occur if the throughput
 * exceeds twice the previous peak within the same 30 minutes"). A load shorter than one window never
 * goes above `initial`, whatever the table's quota: that, not the quota, is the rate its figures and
 * advice rest on. Pure.
 */
export function growthSchedule(growth: Growth, units: number): GrowthSchedule {
  const windowSeconds = growth.windowMs / 1000;
  let rate = Math.max(1e-9, Math.min(growth.initial, growth.cap));
  let seconds = 0;
  let left = Math.max(0, units);
  // At most log_factor(cap / initial) + 1 windows before the rate stops growing.
  while (rate < growth.cap && growth.factor > 1 && left > rate * windowSeconds) {
    left -= rate * windowSeconds;
    seconds += windowSeconds;
    rate = Math.min(growth.cap, rate * growth.factor);
  }
  seconds += left / rate;
  return { seconds, peakWcu: rate, averageWcu: seconds > 0 ? units / seconds : rate };
}
