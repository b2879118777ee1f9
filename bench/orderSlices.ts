/**
 * How a write order spreads partition keys over time, for bench/order.ts. The load is cut into
 * consecutive slices of `rate` writes: at a steady `rate` items/s, one slice is one second of the load.
 * Only full slices count; the last `rows mod rate` writes, if any, are left out (reported as tailRows).
 *
 * For every key k with t_k writes out of N: file share p_k = t_k / N, expected writes per slice
 * e_k = p_k × rate, and c_{k,s} its writes in slice s. The figures:
 * - worstKeyShare: max over slices s and keys k of c_{k,s} / rate, the largest fraction of any one
 *   second of the load that goes to one partition key.
 * - For keys with e_k >= 1 ("keys with >= 1 write per slice expected"): maxRatio = max over those keys
 *   and all slices of (c_{k,s} / rate) / p_k = c_{k,s} / e_k, a key's share of a slice against its share
 *   of the file (target for spread: <= 2). minRatio is the same minimum over the keys with e_k >= 2 (0
 *   when such a key is missing from a slice); below 2 a key can miss a slice by rounding alone.
 * - For keys with e_k < 1: one write in a slice already exceeds 2× their file share, so the check is
 *   that they never have two writes in one slice: maxPerSlice over those keys, and how many have more
 *   than one write in some slice.
 */
import { createReadStream } from 'node:fs';
import { createInterface } from 'node:readline';

export interface KeyRatio {
  key: string;
  /** The key's share of the whole file. */
  fileShare: number;
  /** Expected writes of the key per slice (fileShare × rate). */
  expectedPerSlice: number;
  /** c / expected at the extreme slice. */
  ratio: number;
  /** Writes of the key in that slice. */
  count: number;
  slice: number;
}

export interface SliceStats {
  rows: number;
  rate: number;
  slices: number;
  /** Writes after the last full slice, not counted. */
  tailRows: number;
  keys: number;
  /** Largest share of the whole file held by one key. */
  hottestFileShare: number;
  hottestKey: string;
  worstKeyShare: number;
  worstKey: string;
  worstSlice: number;
  /** Median over slices of each slice's largest one-key share. */
  medianSliceWorstShare: number;
  /** Slices in which one key holds more than half the writes. */
  slicesOverHalf: number;
  ratedKeys: number;
  maxRatio: KeyRatio | undefined;
  /** Over the keys with e_k >= 2 only. */
  minRatio: KeyRatio | undefined;
  /** Keys with e_k >= 1 whose share of some slice is more than twice their file share. */
  ratedKeysOver2: number;
  sparseKeys: number;
  /** Most writes of one key with e_k < 1 in one slice (1 = never two in a slice). */
  sparseMaxPerSlice: number;
  /** Keys with e_k < 1 that have two or more writes in some slice. */
  sparseKeysRepeated: number;
  /** The largest e_k among all keys with e_k < 1, and the smallest among those with 2+ writes in a slice. */
  sparseMaxExpected: number;
  sparseRepeatedMinExpected: number | undefined;
}

interface KeyState {
  total: number;
  /** Slice of the writes counted in `current`. */
  slice: number;
  current: number;
  max: number;
  maxSlice: number;
  min: number;
  minSlice: number;
  /** Full slices in which the key has at least one write. */
  present: number;
}

/** Feed the partition keys in write order with add(), then call finish() once. */
export class SliceMeter {
  readonly #rate: number;
  readonly #keys = new Map<string, KeyState>();
  #rows = 0;
  #slice = 0;
  #inSlice = 0;
  #sliceWorst = 0;
  #sliceWorstKey = '';
  readonly #worstPerSlice: number[] = [];
  #worst = { share: 0, key: '', slice: 0 };

  constructor(rate: number) {
    if (!Number.isInteger(rate) || rate < 1) throw new Error(`rate must be a positive integer, got ${rate}`);
    this.#rate = rate;
  }

