import type { RateSnapshot } from '../pacing/rateControl.js';
import { isGlobalOrder } from '../ordering/order.js';
import type { LoadEvent } from './events.js';
import { formatCount } from '../shared/format.js';
import { nextGauge, type Gauge, type PhaseFacts } from './progressGauge.js';
import { progressLine } from './progressLine.js';

/** "812 / 1,000 WCU/s": achieved against the rate in force (the target, or less after throttles). */
export function formatWcu(rate: RateSnapshot | undefined): string {
  if (!rate) return '0 WCU/s';
  const achieved = formatCount(rate.achievedWcu);
  return rate.currentWcu === undefined ? `${achieved} WCU/s` : `${achieved} / ${formatCount(rate.currentWcu)} WCU/s`;
}

/** Redraws at most this often: a terminal needs no more, and the load must not pay for it. */
const REDRAW_MS = 200;
/** Width assumed when the stream does not say (not a terminal, or one that reports no size). */
const DEFAULT_COLUMNS = 80;

/**
 * The terminal's width now: asked of the terminal at each draw, since `columns` is refreshed only when
 * the event loop gets to SIGWINCH, which a busy reader may hold off for a while.
 */
function widthOf(stream: NodeJS.WriteStream): number {
  try {
    const columns = typeof stream.getWindowSize === 'function' ? stream.getWindowSize()[0] : stream.columns;
    return columns > 0 ? columns : DEFAULT_COLUMNS;
  } catch {
    return stream.columns > 0 ? stream.columns : DEFAULT_COLUMNS;
  }
}

/**
 * Draws load progress on one terminal line (stderr only), rewritten in place: the phase, the percent of
 * rows settled, the rows written of those the input holds, the ETA and the rate (figures from
 * progressGauge.ts, laid out by progressLine.ts). The line is fitted to the terminal's width and drawn
 * again when the terminal is resized. It subscribes to load events; the loader knows nothing about it.
 */
export function createProgressBar(
  stream: NodeJS.WriteStream = process.stderr,
  now: () => number = () => performance.now(),
): { onEvent(event: LoadEvent): void; stop(): void } {
  const facts: PhaseFacts = { globalOrder: false, inputRead: false, resumeBatches: 0 };
  let gauge: Gauge | undefined;
  let last: Extract<LoadEvent, { type: 'progress' }> | undefined;
  let drawnAt = -Infinity;
  let started = false;
  /** Batches the checkpoint found done, from its 'resumed' event until the 'started' that follows it. */
  let resumed: number | undefined;
  const draw = () => {
    if (!started || !last || !gauge) return;
    drawnAt = now();
    const c = last.counters;
    const line = progressLine(
      {
        gauge,
        globalOrder: facts.globalOrder,
        rowsRead: c.rowsRead,
        written: c.written,
        elapsedS: last.elapsedMs / 1000,
        wcu: formatWcu(last.rate),
        throttled: c.throttledItems,
        errors: last.rate?.errors ?? 0,
        rejected: c.rejected,
        retries: c.retries,
      },
      // One column short of the edge: a line that fills the last column wraps on some terminals.
      widthOf(stream) - 1,
    );
    // Back to the line's start, the line, then clear what a longer line drawn before left behind.
    stream.write(`\r${line}\u001b[K`);
  };
  const onResize = () => draw();
  return {
    onEvent(event) {
      if (event.type === 'started') {
        // A load that starts over (a file found not grouped, written again through the window) starts its
        // counters over; a checkpoint says what it resumes before the load starts.
        gauge = undefined;
        Object.assign(facts, { globalOrder: false, inputRead: false, resumeBatches: resumed ?? 0 });
        resumed = undefined;
        if (started) return;
        started = true;
        stream.write('\u001b[?25l'); // cursor hidden while the line is redrawn
        stream.on('resize', onResize);
      } else if (event.type === 'reading') {
        facts.globalOrder = isGlobalOrder(event.order);
      } else if (event.type === 'ordering') {
        // The auto order's window may have gone over to round-robin: from here on it held every row.
        facts.globalOrder = true;
        facts.inputRead = true;
      } else if (event.type === 'inputRead') {
        facts.inputRead = true;
      } else if (event.type === 'resumed') {
        resumed = event.batchesDone;
      } else if (event.type === 'progress' && started) {
        last = event;
        gauge = nextGauge(gauge, { counters: event.counters, totalBytes: event.totalBytes, elapsedMs: event.elapsedMs }, facts);
        // The last figures are drawn whatever the time: a load that ends between redraws ends at 100%.
        if (now() - drawnAt >= REDRAW_MS || gauge.percent === 100) draw();
      }
    },
    stop() {
      if (!started) return;
      started = false;
      stream.off('resize', onResize);
      stream.write('\r\u001b[K\u001b[?25h');
    },
  };
}
