import type { RateSnapshot } from '../pacing/rateControl.js';
import { formatCount, formatDuration, formatPercent } from '../shared/format.js';
import { writesToAccount, type LoadCounters } from './result.js';
import { mergeOwn } from '../shared/ownRecord.js';

/**
 * Progress for logs (stderr not a terminal): one line every --log-interval seconds, as text or, with
 * --log-format json, as one JSON object per line with the same fields, ready for CloudWatch Logs or any
 * log pipeline. Pure.
 */
export interface ProgressFields {
  type: 'progress';
  elapsedS: number;
  rowsRead: number;
  /** Share of the input read, by bytes (undefined for stdin). */
  percent: number | undefined;
  written: number;
  superseded: number;
  rejected: number;
  retries: number;
  throttledItems: number;
  /** Throttled calls by kind so far (LoadCounters.throttlesByReason): in the JSON lines only. */
  throttlesByReason: Record<string, number>;
  /** Calls failed without an answer (5xx, resets, timeouts, lost replies), retried; not throttles. */
  errors: number;
  itemsPerSecond: number;
  wcuPerSecond: number;
  /** The rate in force (the target, or less after throttles); undefined when unlimited. */
  rateWcu: number | undefined;
  targetWcu: number | undefined;
  /** Seconds left at the current pace, when it can be told. */
  etaS: number | undefined;
}

export function progressFields(
  counters: Readonly<LoadCounters>,
  totalBytes: number | undefined,
  elapsedMs: number,
  rate: RateSnapshot | undefined,
): ProgressFields {
  const elapsedS = elapsedMs / 1000;
  const percent = totalBytes ? Math.min(100, (counters.bytesRead / totalBytes) * 100) : undefined;
  // This run's pace: rows an earlier run of a checkpoint wrote took none of this run's time.
  const itemsPerSecond = elapsedS > 0 ? (counters.written - counters.writtenBeforeResume) / elapsedS : 0;
  // Rows the whole input holds, projected from the bytes read; the rest at the pace so far.
  const projectedRows = percent !== undefined && percent > 0 ? counters.rowsRead / (percent / 100) : undefined;
  const left =
    projectedRows === undefined
      ? undefined
      : projectedRows + writesToAccount(counters) - counters.rowsRead - counters.written - counters.superseded - counters.rejected - counters.otherSegments;
  const etaS = left !== undefined && itemsPerSecond > 0 ? Math.max(0, left / itemsPerSecond) : undefined;
  return {
    type: 'progress',
    elapsedS: round(elapsedS, 1),
    rowsRead: counters.rowsRead,
    percent: percent === undefined ? undefined : round(percent, 1),
    written: counters.written,
    superseded: counters.superseded,
    rejected: counters.rejected,
    retries: counters.retries,
    throttledItems: counters.throttledItems,
    throttlesByReason: mergeOwn(counters.throttlesByReason),
    errors: rate?.errors ?? 0,
    itemsPerSecond: Math.round(itemsPerSecond),
    wcuPerSecond: Math.round(rate?.achievedWcu ?? 0),
    rateWcu: rate?.currentWcu === undefined ? undefined : Math.round(rate.currentWcu),
    targetWcu: rate?.targetWcu === undefined ? undefined : Math.round(rate.targetWcu),
    etaS: etaS === undefined ? undefined : Math.round(etaS),
  };
}

/** `time` (ISO 8601) leads the JSON object, so log pipelines can take it as the event's time. */
export function formatProgressLine(f: ProgressFields, format: 'text' | 'json', time?: string): string {
  if (format === 'json') return `${JSON.stringify({ ...(time ? { time } : {}), ...f })}\n`;
  const parts = [
    `${formatCount(f.rowsRead, 'row')} read${f.percent === undefined ? '' : ` (${formatPercent(f.percent / 100)})`}`,
    `${formatCount(f.written)} written`,
    `${formatCount(f.itemsPerSecond)} items/s`,
    `${formatCount(f.wcuPerSecond)}${f.rateWcu === undefined ? '' : ` / ${formatCount(f.rateWcu)}`} WCU/s`,
    `throttled ${formatCount(f.throttledItems)}`,
    `errors ${formatCount(f.errors)}`,
    `retries ${formatCount(f.retries)}`,
    `rejected ${formatCount(f.rejected)}`,
    `elapsed ${formatDuration(f.elapsedS)}`,
  ];
  if (f.etaS !== undefined) parts.push(`ETA ${formatDuration(f.etaS)}`);
  return `ddb-spread: progress: ${parts.join(', ')}\n`;
}

function round(v: number, digits: number): number {
  const f = 10 ** digits;
  return Math.round(v * f) / f;
}
