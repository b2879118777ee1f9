import type { LoadCounters } from './result.js';

/**
 * What a load is doing, as the progress line names it:
 * - `reading`: rows are read but none sent yet (a global order reads the whole input first);
 * - `planning`: a global order has read everything and is merging what it holds (or spilled) into its order;
 * - `resuming`: the batches a checkpoint records as done are read again and skipped, not sent;
 * - `writing`: batches are being sent.
 */
export type ProgressPhase = 'reading' | 'planning' | 'resuming' | 'writing';

/** What the progress display has learned from the load's events besides the counters. */
export interface PhaseFacts {
  /** The write order holds every row until the input is read (round-robin, spread). */
  globalOrder: boolean;
  /** Every row of the input has been read (its count in rowsRead is final). */
  inputRead: boolean;
  /** Batches an earlier run of the checkpoint did: they are skipped, not sent. */
  resumeBatches: number;
}

/** One look at the load: its counters, the input's size and the time, as a progress event gives them. */
export interface GaugeReading {
  counters: Readonly<
    Pick<LoadCounters, 'rowsRead' | 'written' | 'superseded' | 'rejected' | 'otherSegments' | 'writtenBeforeResume' | 'batches' | 'bytesRead'>
  >;
  /** The input's size in bytes, when known (not for stdin). */
  totalBytes: number | undefined;
  elapsedMs: number;
}

/** The figures the progress line shows, and what the next reading is smoothed against. */
export interface Gauge {
  phase: ProgressPhase;
  /** Rows settled: written, superseded, rejected or another segment's. */
  done: number;
  /** Rows the input holds: exact once it is read, else projected from the share of its bytes read; undefined for stdin. */
  total: number | undefined;
  totalExact: boolean;
  /** Work done in percent, 0..100: never lower than before, 100 only when every row of the whole input is settled. */
  percent: number | undefined;
  /** Share of the input's bytes read, 0..1 (the reading phase's own measure), when the size is known. */
  readShare: number | undefined;
  /** Seconds left, smoothed; undefined until there is a write rate to tell it from. Always finite. */
  etaS: number | undefined;
  /** Rows settled per second by this run, smoothed over the last few seconds. */
  rowsPerSecond: number;
  /** When the rate was last sampled, and this run's settled rows then. */
  sampledMs: number;
  sampledDone: number;
}

/** Seconds the write rate and the ETA are smoothed over: long enough to ride out a throttled second. */
const SMOOTHING_S = 5;
/** A rate is sampled at most this often; closer readings add noise, not information. */
const SAMPLE_MS = 500;
/** Below 100% until the very end: a projection can be short by the rows still in read buffers. */
const MAX_UNFINISHED = 99.9;

/** The phase from the counters and the facts the events gave. Pure. */
export function phaseOf(reading: GaugeReading, facts: PhaseFacts): ProgressPhase {
  const { batches } = reading.counters;
  if (batches < facts.resumeBatches) return 'resuming';
  // The dispatcher counts a batch once it is sent (or skipped as done): more than the skipped ones means writing.
  if (batches > facts.resumeBatches) return 'writing';
  if (facts.globalOrder && facts.inputRead) return 'planning';
  return 'reading';
}

/**
 * The next figures from the previous ones and a new reading. Pure: time comes from the reading.
 * The percent is rows settled against the rows the input holds (its bytes read stand for the rows still
 * unread), so it follows the writes, not how far ahead the reader has pulled; the ETA is the rows left at
 * this run's recent rate (rows an earlier run of the checkpoint wrote take none of this run's time).
 */
export function nextGauge(previous: Gauge | undefined, reading: GaugeReading, facts: PhaseFacts): Gauge {
  const c = reading.counters;
  const phase = phaseOf(reading, facts);
  const done = c.written + c.superseded + c.rejected + c.otherSegments;
  const readShare = reading.totalBytes && reading.totalBytes > 0 ? clamp(c.bytesRead / reading.totalBytes, 0, 1) : facts.inputRead ? 1 : undefined;
  const total = facts.inputRead
    ? c.rowsRead
    : readShare !== undefined && readShare > 0 && c.rowsRead > 0
      ? Math.max(c.rowsRead, c.rowsRead / readShare)
      : undefined;
  const finished = facts.inputRead && done >= c.rowsRead;
  const raw = finished ? 100 : total !== undefined && total > 0 ? Math.min(MAX_UNFINISHED, (done / total) * 100) : undefined;
  const percent = raw === undefined ? previous?.percent : Math.max(raw, previous?.percent ?? 0);

  // This run's rate: rows skipped on a resume are counted written at once and cost no time.
  const runDone = done - c.writtenBeforeResume;
  let rowsPerSecond = previous?.rowsPerSecond ?? 0;
  let sampledMs = previous?.sampledMs ?? reading.elapsedMs;
  let sampledDone = previous?.sampledDone ?? runDone;
  let etaS = previous?.etaS;
  const dtS = (reading.elapsedMs - sampledMs) / 1000;
  if (previous === undefined || phase !== 'writing') {
    // Not writing yet (or skipping): the clock for the rate starts when the writes do.
    sampledMs = reading.elapsedMs;
    sampledDone = runDone;
  } else if (dtS * 1000 >= SAMPLE_MS) {
    const instant = Math.max(0, runDone - sampledDone) / dtS;
    // The first sample is taken as it is; later ones are blended in over SMOOTHING_S.
    const weight = previous.rowsPerSecond > 0 ? Math.min(1, dtS / SMOOTHING_S) : 1;
    rowsPerSecond = rowsPerSecond + weight * (instant - rowsPerSecond);
    sampledMs = reading.elapsedMs;
    sampledDone = runDone;
    const left = total === undefined ? undefined : Math.max(0, total - done);
    const rawEta = left !== undefined && rowsPerSecond > 0 ? left / rowsPerSecond : undefined;
    if (rawEta === undefined || !Number.isFinite(rawEta)) etaS = undefined;
    else if (etaS === undefined) etaS = rawEta;
    else {
      // The ETA counts down by the time that passed, and moves toward the new figure over SMOOTHING_S:
      // one slow or fast second does not make it jump.
      const counted = Math.max(0, etaS - dtS);
      etaS = counted + Math.min(1, dtS / SMOOTHING_S) * (rawEta - counted);
    }
  }
  if (finished) etaS = 0;
  return {
    phase,
    done,
    total,
    totalExact: facts.inputRead,
    percent,
    readShare,
    etaS: etaS !== undefined && Number.isFinite(etaS) ? Math.max(0, etaS) : undefined,
    rowsPerSecond,
    sampledMs,
    sampledDone,
  };
}

function clamp(value: number, low: number, high: number): number {
  return Number.isFinite(value) ? Math.min(high, Math.max(low, value)) : low;
}
