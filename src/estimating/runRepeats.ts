import { MAX_BATCH_REQUESTS } from '../batching/batch.js';
import { doubled } from '../shared/typedArrays.js';

/**
 * Primary keys written twice close together inside one key's run of writes (stripeOrder.ts), so that the
 * replay of a striped read can batch as load's batcher does: a write whose primary key is already in the
 * batch being filled takes that write's place (the earlier one is superseded). In the striped read the
 * writes of one run are spread among the other stripes' writes, so a repeat lands in the same batch less
 * often than in input order; only the replay can tell.
 *
 * Per run it keeps the pairs (write n, the latest earlier write m of the same primary key) where m is
 * among the run's latest MAX_BATCH_REQUESTS distinct primary keys: two writes further apart than that
 * hold at least that many slots between them, so they are never in one batch. Memory: the run at hand's
 * recent keys, and 24 bytes a pair (a repeat close to its partner: a row written again just after), up to
 * `maxPairs`; past it the repeats are dropped (`overflowed`) and the replay batches with none.
 */
/**
 * Pairs kept at most: a file with more repeats close together is batched as without them (the superseded
 * count is then the dry run's own, in input order). At 2^20 pairs the heap held ~95 MB (the open run's
 * pairs in an array, the kept ones, the replay's set of a run's partners); at 2^18 about a quarter.
 */
export const MAX_REPEAT_PAIRS = 1 << 18;

export class RunRepeats {
  /** The run at hand: its latest distinct primary keys (the oldest first) and their write's index. */
  readonly #recent = new Map<string, number>();
  /** The run at hand's pairs, flat: n, m, n, m... */
  #pending: number[] = [];
  // Pairs of closed runs, sorted by run then n.
  #size = 0;
  #run = new Uint32Array(256);
  #n = new Float64Array(256);
  #m = new Float64Array(256);

  readonly #maxPairs: number;
  #overflowed = false;

  constructor(maxPairs = MAX_REPEAT_PAIRS) {
    this.#maxPairs = maxPairs;
  }

  /** Pairs kept. */
  get size(): number {
    return this.#size;
  }

  /** Pairs held: kept, and the open run's (for tests of the bound). */
  get held(): number {
    return this.#size + this.#pending.length / 2;
  }

  /** Whether more pairs came than are kept: the replay then knows of none. */
  get overflowed(): boolean {
    return this.#overflowed;
  }

  /** Write `index` of the run at hand has primary key `id`. */
  add(id: string, index: number): void {
    if (this.#overflowed) return;
    const m = this.#recent.get(id);
    if (m !== undefined) {
      // The bound holds inside a run too: one key written again and again is one run, closed only at its end.
      if (this.held >= this.#maxPairs) {
        this.#overflow();
        return;
      }
      this.#recent.delete(id);
      this.#pending.push(index, m);
    }
    this.#recent.set(id, index);
    if (this.#recent.size > MAX_BATCH_REQUESTS) this.#recent.delete(this.#recent.keys().next().value!);
  }

  /** The run at hand closed as run `run`, its writes numbered there from `offset` (a folded run's earlier keys). */
  close(run: number, offset: number): void {
    const pending = this.#pending;
    for (let i = 0; i < pending.length && !this.#overflowed; i += 2) {
      if (this.#size === this.#run.length) this.#grow();
      this.#run[this.#size] = run;
      this.#n[this.#size] = pending[i]! + offset;
      this.#m[this.#size] = pending[i + 1]! + offset;
      this.#size++;
    }
    this.#pending = [];
    this.#recent.clear();
  }

  /** The first pair of run `run` or a later one (pairs are sorted by run). */
  firstOf(run: number): number {
    let lo = 0;
    let hi = this.#size;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (this.#run[mid]! < run) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  }

  /** Pair `i`: its run, write and partner, or undefined past the last. */
  runOf(i: number): number | undefined {
    return i < this.#size ? this.#run[i] : undefined;
  }

  writeOf(i: number): number {
    return this.#n[i]!;
  }

  partnerOf(i: number): number {
    return this.#m[i]!;
  }

  /** Too many pairs: none is kept (the replay batches with none), and what was kept is let go. */
  #overflow(): void {
    this.#overflowed = true;
    this.#pending = [];
    this.#recent.clear();
    this.#size = 0;
    this.#run = new Uint32Array(0);
    this.#n = new Float64Array(0);
    this.#m = new Float64Array(0);
  }

  #grow(): void {
    this.#run = doubled(this.#run);
    this.#n = doubled(this.#n);
    this.#m = doubled(this.#m);
  }
}

/**
 * The replay's batches in load's batcher's terms (src/batching/batch.ts): writes fill slots of 25, a
 * batch goes out when its 25th slot is filled, and a write whose partner (RunRepeats) holds a slot of the
 * batch being filled takes that slot instead (the partner is superseded).
 */
export class ReplayBatcher {
  readonly #repeats: RunRepeats;
  /** Slots filled so far. */
  #slots = 0;
  #superseded = 0;
  /** Per stripe: the next pair of its run at hand, the writes of that run that are partners, and their slots. */
  readonly #cursor: number[];
  readonly #isPartner: Set<number>[];
  readonly #slotOf: Map<number, number>[];

  constructor(repeats: RunRepeats, stripes: number) {
    this.#repeats = repeats;
    this.#cursor = new Array<number>(stripes).fill(0);
    this.#isPartner = Array.from({ length: stripes }, () => new Set<number>());
    this.#slotOf = Array.from({ length: stripes }, () => new Map<number, number>());
  }

  get superseded(): number {
    return this.#superseded;
  }

  /** Stripe `stripe` starts its run `run`. */
  startRun(stripe: number, run: number): void {
    const repeats = this.#repeats;
    const first = repeats.firstOf(run);
    this.#cursor[stripe] = first;
    const partners = new Set<number>();
    for (let i = first; repeats.runOf(i) === run; i++) partners.add(repeats.partnerOf(i));
    this.#isPartner[stripe] = partners;
    this.#slotOf[stripe]!.clear();
  }

  /** Write `write` of stripe `stripe`'s run `run` is placed: the slot of the batch being filled it takes over, or -1 (a new slot). */
  place(stripe: number, run: number, write: number): number {
    const repeats = this.#repeats;
    const c = this.#cursor[stripe]!;
    let slot: number | undefined;
    let replaces = -1;
    if (repeats.runOf(c) === run && repeats.writeOf(c) === write) {
      this.#cursor[stripe] = c + 1;
      const partner = repeats.partnerOf(c);
      const at = this.#slotOf[stripe]!.get(partner);
      this.#slotOf[stripe]!.delete(partner);
      const batchStart = this.#slots - (this.#slots % MAX_BATCH_REQUESTS);
      if (at !== undefined && at >= batchStart) {
        slot = at;
        replaces = at - batchStart;
        this.#superseded++;
      }
    }
    slot ??= this.#slots++;
    if (this.#isPartner[stripe]!.has(write)) this.#slotOf[stripe]!.set(write, slot);
    return replaces;
  }
}
