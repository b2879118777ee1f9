import cliProgress from 'cli-progress';
import type { RateSnapshot } from '../pacing/rateControl.js';
import type { LoadEvent } from './events.js';
import { formatCount } from '../shared/format.js';

/** "812 / 1,000 WCU/s": achieved against the rate in force (the target, or less after throttles). */
export function formatWcu(rate: RateSnapshot | undefined): string {
  if (!rate) return '0 WCU/s';
  const achieved = formatCount(rate.achievedWcu);
  return rate.currentWcu === undefined ? `${achieved} WCU/s` : `${achieved} / ${formatCount(rate.currentWcu)} WCU/s`;
}

/**
 * Draws load progress on a TTY with cli-progress (stderr only). It subscribes to load events; the loader
 * knows nothing about it. Redraws are throttled by cli-progress (fps), so it cannot slow the load.
 */
export function createProgressBar(stream: NodeJS.WriteStream = process.stderr): { onEvent(event: LoadEvent): void; stop(): void } {
  const bar = new cliProgress.SingleBar(
    {
      stream,
      fps: 5,
      hideCursor: true,
      clearOnComplete: true,
      // Fits 100 columns with a 20-character bar; cli-progress cuts what a narrower terminal cannot show.
      format:
        ' {bar} {percentage}% | {duration_formatted}, ETA {eta_formatted} | {written}/{rows} written | {wcu} | throttled {throttled} | errors {errors} | retries {retries} | rejected {rejected}',
      barsize: 20,
      // ETA from the share of the input read; cli-progress averages it over the last updates.
      etaBuffer: 50,
    },
    cliProgress.Presets.shades_classic,
  );
  let started = false;
  let byRows = false;
  return {
    onEvent(event) {
      if (event.type === 'started') {
        bar.start(event.totalBytes ?? 1, 0, { rows: 0, written: 0, rejected: 0, wcu: '0 WCU/s', throttled: 0, errors: 0, retries: 0 });
        started = true;
      } else if (event.type === 'ordering' && started) {
        // Round-robin and spread write after the whole input is read: from here the bar counts rows.
        byRows = true;
        bar.setTotal(event.rows);
      } else if (event.type === 'progress' && started) {
        const c = event.counters;
        const value = byRows ? c.written + c.superseded + c.rejected + c.otherSegments : event.totalBytes ? Math.min(c.bytesRead, event.totalBytes) : 0;
        bar.update(value, {
          rows: formatCount(c.rowsRead),
          written: formatCount(c.written),
          rejected: formatCount(c.rejected),
          wcu: formatWcu(event.rate),
          throttled: formatCount(c.throttledItems),
          errors: formatCount(event.rate?.errors ?? 0),
          retries: c.retries,
        });
      }
    },
    stop() {
      if (started) bar.stop();
      started = false;
    },
  };
}
