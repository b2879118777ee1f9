/**
 * Write order: which write goes next, so that consecutive writes hit different partition keys
 * (AWS, "Distribute write activity during data upload"). Pure and synchronous; the I/O shell
 * (io/order/) adds temporary files for inputs larger than the memory budget and calls into this.
 *
 * Every mode keeps the writes of one partition key in their input order, so writes to one primary key
 * (which always share a partition key) keep their order and the table ends as the input order would
 * leave it.
 */

/**
 * `auto` (the default) decides from the data (src/load/inputReading.ts): a file that can be cut and whose
 * keys come in runs is read in `stripes`; anything else streams through the `window`, which goes over to
 * round-robin for the rest of the input if the keys turn out to come in runs (KeyRuns below).
 * `stripes` reads the file at many points at once and writes as it reads (src/ordering/stripes/stripedRecords.ts);
 * asked for by name, a file that cannot be read so (stdin, compressed, small, not grouped by partition
 * key) is written in round-robin order instead.
 */
export const ORDER_MODES = ['auto', 'stripes', 'round-robin', 'spread', 'window', 'input'] as const;
export type OrderMode = (typeof ORDER_MODES)[number];
/** An order in effect: `auto` is decided before the first row, into one of these. */
export type WriteOrder = Exclude<OrderMode, 'auto'>;
/** Rows held by `--order window` unless `--window` says otherwise (also capped by the memory budget). */
export const DEFAULT_WINDOW_ROWS = 50_000;
/**
 * Rows the auto order's window holds to begin with. Keys already mixed need only their short runs broken
 * up, and a small window hands each write on soon (little held, and a hot key's backlog cannot pile up
 * at the end of the load); where the keys come in longer runs the window grows, up to --window rows,
 * before it gives up streaming (WriteOrderer).
 */
export const AUTO_WINDOW_ROWS = 1024;

/** Modes that need the whole input before the first write. */
export type GlobalOrderMode = 'round-robin' | 'spread';

export function isGlobalOrder(mode: OrderMode): mode is GlobalOrderMode {
  return mode === 'round-robin' || mode === 'spread';
}

/** What the whole input says about one partition key. */
export interface KeyStat {
  /** Writes the key has in the input. */
  count: number;
  /** Input position (0-based, among valid writes) of the key's first write. */
  first: number;
}

/**
 * A write's place in the global order: compare `primary`, then `first` (the key's first appearance).
 * No two writes share both, so the order is total and does not depend on the sort algorithm.
 */
export interface OrderKey {
  primary: number;
  first: number;
}

/**
 * The order key of the `rank`-th write (0-based) of a partition key.
 * - round-robin: round `rank`, keys in order of first appearance: the first write of every key, then the
 *   second write of every key, and so on.
 * - spread: the key's writes sit at equal steps of 1 / count over the load, (rank + phase) / count, so a
 *   key with a tenth of the writes gets a tenth of every stretch of the load. The phase in [0, 1) differs
 *   per key (a golden-ratio sequence over the key's first position): with one shared phase, every key of
 *   one write would land on the same spot (the middle) and leave the big keys alone everywhere else.
 */
export function orderKey(mode: GlobalOrderMode, rank: number, stat: KeyStat): OrderKey {
  return { primary: orderPrimary(mode, rank, stat.count, stat.first), first: stat.first };
}

/** `orderKey(...).primary` without the object, for orderings that keep keys in typed arrays. */
export function orderPrimary(mode: GlobalOrderMode, rank: number, count: number, first: number): number {
  return mode === 'round-robin' ? rank : (rank + spreadPhase(first)) / count;
}

const GOLDEN = 0.6180339887498949;

/** A key's phase for spread: frac((first + 1) × golden ratio), evenly spread over [0, 1) (Weyl sequence). */
export function spreadPhase(first: number): number {
  const x = (first + 1) * GOLDEN;
  return x - Math.floor(x);
}

export function compareOrderKeys(a: OrderKey, b: OrderKey): number {
  return a.primary - b.primary || a.first - b.first;
}

/** Counts writes per partition key, in input order: the rank of each write and, at the end, each key's stat. */
export class KeyStats {
  readonly #stats = new Map<string, KeyStat>();

