import { formatCount } from '../shared/format.js';

/**
 * The most raw text one record (a JSON line, a CSV record) may have: 4 MiB. DynamoDB items are at most
 * 400 KB, but their text can be larger: JSON escapes (\u0001 is 6 bytes for 1), DynamoDB JSON wrappers
 * ({"NULL":true} is 13 bytes for an element of 2) and doubled CSV quotes. About 10x the item limit covers
 * those with room to spare; a record over it cannot be an item, and holding it would cost memory for
 * nothing (a 2 GB line crashed Node). The reader skips such a record to its end without holding it.
 */
export const MAX_RECORD_BYTES = 4 * 1024 * 1024;

/** How much of an oversized record the reject file keeps. */
export const KEPT_RAW_BYTES = 1024;

/** The first `KEPT_RAW_BYTES` of a record as text, cut at a character boundary. */
export function keptRaw(bytes: Uint8Array): string {
  let end = Math.min(bytes.length, KEPT_RAW_BYTES);
  // Back off to the start of a character, so the cut never makes a U+FFFD of its own.
  if (end < bytes.length) while (end > 0 && (bytes[end]! & 0xc0) === 0x80) end--;
  return Buffer.from(bytes.buffer, bytes.byteOffset, end).toString('utf8');
}

export function tooLargeMessage(what: string, bytes: number, maxBytes: number): string {
  return `${what} is ${formatCount(bytes)} bytes, over the ${maxBytes % (1024 * 1024) === 0 ? `${maxBytes / 1024 / 1024} MiB` : `${maxBytes} bytes`} a record may have (DynamoDB items are at most 400 KB); it was skipped without being read whole, and the reject file keeps only its first ${formatCount(KEPT_RAW_BYTES)} bytes`;
}
