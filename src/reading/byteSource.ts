import { open, type FileHandle } from 'node:fs/promises';
import type { AsyncBuffer } from 'hyparquet';
import type { FilePin } from './filePin.js';

/**
 * Random access to an input's bytes, for formats whose index is at the end (Parquet's footer). A local
 * file reads with positional reads; an S3 object can implement the same three members with ranged GETs.
 */
export interface ByteSource {
  /** Total size in bytes. */
  readonly byteLength: number;
  /** Bytes [start, end) of the input. */
  read(start: number, end: number): Promise<Uint8Array>;
  /** Bytes read so far, for progress. */
  bytesRead(): number;
  close(): Promise<void>;
}

/**
 * A local file read at offsets (fs read with a position), never as a whole. With the file's pin (an input
 * part's), the file is checked when opened and after every read, before its bytes are used.
 */
export async function fileByteSource(path: string, pin?: FilePin): Promise<ByteSource> {
  const handle: FileHandle = await open(path, 'r');
  let byteLength: number;
  try {
    const stats = await handle.stat();
    pin?.verify(stats);
    byteLength = stats.size;
  } catch (error) {
    await handle.close();
    throw error;
  }
  let total = 0;
  return {
    byteLength,
    async read(start, end) {
      const length = Math.max(0, Math.min(end, byteLength) - start);
      const buffer = Buffer.allocUnsafe(length);
      let done = 0;
      while (done < length) {
        const { bytesRead } = await handle.read(buffer, done, length - done, start + done);
        if (pin) pin.verifyDescriptor(handle.fd);
        if (bytesRead === 0) {
          if (pin) throw pin.changed(`it ended at byte ${start + done} of its ${byteLength}`);
          throw new Error(`file ended at byte ${start + done} while reading bytes ${start}-${end} (was it truncated while being read?)`);
        }
        done += bytesRead;
      }
      total += length;
      return buffer;
    },
    bytesRead: () => total,
    close: () => handle.close(),
  };
}

/** hyparquet's view of a byte source: slices as ArrayBuffers of their own. */
export function asyncBufferOf(source: ByteSource): AsyncBuffer {
  return {
    byteLength: source.byteLength,
    async slice(start, end) {
      const bytes = await source.read(start, end ?? source.byteLength);
      return bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.byteLength) as ArrayBuffer;
    },
  };
}
