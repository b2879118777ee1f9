import { open, type FileHandle } from 'node:fs/promises';
import { deflateRawSync } from 'node:zlib';
import { createNewPrivateFile } from '../files/privateFiles.js';

const NEWLINE = 0x0a;
/** A frame's header: the compressed length and the length of the lines it holds (two UInt32LE). */
const FRAME_HEADER = 8;
/** Level 1: the temporary files are read once or twice, soon; speed matters more than the last bytes. */
const DEFLATE_LEVEL = 1;

/**
 * Bytes in temporary files now (written less unlinked) and the most at once: the order's own count of
 * the disk it takes, in the files' own bytes (compressed), not sampled.
 */
export class TempSpace {
  written = 0;
  live = 0;
  peak = 0;

  add(bytes: number): void {
    this.written += bytes;
    this.live += bytes;
    if (this.live > this.peak) this.peak = this.live;
  }

  /** A file of `bytes` bytes was unlinked. */
  remove(bytes: number): void {
    this.live -= bytes;
  }
}

export interface LineWriterOptions {
  /**
   * Each buffer goes to disk as one frame, deflated (level 1), after a header of its compressed and
   * plain lengths; read back with readLineBlocks(path, _, true) or readFramedFile. Lines never span
   * frames (a buffer holds whole lines; a line longer than the buffer is a frame of its own).
   */
  compressed?: boolean;
  /** Told of every byte written. */
  space?: TempSpace;
}

/**
 * An append-only file of lines written through one Buffer of its own, so hundreds can be open at once at
 * a known cost (`bufferBytes` each, outside V8's heap) and every write of the buffer is awaited
 * (backpressure, and errors surface). Lines are UTF-8 text or bytes copied from another buffer; they
 * must not hold a line break themselves.
 */
export class LineWriter {
  #handle: FileHandle | undefined;
  readonly #buffer: Buffer;
  #used = 0;
  /** Bytes written to disk so far. */
  bytes = 0;
  /** Bytes of the lines written so far, line breaks included (`bytes` unless compressed). */
  plainBytes = 0;
  lines = 0;
  readonly #compressed: boolean;
  readonly #space: TempSpace | undefined;

  private constructor(
    readonly path: string,
    bufferBytes: number,
    options: LineWriterOptions,
  ) {
    this.#buffer = Buffer.allocUnsafeSlow(bufferBytes);
    this.#compressed = options.compressed ?? false;
    this.#space = options.space;
  }

  /** Bytes of the buffer: what the writer holds in memory. */
  get bufferBytes(): number {
    return this.#buffer.length;
  }

  static async create(path: string, bufferBytes = 64 * 1024, options: LineWriterOptions = {}): Promise<LineWriter> {
    const writer = new LineWriter(path, bufferBytes, options);
    // Private (0600) and never through a symlink: the temporary files hold rows.
    writer.#handle = await createNewPrivateFile(path);
    return writer;
  }

  /** Appends `text` and a line break; resolves at once unless the buffer had to be written. */
  write(text: string): Promise<void> | undefined {
    return this.writeParts(text, undefined, 0, 0);
  }

  /** Appends `prefix`, then bytes [start, end) of `bytes`, then a line break, as one line. */
  writeParts(prefix: string, bytes: Uint8Array | undefined, start: number, end: number): Promise<void> | undefined {
    // UTF-8 takes at most 3 bytes per UTF-16 code unit.
    const most = 3 * prefix.length + (end - start) + 1;
    if (most > this.#buffer.length - this.#used) return this.#writeSlow(prefix, bytes, start, end);
    this.#append(prefix, bytes, start, end);
    return undefined;
  }

  #append(prefix: string, bytes: Uint8Array | undefined, start: number, end: number): void {
    const buffer = this.#buffer;
    if (prefix.length > 0) this.#used += buffer.write(prefix, this.#used, 'utf8');
    if (bytes !== undefined && end > start) {
      buffer.set(bytes.subarray(start, end), this.#used);
      this.#used += end - start;
    }
    buffer[this.#used++] = NEWLINE;
    this.lines++;
  }

  async #writeSlow(prefix: string, bytes: Uint8Array | undefined, start: number, end: number): Promise<void> {
    await this.flush();
    if (3 * prefix.length + (end - start) + 1 <= this.#buffer.length) {
      this.#append(prefix, bytes, start, end);
      return;
    }
    // A line longer than the buffer goes out on its own.
    const parts = [Buffer.from(prefix, 'utf8'), ...(bytes === undefined ? [] : [bytes.subarray(start, end)]), Buffer.of(NEWLINE)];
    const line = Buffer.concat(parts);
    this.lines++;
    await this.#writeAll(line, line.length);
  }

  async flush(): Promise<void> {
    if (this.#used === 0) return;
    const length = this.#used;
    this.#used = 0;
    await this.#writeAll(this.#buffer, length);
  }

  async #writeAll(data: Buffer, length: number): Promise<void> {
    this.plainBytes += length;
    if (this.#compressed) {
      // On this thread: deflated in libuv's pool, each pool thread's malloc arena kept what its deflate
      // states had taken (a 1M-row round-robin peaked at 256 MB of RSS, 238 MB with MALLOC_ARENA_MAX=1).
      const packed = deflateRawSync(data.subarray(0, length), { level: DEFLATE_LEVEL });
      const header = Buffer.allocUnsafe(FRAME_HEADER);
      header.writeUInt32LE(packed.length, 0);
      header.writeUInt32LE(length, 4);
      await this.#writeBytes(header, FRAME_HEADER);
      await this.#writeBytes(packed, packed.length);
    } else {
      await this.#writeBytes(data, length);
    }
  }

  async #writeBytes(data: Buffer, length: number): Promise<void> {
    let done = 0;
    while (done < length) {
      const { bytesWritten } = await this.#handle!.write(data, done, length - done);
      done += bytesWritten;
    }
    this.bytes += length;
    this.#space?.add(length);
  }

