import { Duplex, PassThrough, Transform, type Readable, type TransformCallback } from 'node:stream';
import { createGunzip } from 'node:zlib';
import { Decompress as ZstdDecompress } from 'fzstd';
import unbzip2 from 'unbzip2-stream';
import xxhash, { type XXHash, type XXHashAPI } from 'xxhash-wasm';
import type { Compression } from './magic.js';
import { ZstdFrameScanner, type ZstdFrameHeader } from './zstdFrames.js';

/**
 * The decompressed bytes of `input`. gzip uses Node's zlib; zstd uses fzstd, a pure-JavaScript streaming
 * decoder, even where Node has its own (22.15+): Node 22.23's createZstdDecompress stops after the first
 * frame of a file made of several (pzstd, `cat a.zst b.zst`) and ends without an error on a truncated
 * file, and either would drop rows silently (measured: test/unit/reading/formats.test.ts; fzstd decodes
 * 22 MB/s here against 57 MB/s, far above any write rate). fzstd checks no frame's checksum or size:
 * fzstdTransform does. bzip2 uses unbzip2-stream. Each streams with
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

/**
 * fzstd's push decoder as a Transform that checks what fzstd does not: ZstdFrameScanner delimits each
 * frame from the compressed bytes, a fresh decoder decodes it, and at its end the bytes it gave must
 * number the Frame_Content_Size and hash (XXH64, low 32 bits) to the Content_Checksum the frame carries.
 * Without that a flipped byte decoded to other rows without an error (10,841 of 20,000 rows, exit 0).
 * A frame that carries neither cannot be checked (the zstd command writes the checksum by default).
 * Node's own decoder (22.15+) does check checksums, but it ends quietly on a truncated file and after
 * the first frame (measured on 22.23), so it is not used. The content of a damaged frame is passed on
 * before its end is checked, as gunzip does with a gzip member's CRC: the read then fails naming the file.
 */
export function fzstdTransform(): Transform {
  let frame: { decoder: ZstdDecompress; header: ZstdFrameHeader; hash: XXHash<bigint> | undefined; size: number } | undefined;
  let api: XXHashAPI | undefined;
  const scanner = new ZstdFrameScanner({
    start(header) {
      if (header.dictionaryId !== 0) throw new Error(`frame ${header.frame} needs zstd dictionary ${header.dictionaryId}, and no dictionary can be given`);
      const current = { decoder: new ZstdDecompress(), header, hash: header.checksum ? api!.create64(0n) : undefined, size: 0 };
      current.decoder.ondata = (data) => {
        if (data.length === 0) return;
        current.hash?.update(data);
        current.size += data.length;
        transform.push(Buffer.from(data));
      };
      frame = current;
    },
    bytes(part) {
      frame!.decoder.push(part);
    },
    end(checksum) {
      const current = frame!;
      frame = undefined;
      current.decoder.push(new Uint8Array(0), true);
      const { header, hash, size } = current;
      if (header.contentSize !== undefined && BigInt(size) !== header.contentSize)
        throw new Error(`frame ${header.frame} decodes to ${size} bytes, its header says ${header.contentSize}`);
      if (hash && checksum !== Number(hash.digest() & 0xffffffffn)) throw new Error(`the content of frame ${header.frame} does not match its checksum`);
    },
  });
  const scan = (chunk: Buffer, callback: TransformCallback): void => {
    try {
      scanner.push(new Uint8Array(chunk.buffer, chunk.byteOffset, chunk.byteLength));
      callback();
    } catch (error) {
      callback(zstdError(error));
    }
  };
  const transform = new Transform({
    transform(chunk: Buffer, _encoding, callback) {
      if (api) return scan(chunk, callback);
      (hashing ??= xxhash()).then(
        (loaded) => {
          api = loaded;
          scan(chunk, callback);
        },
        (error: Error) => callback(error),
      );
    },
    flush(callback) {
      try {
        scanner.finish();
        callback();
      } catch (error) {
        callback(zstdError(error));
      }
    },
  });
  return transform;
}

/** xxhash-wasm's functions, compiled once, when the first zstd input is read. */
let hashing: Promise<XXHashAPI> | undefined;

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