  /** Records a write of `partition` at input position `position` and returns its rank within the key. */
  add(partition: string, position: number): number {
    const stat = this.#stats.get(partition);
    if (stat) return stat.count++;
    this.#stats.set(partition, { count: 1, first: position });
    return 0;
  }

  get(partition: string): KeyStat | undefined {
    return this.#stats.get(partition);
  }

  get size(): number {
    return this.#stats.size;
  }
}

/**
 * Orders a whole input in memory: `writes` in input order, `partitionOf` names each one's partition key.
 * Returns a new array; the input is not changed.
 */
export function orderAll<T>(writes: readonly T[], partitionOf: (write: T) => string, mode: OrderMode, windowRows = DEFAULT_WINDOW_ROWS): T[] {
  // Stripes order the rows by where they are in a file, which a list does not have: it is the list's order.
  if (mode === 'input' || mode === 'stripes') return [...writes];
  if (mode === 'window' || mode === 'auto') {
    const interleaver = createWindowInterleaver(partitionOf, { rows: windowRows });
    const out: T[] = [];
    for (const w of writes) out.push(...interleaver.push(w));
    return out.concat(interleaver.flush());
  }
  const stats = new KeyStats();
  const ranks = new Uint32Array(writes.length);
  writes.forEach((w, i) => (ranks[i] = stats.add(partitionOf(w), i)));
  const keyed = writes.map((write, i) => ({ write, key: orderKey(mode, ranks[i]!, stats.get(partitionOf(write))!) }));
  keyed.sort((a, b) => compareOrderKeys(a.key, b.key));
  return keyed.map((k) => k.write);
}

/**
 * Emptied key queues a window keeps for their key's next write: in a key-mixed input most keys come back
 * within a few rows, and a queue made and dropped each time was a third of what the window allocated. Bounded,
 * so a window over millions of distinct keys keeps no more than this many idle ones.
 */
const PARKED_QUEUES = 4096;
/** A window's answer when no write leaves: shared, and frozen so that no caller can add to it. */
const NONE_LEAVE: readonly never[] = Object.freeze([]);
/** Slots a parked queue keeps; a longer one is given up (a key's long run, which would hold the window's memory). */
const PARKED_SLOTS = 64;

/** Size limits of a window; a write is emitted as soon as either is exceeded. */
export interface WindowLimits {
  /** Writes held at most. */
  rows: number;
  /** Estimated bytes held at most. @default Infinity */
  bytes?: number;
}

export interface WindowInterleaver<T> {
  /**
   * Adds a write; returns the writes that leave the window because it is full (usually none or one). The
   * array is the interleaver's own, filled again by the next push: read it before pushing again.
   */
  push(write: T, bytes?: number): readonly T[];
  /** Empties the window, in round-robin order. */
  flush(): T[];
  /** Lets the next write of the rotation leave now (undefined when empty): for a caller with limits of its own. */
  shift(): T | undefined;
  /** Writes held at most, from now on (a window that grows). */
  rows: number;
  /** Writes held now. */
  readonly held: number;
  /** Distinct partition keys held now. */
  readonly keys: number;
  /** Bytes held now, as given to push. */
  readonly bytes: number;
}

interface KeyQueue<T> {
  partition: string;
  /** The key's writes held: writes[head..tail) (slots past tail are free: the arrays are kept, not remade). */
  writes: (T | undefined)[];
  head: number;
  tail: number;
  bytes: number[];
  /** In the rotation (holding writes), or parked: emptied, kept for the key's next write. */
  active: boolean;
  next: KeyQueue<T>;
  prev: KeyQueue<T>;
}

/**
 * Streaming round-robin within a bounded window, for input that cannot be read twice (stdin, pipes):
 * the window holds up to `rows` writes grouped by partition key; each time it overflows, the write at the
 * head of the next key in rotation leaves it. Keys join the rotation when first seen and leave it when
 * their queue empties. Consecutive writes therefore come from different keys whenever the window holds
 * more than one key; a sorted input whose keys each have more rows than the window cannot be helped.
 */
