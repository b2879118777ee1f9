import type { ItemSizes } from './estimateTypes.js';
import { MAX_ITEM_BYTES } from '../typing/itemSize.js';

/**
 * Item sizes in bands, by upper bound in bytes. The bands double from 1 KB because write units are
 * per started KB (a 1,025-byte item costs 2): the first bands tell the cost, the last ones tell how close
 * items come to the 400 KB limit. KB is 1,024 bytes, as DynamoDB counts it.
 */
export const SIZE_BANDS: readonly number[] = Object.freeze([1, 2, 4, 8, 16, 32, 64, 128, 256, 400].map((kb) => kb * 1024));

export class SizeHistogram {
  readonly #counts = new Float64Array(SIZE_BANDS.length);
  #items = 0;
  #totalBytes = 0;
  #maxBytes = 0;

  /** Counts one item of `bytes` (its DynamoDB size); throws a RangeError above 400 KB, which no valid item is. */
  add(bytes: number): void {
    if (!(Number.isFinite(bytes) && bytes >= 0)) throw new RangeError(`bytes must be a finite number >= 0, got ${bytes}`);
    if (bytes > MAX_ITEM_BYTES) throw new RangeError(`bytes must be at most ${MAX_ITEM_BYTES} (DynamoDB's item limit), got ${bytes}`);
    this.#counts[bandOf(bytes)]!++;
    this.#items++;
    this.#totalBytes += bytes;
    if (bytes > this.#maxBytes) this.#maxBytes = bytes;
  }

  get items(): number {
    return this.#items;
  }

  /** Totals and every band, empty ones included, so reports always show the same rows. */
  toJSON(): ItemSizes {
    return {
      totalBytes: this.#totalBytes,
      averageBytes: this.#items === 0 ? 0 : this.#totalBytes / this.#items,
      maxBytes: this.#maxBytes,
      histogram: SIZE_BANDS.map((upToBytes, i) => ({ upToBytes, items: this.#counts[i]! })),
    };
  }
}

/** Index of the first band whose bound is >= bytes: an item of exactly 1,024 bytes is a 1 KB item (1 write unit). */
function bandOf(bytes: number): number {
  // Below 256 KB the bands are powers of two: ceil(log2(ceil(bytes / 1024))) without a loop.
  const kb = Math.max(1, Math.ceil(bytes / 1024));
  return kb > 256 ? SIZE_BANDS.length - 1 : 32 - Math.clz32(kb - 1);
}
