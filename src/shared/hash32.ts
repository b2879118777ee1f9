/**
 * A fast, well-mixed 32-bit hash of a string: FNV-1a over UTF-16 code units, then murmur3's finaliser
 * so short keys that differ in one character still spread. Stable across runs and machines, which is
 * what partition models, --segment and resumed loads need; not for security.
 */
export function hash32(text: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) {
    h ^= text.charCodeAt(i);
    h = Math.imul(h, 0x01000193);
  }
  h ^= h >>> 16;
  h = Math.imul(h, 0x85ebca6b);
  h ^= h >>> 13;
  h = Math.imul(h, 0xc2b2ae35);
  h ^= h >>> 16;
  return h >>> 0;
}