  add(key: string): void {
    let state = this.#keys.get(key);
    if (state === undefined) {
      state = { total: 0, slice: this.#slice, current: 0, max: 0, maxSlice: -1, min: Infinity, minSlice: -1, present: 0 };
      this.#keys.set(key, state);
    } else if (state.slice !== this.#slice) {
      // The slice this key was last seen in is over, and full (slices fill one after the other).
      commit(state);
      state.slice = this.#slice;
      state.current = 0;
    }
    state.total++;
    state.current++;
    if (state.current > this.#sliceWorst) {
      this.#sliceWorst = state.current;
      this.#sliceWorstKey = key;
    }
    this.#rows++;
    if (++this.#inSlice === this.#rate) {
      const share = this.#sliceWorst / this.#rate;
      this.#worstPerSlice.push(share);
      if (share > this.#worst.share) this.#worst = { share, key: this.#sliceWorstKey, slice: this.#slice };
      this.#slice++;
      this.#inSlice = 0;
      this.#sliceWorst = 0;
    }
  }

  finish(): SliceStats {
    const rate = this.#rate;
    const slices = this.#slice;
    const rows = this.#rows;
    let hottest = { key: '', total: 0 };
    let maxRatio: KeyRatio | undefined;
    let minRatio: KeyRatio | undefined;
    let ratedKeys = 0;
    let ratedKeysOver2 = 0;
    let sparseKeys = 0;
    let sparseMaxPerSlice = 0;
    let sparseKeysRepeated = 0;
    let sparseMaxExpected = 0;
    let sparseRepeatedMinExpected: number | undefined;
    for (const [key, state] of this.#keys) {
      if (state.slice < slices) commit(state); // its last slice is full
      if (state.total > hottest.total) hottest = { key, total: state.total };
      if (slices === 0) continue;
      const fileShare = state.total / rows;
      const expected = fileShare * rate;
      if (expected >= 1) {
        ratedKeys++;
        const high: KeyRatio = { key, fileShare, expectedPerSlice: expected, ratio: state.max / expected, count: state.max, slice: state.maxSlice };
        // Missing from some full slice: its minimum is 0 writes there.
        const low: KeyRatio =
          state.present < slices
            ? { key, fileShare, expectedPerSlice: expected, ratio: 0, count: 0, slice: -1 }
            : { key, fileShare, expectedPerSlice: expected, ratio: state.min / expected, count: state.min, slice: state.minSlice };
        if (high.ratio > 2) ratedKeysOver2++;
        if (maxRatio === undefined || high.ratio > maxRatio.ratio) maxRatio = high;
        if (expected >= 2 && (minRatio === undefined || low.ratio < minRatio.ratio)) minRatio = low;
      } else {
        sparseKeys++;
        sparseMaxPerSlice = Math.max(sparseMaxPerSlice, state.max);
        sparseMaxExpected = Math.max(sparseMaxExpected, expected);
        if (state.max > 1) {
          sparseKeysRepeated++;
          sparseRepeatedMinExpected = Math.min(sparseRepeatedMinExpected ?? Infinity, expected);
        }
      }
    }
    const sorted = [...this.#worstPerSlice].sort((a, b) => a - b);
    return {
      rows,
      rate,
      slices,
      tailRows: this.#inSlice,
      keys: this.#keys.size,
      hottestFileShare: rows > 0 ? hottest.total / rows : 0,
      hottestKey: hottest.key,
      worstKeyShare: this.#worst.share,
      worstKey: this.#worst.key,
      worstSlice: this.#worst.slice,
      medianSliceWorstShare: sorted.length ? sorted[sorted.length >> 1]! : 0,
      slicesOverHalf: sorted.filter((s) => s > 0.5).length,
      ratedKeys,
      maxRatio,
      minRatio,
      ratedKeysOver2,
      sparseKeys,
      sparseMaxPerSlice,
      sparseKeysRepeated,
      sparseMaxExpected,
      sparseRepeatedMinExpected,
    };
  }
}

function commit(state: KeyState): void {
  state.present++;
  if (state.current > state.max) {
    state.max = state.current;
    state.maxSlice = state.slice;
  }
  if (state.current < state.min) {
    state.min = state.current;
    state.minSlice = state.slice;
  }
}

/** Slice figures of a sequence file written by runOrderOnly.ts --sequence (one JSON string a line). */
export async function sliceStatsOfFile(path: string, rate: number): Promise<SliceStats> {
  const meter = new SliceMeter(rate);
  const lines = createInterface({ input: createReadStream(path, { highWaterMark: 1024 * 1024 }), crlfDelay: Infinity });
  for await (const line of lines) if (line !== '') meter.add(JSON.parse(line) as string);
  return meter.finish();
}
