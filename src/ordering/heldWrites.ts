import { orderPrimary, type GlobalOrderMode } from './order.js';
import type { PlannedWrite } from '../shared/types.js';
import { decodeWrite, encodeWrite } from './writeCodec.js';
import { grown, Slabs } from './slabs.js';

/** Per row of capacity: slab number, start, end and key number (Uint32). */
const ROW_BYTES = 4 * 4;
/**
 * Per row, what ordering takes at drain time: the order keys (2 Float64), the row numbers to sort
 * (Uint32) and the sort's own copy of them (V8 sorts a typed array with a comparator in a work array).
 */
const DRAIN_ROW_BYTES = 2 * 8 + 4 + 16;
/** Per key: the typed arrays (first: Float64, count: Uint32) and, beyond its text, the Map entry. */
const KEY_BYTES = 8 + 4 + 64;

/**
 * A global order (round-robin, spread) held in memory: every write as its encoded bytes in slabs, the
 * rest in typed arrays, so what the order holds is what `bytes` says (counted, not estimated) and V8's
 * heap holds only the partition keys. Ordered at the end by sorting row numbers.
 */
export class HeldWrites {
  readonly #mode: GlobalOrderMode;
  readonly #slabs: Slabs;
  #rows = 0;
  /** The input's name, held once rather than in every encoding (see encodeWrite). */
  #file: string | undefined;
  #slabOf = new Uint32Array(1024);
  #startOf = new Uint32Array(1024);
  #endOf = new Uint32Array(1024);
  #keyOf = new Uint32Array(1024);
  /** Partition identity -> key number, in order of first appearance. */
  readonly #keys = new Map<string, number>();
  #keyFirst = new Float64Array(256);
  #keyCount = new Uint32Array(256);
  #keyTextBytes = 0;

  constructor(mode: GlobalOrderMode, slabBytes: number) {
    this.#mode = mode;
    this.#slabs = new Slabs(slabBytes, true);
  }

  /**
   * Bytes that holding these writes costs, and ordering them at drain time will: the encodings (the
   * bytes written to the slabs: a large slab's pages cost memory only once written), the typed arrays
   * (their capacity), the keys, and the sort.
   */
  get bytes(): number {
    return (
      this.#slabs.usedBytes +
      ROW_BYTES * this.#slabOf.length +
      DRAIN_ROW_BYTES * this.#rows +
      12 * this.#keyFirst.length +
      KEY_BYTES * this.#keys.size +
      this.#keyTextBytes
    );
  }

  /** Bytes of the stored writes' encodings, and of their raw text: how much bigger the encoding is. */
  encodedBytes = 0;
  rawBytes = 0;

  /** Stores the next write in input order (its row number is its input position among the writes). */
  push(write: PlannedWrite): void {
    const partition = write.partitionId;
    let key = this.#keys.get(partition);
    if (key === undefined) {
      key = this.#keys.size;
      this.#keys.set(partition, key);
      if (key === this.#keyFirst.length) {
        this.#keyFirst = grown(this.#keyFirst);
        this.#keyCount = grown(this.#keyCount);
      }
      this.#keyFirst[key] = this.#rows;
      this.#keyCount[key] = 1;
      // V8 stores a Latin-1 string in 1 byte a character, others in 2.
      this.#keyTextBytes += 16 + (isLatin1(partition) ? 1 : 2) * partition.length;
    } else {
      this.#keyCount[key]!++;
    }
    const row = this.#rows++;
    if (row === this.#slabOf.length) {
      this.#slabOf = grown(this.#slabOf);
      this.#startOf = grown(this.#startOf);
      this.#endOf = grown(this.#endOf);
      this.#keyOf = grown(this.#keyOf);
    }
    this.#file ??= write.origin.file;
    const start = this.#slabs.add(encodeWrite(write, this.#file));
    this.#slabOf[row] = this.#slabs.all.length - 1;
    this.#startOf[row] = start;
    this.#endOf[row] = this.#slabs.last.used;
    this.#keyOf[row] = key;
    this.encodedBytes += this.#endOf[row]! - start;
    this.rawBytes += write.origin.raw.length + 1;
  }

  /** The writes in input order (row number = input position): partition and the bytes of the encoding. */
  *stored(): Generator<{ partition: string; buffer: Buffer; start: number; end: number }> {
    const partitions = [...this.#keys.keys()];
    for (let r = 0; r < this.#rows; r++) {
      yield { partition: partitions[this.#keyOf[r]!]!, buffer: this.#slabs.all[this.#slabOf[r]!]!.buffer, start: this.#startOf[r]!, end: this.#endOf[r]! };
    }
  }

  /** The stored writes in the global order (decoded one at a time). */
  *ordered(): Generator<PlannedWrite> {
    const n = this.#rows;
    const primary = new Float64Array(n);
    const first = new Float64Array(n);
    const seen = new Uint32Array(this.#keys.size);
    for (let r = 0; r < n; r++) {
      const key = this.#keyOf[r]!;
      const keyFirst = this.#keyFirst[key]!;
      primary[r] = orderPrimary(this.#mode, seen[key]!++, this.#keyCount[key]!, keyFirst);
      first[r] = keyFirst;
    }
    const order = new Uint32Array(n);
    for (let r = 0; r < n; r++) order[r] = r;
    order.sort((a, b) => primary[a]! - primary[b]! || first[a]! - first[b]!);
    const slabs = this.#slabs.all;
    for (let i = 0; i < n; i++) {
      const r = order[i]!;
      yield decodeWrite(slabs[this.#slabOf[r]!]!.buffer.toString('utf8', this.#startOf[r]!, this.#endOf[r]!), this.#file);
    }
  }
}

function isLatin1(text: string): boolean {
  for (let i = 0; i < text.length; i++) if (text.charCodeAt(i) > 0xff) return false;
  return true;
}
