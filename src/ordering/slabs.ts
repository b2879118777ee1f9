/** A Buffer that encoded writes are appended to; `live` counts the ones not yet released. */
export interface Slab {
  readonly buffer: Buffer;
  used: number;
  live: number;
}

/**
 * Encoded writes held as UTF-8 bytes in large Buffers rather than as objects or strings. Outside V8's
 * heap they cost no GC work and do not make V8 grow its heap to a multiple of what is held (V8 sizes the
 * heap from the live heap: a window of 50,000 PlannedWrite objects, ~55 MB live, had peaked at 450 MB of
 * RSS), and what they cost is counted, not estimated.
 *
 * Writes are appended to the current slab. Without keepAll, a slab whose writes were all released, and
 * that is not the current one, is emptied and kept for reuse (up to SPARE_SLABS of them): a Buffer left
 * to the GC goes back to the system only at V8's next full GC, so slabs dropped one after another
 * would pile up unseen. A slab is kept alive by its longest-held write; `bytes` counts it whole.
 */
/** Emptied slabs kept for reuse, at most. */
const SPARE_SLABS = 16;

export class Slabs {
  /** Bytes of the slabs alive now, spare ones included. */
  bytes = 0;

  /** Bytes of the slabs that hold writes now (spare ones left out). */
  get liveBytes(): number {
    return this.bytes - this.#spare.length * this.#slabBytes;
  }
  /** Bytes written to the slabs alive now (with keepAll: what RSS pays for large slabs, whose pages are touched only when written). */
  usedBytes = 0;
  /** Slabs allocated so far (for the global order, which addresses them by number). */
  readonly all: Slab[] = [];
  #current: Slab | undefined;
  readonly #spare: Slab[] = [];
  readonly #slabBytes: number;
  readonly #keepAll: boolean;

  /** keepAll: slabs are never dropped (writes are not released one by one; the whole store goes at once). */
  constructor(slabBytes: number, keepAll: boolean) {
    this.#slabBytes = slabBytes;
    this.#keepAll = keepAll;
  }

  /** Appends `text`; its bytes are [start, slab.used) of the slab returned by `last`, start returned. */
  add(text: string): number {
    let slab = this.#current;
    // UTF-8 takes at most 3 bytes per UTF-16 code unit; measure exactly only when that might not fit.
    if (slab === undefined || (3 * text.length > slab.buffer.length - slab.used && Buffer.byteLength(text, 'utf8') > slab.buffer.length - slab.used)) {
      slab = this.#newSlab(Math.max(this.#slabBytes, Buffer.byteLength(text, 'utf8')));
    }
    const start = slab.used;
    const written = slab.buffer.write(text, start, 'utf8');
    slab.used += written;
    this.usedBytes += written;
    slab.live++;
    return start;
  }

  /** The slab the last `add` wrote to. */
  get last(): Slab {
    return this.#current!;
  }

  /** One write of the slab is no longer held. */
  release(slab: Slab): void {
    slab.live--;
    if (slab.live === 0 && slab !== this.#current && !this.#keepAll) this.#drop(slab);
  }

  #drop(slab: Slab): void {
    this.usedBytes -= slab.used;
    slab.used = 0;
    if (slab.buffer.length === this.#slabBytes && this.#spare.length < SPARE_SLABS) this.#spare.push(slab);
    else this.bytes -= slab.buffer.length;
  }

  #newSlab(size: number): Slab {
    const previous = this.#current;
    if (previous !== undefined && previous.live === 0 && !this.#keepAll) this.#drop(previous);
    let slab = size === this.#slabBytes ? this.#spare.pop() : undefined;
    if (slab === undefined) {
      slab = { buffer: Buffer.allocUnsafeSlow(size), used: 0, live: 0 };
      this.bytes += size;
    }
    this.#current = slab;
    if (this.#keepAll) this.all.push(slab);
    return slab;
  }
}

/** A typed array of twice the length holding the same values first (growable columns of numbers). */
export function grown<T extends Uint32Array | Float64Array>(array: T): T {
  const bigger = new (array.constructor as new (length: number) => T)(2 * array.length);
  bigger.set(array);
  return bigger;
}
