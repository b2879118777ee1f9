/**
 * The project's non-cryptographic hashes, in one place. Their outputs are persisted (shard suffixes in
 * tables and shard manifests, --segment, checkpoints) or shape reported figures, so none may change:
 * test/unit/shared/hash.test.ts pins them. Not for security.
 */

/** FNV-1a's 32-bit offset basis and prime. */
const FNV_OFFSET = 0x811c9dc5;
const FNV_PRIME = 0x01000193;

/** murmur3 x86_32 block constants. */
const MURMUR_C1 = 0xcc9e2d51;
const MURMUR_C2 = 0x1b873593;

/**
 * FNV-1a over UTF-16 code units, as an unsigned 32-bit number. `basis` lets a caller fold in state (a seed,
 * a number) before the text. Its low bits spread poorly for short keys; hash32 mixes them.
 */
export function fnv1a32(text: string, basis: number = FNV_OFFSET): number {
  let h = basis;
  for (let i = 0; i < text.length; i++) h = Math.imul(h ^ text.charCodeAt(i), FNV_PRIME);
  return h >>> 0;
}

/** murmur3's finaliser: every input bit flips each output bit with probability ~1/2. Unsigned 32-bit. */
export function fmix32(h: number): number {
  h ^= h >>> 16;
  h = Math.imul(h, 0x85ebca6b);
  h ^= h >>> 13;
  h = Math.imul(h, 0xc2b2ae35);
  h ^= h >>> 16;
  return h >>> 0;
}

/**
 * A fast, well-mixed 32-bit hash of a string: FNV-1a over UTF-16 code units, then murmur3's finaliser
 * so short keys that differ in one character still spread. Stable across runs and machines, which is
 * what partition models, --segment and resumed loads need.
 */
export function hash32(text: string): number {
  return fmix32(fnv1a32(text));
}

/**
 * Two murmur3 x86_32 lanes with different seeds over the same blocks of `value`, written to `out` (unsigned):
 * 64 bits of hash in one pass, for the distinct counter. A block is two UTF-16 code units (32 bits), so no
 * UTF-8 encoding is needed. `out` is the caller's, so the per-row call allocates nothing.
 */
export function murmur3Pair(value: string, seedA: number, seedB: number, out: Uint32Array): void {
  let a = seedA;
  let b = seedB;
  const length = value.length;
  let i = 0;
  for (; i + 1 < length; i += 2) {
    let k = value.charCodeAt(i) | (value.charCodeAt(i + 1) << 16);
    k = Math.imul(k, MURMUR_C1);
    k = (k << 15) | (k >>> 17);
    k = Math.imul(k, MURMUR_C2);
    a ^= k;
    a = (a << 13) | (a >>> 19);
    a = (Math.imul(a, 5) + 0xe6546b64) | 0;
    b ^= k;
    b = (b << 13) | (b >>> 19);
    b = (Math.imul(b, 5) + 0xe6546b64) | 0;
  }
  if (i < length) {
    let k = value.charCodeAt(i);
    k = Math.imul(k, MURMUR_C1);
    k = (k << 15) | (k >>> 17);
    k = Math.imul(k, MURMUR_C2);
    a ^= k;
    b ^= k;
  }
  out[0] = fmix32(a ^ length);
  out[1] = fmix32(b ^ length);
}