  async close(): Promise<void> {
    if (!this.#handle) return;
    try {
      await this.flush();
    } finally {
      const handle = this.#handle;
      this.#handle = undefined;
      await handle.close();
    }
  }
}

/** A run of whole lines in `buffer`, [start, end), each ending with a line break (the last may not). */
export interface LineBlock {
  buffer: Buffer;
  start: number;
  end: number;
}

/**
 * The lines of a file, a block of whole lines at a time, read into one reused Buffer of at least
 * `blockBytes` (it grows only for a line longer than itself). A block is valid until the next one is
 * asked for. The file is closed when the loop ends, by exhaustion, break or error. A compressed file
 * (LineWriterOptions) is read a frame at a time instead, each frame one block.
 */
export async function* readLineBlocks(path: string, blockBytes = 64 * 1024, compressed = false): AsyncGenerator<LineBlock> {
  if (compressed) {
    yield* readFrames(path);
    return;
  }
  const handle = await open(path, 'r');
  try {
    let buffer: Buffer = Buffer.allocUnsafeSlow(blockBytes);
    let filled = 0;
    for (;;) {
      const { bytesRead } = await handle.read(buffer, filled, buffer.length - filled, null);
      filled += bytesRead;
      if (bytesRead === 0) {
        // End of file: what is left is a last line without a line break.
        if (filled > 0) yield { buffer, start: 0, end: filled };
        return;
      }
      const last = buffer.lastIndexOf(NEWLINE, filled - 1);
      if (last === -1) {
        if (filled === buffer.length) buffer = grow(buffer, filled);
        continue;
      }
      yield { buffer, start: 0, end: last + 1 };
      // The partial line after the last break moves to the front.
      buffer.copyWithin(0, last + 1, filled);
      filled -= last + 1;
    }
  } finally {
    await handle.close();
  }
}

/**
 * The frames of a compressed line file, each inflated into one reused Buffer (fflate can inflate into a
 * given buffer; node:zlib allocates new ones for every frame, and that garbage, outside V8's heap, is
 * freed only when V8 gets to it: a merge of 14 runs held 15 MB more RSS for it).
 */
async function* readFrames(path: string): AsyncGenerator<LineBlock> {
  // Loaded when a spilled file is first read back: a load that spills nothing never needs it.
  const { inflateSync } = await import('fflate');
  const handle = await open(path, 'r');
  try {
    const header = Buffer.allocUnsafe(FRAME_HEADER);
    let packed = Buffer.allocUnsafeSlow(64 * 1024);
    let plain = Buffer.allocUnsafeSlow(64 * 1024 + 1);
    let at = 0;
    for (;;) {
      const got = await readFully(handle, header, FRAME_HEADER, at);
      if (got === 0) return;
      if (got < FRAME_HEADER) throw new Error(`${path}: a frame header is cut short at byte ${at}`);
      const packedLength = header.readUInt32LE(0);
      const plainLength = header.readUInt32LE(4);
      if (packed.length < packedLength) packed = Buffer.allocUnsafeSlow(packedLength);
      if ((await readFully(handle, packed, packedLength, at + FRAME_HEADER)) < packedLength) throw new Error(`${path}: a frame is cut short at byte ${at}`);
      at += FRAME_HEADER + packedLength;
      // A byte more than the frame should hold, so that a frame holding more shows.
      if (plain.length <= plainLength) plain = Buffer.allocUnsafeSlow(plainLength + 1);
      const inflated = inflateSync(packed.subarray(0, packedLength), { out: plain }).length;
      if (inflated !== plainLength) throw new Error(`${path}: a frame at byte ${at} holds ${inflated} bytes, not ${plainLength}`);
      yield { buffer: plain, start: 0, end: plainLength };
    }
  } finally {
    await handle.close();
  }
}

/** Reads up to `length` bytes at `position`; fewer only at the end of the file. */
async function readFully(handle: FileHandle, into: Buffer, length: number, position: number): Promise<number> {
  let done = 0;
  while (done < length) {
    const { bytesRead } = await handle.read(into, done, length - done, position + done);
    if (bytesRead === 0) break;
    done += bytesRead;
  }
  return done;
}

function grow(buffer: Buffer, filled: number): Buffer {
  const bigger = Buffer.allocUnsafeSlow(2 * buffer.length);
  buffer.copy(bigger, 0, 0, filled);
  return bigger;
}

/** Calls `line(start, end)` for each line of the block, the line break excluded. */
export function forEachLine(block: LineBlock, line: (start: number, end: number) => void): void {
  const { buffer, end } = block;
  let start = block.start;
  while (start < end) {
    let stop = buffer.indexOf(NEWLINE, start);
    if (stop === -1 || stop >= end) stop = end;
    line(start, stop);
    start = stop + 1;
  }
}

/** The lines of a file (compressed or not) as strings: for tests and small files. */
export async function* readLines(path: string, compressed = false): AsyncGenerator<string> {
  for await (const block of readLineBlocks(path, 64 * 1024, compressed)) {
    const lines: string[] = [];
    forEachLine(block, (start, end) => lines.push(block.buffer.toString('utf8', start, end)));
    yield* lines;
  }
}