export function createWindowInterleaver<T>(partitionOf: (write: T) => string, limits: WindowLimits): WindowInterleaver<T> {
  let maxRows = limits.rows;
  const maxBytes = limits.bytes ?? Infinity;
  const queues = new Map<string, KeyQueue<T>>();
  /** The key whose head write leaves next; undefined when the window is empty. */
  let cursor: KeyQueue<T> | undefined;
  /** The key that gave the last write; when the rotation is back at it, a newly arrived key goes first. */
  let lastEmitted: KeyQueue<T> | undefined;
  let held = 0;
  let heldBytes = 0;
  /** Keys held now: queues in the rotation (the map also keeps parked ones). */
  let activeKeys = 0;
  /** Emptied queues kept in the map for their key's next write, at most PARKED_QUEUES of them. */
  let parked = 0;
  /**
   * What push hands back when one write leaves (the common case once the window is full), filled again at
   * each push: an array made per row, grown to hold one write, was most of what the window allocated.
   */
  const one: T[] = [undefined as T];
  const full = () => held > maxRows || (heldBytes > maxBytes && held > 1);

  function emitOne(): T {
    const queue = cursor!;
    const write = queue.writes[queue.head]!;
    heldBytes -= queue.bytes[queue.head]!;
    // The slot lets go of its write: a parked queue holds none.
    queue.writes[queue.head] = undefined;
    queue.head++;
    held--;
    lastEmitted = queue;
    if (queue.head === queue.tail) {
      // Emptied: parked for the key's next write (keys come back soon in a mixed input), unless too many are.
      queue.active = false;
      activeKeys--;
      // It no longer is the key that just wrote: a parked queue written again (after a flush emptied the
      // window) would otherwise let a newcomer go ahead of it, unlike a queue made afresh.
      lastEmitted = undefined;
      if (parked < PARKED_QUEUES) {
        parked++;
        queue.head = queue.tail = 0;
        // A queue that once held a long run keeps no long arrays while parked.
        if (queue.writes.length > PARKED_SLOTS) {
          queue.writes = [];
          queue.bytes = [];
        }
      } else queues.delete(queue.partition);
      if (queue.next === queue) {
        cursor = undefined;
      } else {
        queue.prev.next = queue.next;
        queue.next.prev = queue.prev;
        cursor = queue.next;
      }
    } else {
      if (queue.head > 64 && queue.head * 2 > queue.tail) {
        // The writes left move to the front, in place.
        queue.writes.copyWithin(0, queue.head, queue.tail);
        queue.bytes.copyWithin(0, queue.head, queue.tail);
        queue.tail -= queue.head;
        queue.writes.fill(undefined, queue.tail);
        queue.head = 0;
      }
      cursor = queue.next;
    }
    return write;
  }

  return {
    push(write, bytes = 0) {
      const partition = partitionOf(write);
      let queue = queues.get(partition);
      if (queue?.active) {
        queue.writes[queue.tail] = write;
        queue.bytes[queue.tail++] = bytes;
      } else {
        if (queue) {
          parked--;
          queue.writes[queue.tail] = write;
          queue.bytes[queue.tail++] = bytes;
        } else {
          queue = { partition, writes: [write], head: 0, tail: 1, bytes: [bytes] } as KeyQueue<T>;
          queues.set(partition, queue);
        }
        queue.active = true;
        activeKeys++;
        if (cursor === undefined) {
          queue.next = queue.prev = queue;
          cursor = queue;
        } else {
          // A new key joins at the end of the current rotation: just before the cursor.
          queue.next = cursor;
          queue.prev = cursor.prev;
          cursor.prev.next = queue;
          cursor.prev = queue;
          // The window held only the key that just wrote: the newcomer goes next, not that key again.
          if (cursor === lastEmitted) cursor = queue;
        }
      }
      held++;
      heldBytes += bytes;
      if (!full()) return NONE_LEAVE;
      const first = emitOne();
      if (!full()) {
        one[0] = first;
        return one;
      }
      const out = [first];
      while (full()) out.push(emitOne());
      return out;
    },
    flush() {
      const out: T[] = [];
      while (held > 0) out.push(emitOne());
      return out;
    },
    shift() {
      if (held === 0) return undefined;
      return emitOne();
    },
    get held() {
      return held;
    },
    get rows() {
      return maxRows;
    },
    set rows(rows: number) {
      maxRows = rows;
    },
    get keys() {
      return activeKeys;
    },
    get bytes() {
      return heldBytes;
    },
  };
}
