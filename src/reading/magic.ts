/**
 * What the first bytes of an input say about it: its compression (gzip, zstd, bzip2) and, once
 * decompressed, formats with a signature of their own (Parquet, Amazon Ion). Pure.
 */

export type Compression = 'gzip' | 'zstd' | 'bzip2';

/**
 * The first bytes of each compression: gzip 1f 8b; zstd frame 28 b5 2f fd (RFC 8878); bzip2 "BZh" (then a
 * block size digit 1-9); xz fd "7zXZ" 00, which is not read but must not be cut as text either.
 */
const COMPRESSION_MAGIC = {
  gzip: [0x1f, 0x8b],
  zstd: [0x28, 0xb5, 0x2f, 0xfd],
  bzip2: [0x42, 0x5a, 0x68],
  xz: [0xfd, 0x37, 0x7a, 0x58, 0x5a, 0x00],
} as const;
/** "PAR1": a Parquet file's first (and last) bytes. */
const PARQUET_MAGIC = [0x50, 0x41, 0x52, 0x31] as const;

function startsWith(head: Uint8Array, magic: readonly number[]): boolean {
  return head.length >= magic.length && magic.every((byte, i) => head[i] === byte);
}

/** The compression the first bytes announce; bzip2 also needs its block size digit. */
export function compressionOf(head: Uint8Array): Compression | undefined {
  if (startsWith(head, COMPRESSION_MAGIC.gzip)) return 'gzip';
  if (startsWith(head, COMPRESSION_MAGIC.zstd)) return 'zstd';
  if (startsWith(head, COMPRESSION_MAGIC.bzip2) && head.length >= 4 && head[3]! >= 0x31 && head[3]! <= 0x39) return 'bzip2';
  return undefined;
}

/**
 * False when the first bytes are those of a compressed file (gzip, zstd, bzip2, xz) or a Parquet file:
 * such a file cannot be read from the middle, so it is never cut into stripes.
 */
export function mayBeCut(head: Uint8Array): boolean {
  return !Object.values(COMPRESSION_MAGIC).some((magic) => startsWith(head, magic)) && !startsWith(head, PARQUET_MAGIC);
}

export type SignedFormat = 'parquet' | 'ion' | 'ion-binary';

const ION_TEXT_MARKER = '$ion_1_0';

/**
 * Parquet files start (and end) with "PAR1"; binary Ion starts with its version marker e0 01 00 ea;
 * text Ion as DynamoDB exports write it starts with "$ion_1_0". Other inputs have no signature.
 */
export function signedFormatOf(head: Uint8Array): SignedFormat | undefined {
  if (startsWith(head, PARQUET_MAGIC)) return 'parquet';
  if (head.length >= 4 && head[0] === 0xe0 && head[1] === 0x01 && head[2] === 0x00 && head[3] === 0xea) return 'ion-binary';
  let start = 0;
  if (head[0] === 0xef && head[1] === 0xbb && head[2] === 0xbf) start = 3;
  while (start < head.length && (head[start] === 0x20 || head[start] === 0x0a || head[start] === 0x0d || head[start] === 0x09)) start++;
  const text = Buffer.from(head.subarray(start, start + ION_TEXT_MARKER.length)).toString('latin1');
  return text === ION_TEXT_MARKER ? 'ion' : undefined;
}
