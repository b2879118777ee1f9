import { writesToAccount, type LoadCounters } from './result.js';

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
    Pick<
      LoadCounters,
      | 'rowsRead'
      | 'written'
      | 'superseded'
      | 'rejected'
      | 'otherSegments'
      | 'writtenBeforeResume'
      | 'batches'
      | 'bytesRead'
      | 'skippedByTransform'
      | 'splitWrites'
      | 'skippedExpired'
      | 'conditionFailed'
    >
  >;
  /** The input's size in bytes, when known (not for stdin). */
  totalBytes: number | undefined;
  elapsedMs: number;
}

/** The figures the progress line shows, and what the next reading is weighed against. */
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
  /** Seconds left at the recent rate; undefined until there is a rate to tell it from. Always finite. */
  etaS: number | undefined;
  /** Rows settled per second by this run over the last few seconds of writing. */
  rowsPerSecond: number;
  /** This run's settled rows at recent readings while writing (the rate's window). */
  samples: ReadonlyArray<{ ms: number; done: number }>;
}

/**
 * Seconds of writing the rate is measured over: long enough to ride out a throttled second, short enough
 * to follow the rate control's ramp up.
 */
const RATE_WINDOW_MS = 5000;
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
 * The percent is rows settled against the rows the input holds, so it follows the writes, not how far
 * ahead the reader has pulled; the ETA is the rows left at this run's rate over the last few seconds
 * (rows an earlier run of the checkpoint wrote are skipped, and take none of this run's time).
 */
export function nextGauge(previous: Gauge | undefined, reading: GaugeReading, facts: PhaseFacts): Gauge {
  const c = reading.counters;
  const phase = phaseOf(reading, facts);
  // In rows: a transform's skipped rows and expired rows are done, the extra items of its split rows are not rows.
  const done = c.written + c.superseded + c.rejected + c.otherSegments + c.rowsRead - writesToAccount(c);
  const readShare = reading.totalBytes && reading.totalBytes > 0 ? clamp(c.bytesRead / reading.totalBytes, 0, 1) : facts.inputRead ? 1 : undefined;
  const total = facts.inputRead ? c.rowsRead : projectedTotal(previous, c.rowsRead, readShare);
  const finished = facts.inputRead && done >= c.rowsRead;
  const raw = finished ? 100 : total !== undefined && total > 0 ? Math.min(MAX_UNFINISHED, (done / total) * 100) : undefined;
  const percent = raw === undefined ? previous?.percent : Math.max(raw, previous?.percent ?? 0);

  const runDone = done - c.writtenBeforeResume;
  // The rate's window starts when the writes do: reading, planning and skipping what is done take no write time.
  const samples = phase === 'writing' ? [...(previous?.phase === 'writing' ? previous.samples : []), { ms: reading.elapsedMs, done: runDone }] : [];
  while (samples.length > 2 && samples[1]!.ms <= reading.elapsedMs - RATE_WINDOW_MS) samples.shift();
  const first = samples[0];
  const spanS = first ? (reading.elapsedMs - first.ms) / 1000 : 0;
  const rowsPerSecond = first && spanS > 0 ? Math.max(0, runDone - first.done) / spanS : 0;
  const left = total === undefined ? undefined : Math.max(0, total - done);
  const eta = finished ? 0 : left !== undefined && rowsPerSecond > 0 ? left / rowsPerSecond : undefined;
  return {
    phase,
    done,
    total,
    totalExact: facts.inputRead,
    percent,
    readShare,
    etaS: eta !== undefined && Number.isFinite(eta) ? eta : undefined,
    rowsPerSecond,
    samples,
  };
}

/**
 * Rows the input holds, projected from the share of its bytes handed to the parser. A chunk handed over
 * counts all its bytes before its rows are read, so the projection falls short right after each chunk
 * and is right just before the next: the highest projection so far is the best, and rows only add up,
 * so it never goes down. Once every byte is handed over and rows still come out of the last chunks, no
 * projection holds: the last one (or the rows read, if more) stands until the input is read to its end,
 * and a file handed over whole at once has none until then.
 */
function projectedTotal(before: Gauge | undefined, rowsRead: number, share: number | undefined): number | undefined {
  const projection = share !== undefined && share > 0 && share < 1 && rowsRead > 0 ? rowsRead / share : undefined;
  if (projection === undefined && before?.total === undefined) return undefined;
  return Math.max(rowsRead, before?.total ?? 0, projection ?? 0);
}

function clamp(value: number, low: number, high: number): number {
  return Number.isFinite(value) ? Math.min(high, Math.max(low, value)) : low;
}
