import { createReadStream } from 'node:fs';
import { open, type FileHandle } from 'node:fs/promises';
import { StringDecoder } from 'node:string_decoder';

const FLUSH_CHARS = 64 * 1024;

/**
 * An append-only file of text lines with its own buffer, so hundreds can be open at once at a bounded
 * cost (64 KB each) and every write of the buffer is awaited (backpressure, and errors surface).
 */
export class LineWriter {
  #handle: FileHandle | undefined;
  #buffer: string[] = [];
  #chars = 0;
  /** Bytes written to disk so far. */
  bytes = 0;
  lines = 0;

  private constructor(readonly path: string) {}

  static async create(path: string): Promise<LineWriter> {
    const writer = new LineWriter(path);
    writer.#handle = await open(path, 'wx');
    return writer;
  }

  /** Appends a line (without its line break); resolves at once unless the buffer had to be written. */
  write(line: string): Promise<void> | undefined {
    this.#buffer.push(line);
    this.#chars += line.length + 1;
    this.lines++;
    return this.#chars >= FLUSH_CHARS ? this.flush() : undefined;
  }

  async flush(): Promise<void> {
    if (this.#buffer.length === 0) return;
    const text = this.#buffer.join('\n') + '\n';
    this.#buffer = [];
    this.#chars = 0;
    const data = Buffer.from(text, 'utf8');
    this.bytes += data.length;
    await this.#handle!.write(data);
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

/** The lines of a file written by LineWriter, streamed 64 KB at a time. */
export async function* readLines(path: string): AsyncGenerator<string> {
  const decoder = new StringDecoder('utf8');
  let pending = '';
  for await (const chunk of createReadStream(path, { highWaterMark: 64 * 1024 })) {
    pending += decoder.write(chunk as Buffer);
    let start = 0;
    let newline: number;
    while ((newline = pending.indexOf('\n', start)) !== -1) {
      yield pending.slice(start, newline);
      start = newline + 1;
    }
    pending = pending.slice(start);
  }
  pending += decoder.end();
  if (pending.length > 0) yield pending;
}
