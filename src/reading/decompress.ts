import { Duplex, PassThrough, Transform, type Readable } from 'node:stream';
import * as zlib from 'node:zlib';
import { Decompress as ZstdDecompress } from 'fzstd';
import unbzip2 from 'unbzip2-stream';
import type { Compression } from './magic.js';

/**
 * The decompressed bytes of `input`. gzip and zstd use Node's zlib (zstd from Node 22.15 / 23.8; older
 * runtimes use fzstd, a pure-JavaScript streaming decoder); bzip2 uses unbzip2-stream. Each streams with
 * backpressure, so memory stays bounded whatever the size; concatenated members or frames are read
 * through. A failure (a truncated or corrupt file) comes out as an error of the returned stream, where
 * the reader names the file.
 */
export function decompress(input: Readable, compression: Compression): Readable {
  const decoder = decoderFor(compression);
  input.on('error', (error) => decoder.destroy(error));
  return input.pipe(decoder);
}

function decoderFor(compression: Compression): Duplex {
  switch (compression) {
    case 'gzip':
      return zlib.createGunzip();
    case 'zstd':
      return nativeZstd() ?? fzstdTransform();
    case 'bzip2':
      return bzip2Stream();
  }
}

/** Node's own zstd decoder where the runtime has one. */
function nativeZstd(): Transform | undefined {
  const create = (zlib as { createZstdDecompress?: () => Transform }).createZstdDecompress;
  return typeof create === 'function' ? create() : undefined;
}

/** fzstd's push decoder as a Transform (exported for tests on runtimes that have the native one). */
export function fzstdTransform(): Transform {
  const decoder = new ZstdDecompress();
  let sawInput = false;
  const transform = new Transform({
    transform(chunk: Buffer, _encoding, callback) {
      sawInput ||= chunk.length > 0;
      try {
        decoder.push(new Uint8Array(chunk.buffer, chunk.byteOffset, chunk.byteLength));
        callback();
      } catch (error) {
        callback(error as Error);
      }
    },
    flush(callback) {
      try {
        if (sawInput) decoder.push(new Uint8Array(0), true);
        callback();
      } catch (error) {
        callback(error as Error);
      }
    },
  });
  decoder.ondata = (data) => {
    transform.push(Buffer.from(data));
  };
  return transform;
}

/** unbzip2-stream is a classic `through` stream; PassThroughs around it give the reader a modern duplex. */
function bzip2Stream(): Duplex {
  const input = new PassThrough();
  const output = new PassThrough();
  const bz = unbzip2();
  bz.on('error', (error: Error) => output.destroy(error));
  input.pipe(bz).pipe(output);
  return Duplex.from({ writable: input, readable: output });
}
