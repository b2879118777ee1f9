/**
 * What the first bytes of an input say about it: its compression (gzip, zstd, bzip2) and, once
 * decompressed, formats with a signature of their own (Parquet, Amazon Ion). Pure.
 */

export type Compression = 'gzip' | 'zstd' | 'bzip2';

/** gzip 1f 8b; zstd frame 28 b5 2f fd (RFC 8878); bzip2 "BZh" and a block size digit 1-9. */
export function compressionOf(head: Uint8Array): Compression | undefined {
  if (head.length >= 2 && head[0] === 0x1f && head[1] === 0x8b) return 'gzip';
  if (head.length >= 4 && head[0] === 0x28 && head[1] === 0xb5 && head[2] === 0x2f && head[3] === 0xfd) return 'zstd';
  if (head.length >= 4 && head[0] === 0x42 && head[1] === 0x5a && head[2] === 0x68 && head[3]! >= 0x31 && head[3]! <= 0x39) return 'bzip2';
  return undefined;
}

export type SignedFormat = 'parquet' | 'ion' | 'ion-binary';

const ION_TEXT_MARKER = '$ion_1_0';

/**
 * Parquet files start (and end) with "PAR1"; binary Ion starts with its version marker e0 01 00 ea;
 * text Ion as DynamoDB exports write it starts with "$ion_1_0". Other inputs have no signature.
 */
export function signedFormatOf(head: Uint8Array): SignedFormat | undefined {
  if (head.length >= 4 && head[0] === 0x50 && head[1] === 0x41 && head[2] === 0x52 && head[3] === 0x31) return 'parquet';
  if (head.length >= 4 && head[0] === 0xe0 && head[1] === 0x01 && head[2] === 0x00 && head[3] === 0xea) return 'ion-binary';
  let start = 0;
  if (head[0] === 0xef && head[1] === 0xbb && head[2] === 0xbf) start = 3;
  while (start < head.length && (head[start] === 0x20 || head[start] === 0x0a || head[start] === 0x0d || head[start] === 0x09)) start++;
  const text = Buffer.from(head.subarray(start, start + ION_TEXT_MARKER.length)).toString('latin1');
  return text === ION_TEXT_MARKER ? 'ion' : undefined;
}
