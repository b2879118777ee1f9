import { Duplex, PassThrough, Transform, type Readable } from 'node:stream';
import { createGunzip } from 'node:zlib';
import { Decompress as ZstdDecompress } from 'fzstd';
import unbzip2 from 'unbzip2-stream';
import type { Compression } from './magic.js';

/**
 * The decompressed bytes of `input`. gzip uses Node's zlib; zstd uses fzstd, a pure-JavaScript streaming
 * decoder, even where Node has its own (22.15+): Node 22.23's createZstdDecompress stops after the first
 * frame of a file made of several (pzstd, `cat a.zst b.zst`) and ends without an error on a truncated
 * file, and either would drop rows silently (measured: test/unit/reading/formats.test.ts; fzstd decodes
 * 22 MB/s here against 57 MB/s, far above any write rate). bzip2 uses unbzip2-stream. Each streams with
 * backpressure, so memory stays bounded whatever the size; concatenated members, frames or streams are
 * read through. A failure (a truncated or corrupt file) comes out as an error of the returned stream
 * that says so, whatever the decoder threw (unbzip2-stream throws a TypeError on a truncated file), and
 * the reader names the file. An error of the input itself (a read error) comes out as it is.
 */
export function decompress(input: Readable, compression: Compression): Readable {
  const decoder = decoderFor(compression);
  const output = new PassThrough({ highWaterMark: 256 * 1024 });
  const ofInput = new WeakSet<Error>();
  input.on('error', (error) => {
    ofInput.add(error);
    decoder.destroy(error);
  });
  decoder.on('error', (error: Error) => output.destroy(ofInput.has(error) ? error : damaged(compression, error)));
  output.on('close', () => {
    if (!decoder.destroyed) decoder.destroy();
  });
  return input.pipe(decoder).pipe(output);
}

/** A decoder's failure, said as what it means: the compressed bytes are truncated or corrupt. */
function damaged(compression: Compression, error: Error): Error {
  if (error.message.startsWith(`${compression} data is corrupt or truncated`)) return error;
  // A TypeError or RangeError is the decoder tripping over bytes that end or break off: its text says nothing to the user.
  const why = error instanceof TypeError || error instanceof RangeError ? 'its bytes end or break off inside a block' : error.message;
  return new Error(`${compression} data is corrupt or truncated (${why})`, { cause: error });
}

function decoderFor(compression: Compression): Duplex {
  switch (compression) {
    case 'gzip':
      return createGunzip();
    case 'zstd':
      return fzstdTransform();
    case 'bzip2':
      return bzip2Stream();
  }
}

/** fzstd's push decoder as a Transform: every frame, and an error at the end of a truncated one. */
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
        callback(zstdError(error));
      }
    },
    flush(callback) {
      try {
        if (sawInput) decoder.push(new Uint8Array(0), true);
        callback();
      } catch (error) {
        callback(zstdError(error));
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

/** fzstd's errors carry a numeric `code`; the readers expect Node's string codes, so only the message is kept. */
function zstdError(error: unknown): Error {
  return new Error(`zstd data is corrupt or truncated (${(error as Error).message})`);
}
