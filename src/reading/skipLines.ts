import { Readable } from 'node:stream';

/**
 * The bytes of a stream after its first `lines` line breaks ("\n"), for a reader of one record per line
 * (JSON lines, DynamoDB's JSON and Ion exports) that resumes past line `lines`: the bytes before are only
 * searched for "\n", never decoded. A JSON line cannot hold a raw line break (JSON strings escape them),
 * nor an Ion line as the export writes it (each line is one value), so counting "\n" finds the line again
 * without following any quoting. A stream that ends first gives nothing more: its last line had no line
 * break after it, and was the part's last record.
 */
export async function skipLines(stream: Readable, lines: number): Promise<Readable> {
  if (lines <= 0) return stream;
  const chunks = stream[Symbol.asyncIterator]() as AsyncIterator<Buffer | string>;
  let left = lines;
  for (;;) {
    const next = await chunks.next();
    if (next.done) return Readable.from([], { objectMode: false });
    const chunk = typeof next.value === 'string' ? Buffer.from(next.value) : next.value;
    let at = 0;
    for (;;) {
      const newline = chunk.indexOf(10, at);
      if (newline === -1) break;
      at = newline + 1;
      if (--left === 0) return Readable.from(rest(chunk.subarray(at), chunks), { objectMode: false });
    }
  }
}

async function* rest(first: Buffer, chunks: AsyncIterator<Buffer | string>): AsyncGenerator<Buffer> {
  if (first.length > 0) yield first;
  for (;;) {
    const next = await chunks.next();
    if (next.done) return;
    yield typeof next.value === 'string' ? Buffer.from(next.value) : next.value;
  }
}
