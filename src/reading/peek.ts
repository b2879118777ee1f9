import { Readable } from 'node:stream';

/**
 * The first chunk of a stream, and a stream of all its bytes (that chunk put back in front). An unshift
 * would lose the chunk if the stream already ended, as a short stdin does. `head` is empty for an empty
 * stream. Destroying the returned stream ends the original one.
 */
export async function peekFirstChunk(input: Readable): Promise<{ head: Buffer; stream: Readable }> {
  const chunks = input[Symbol.asyncIterator]() as AsyncIterator<Buffer>;
  const first = await chunks.next();
  if (first.done) return { head: Buffer.alloc(0), stream: Readable.from([]) };
  const head = typeof first.value === 'string' ? Buffer.from(first.value) : first.value;
  const stream = Readable.from(
    (async function* () {
      try {
        yield head;
        for (let next = await chunks.next(); !next.done; next = await chunks.next()) yield next.value;
      } finally {
        await chunks.return?.();
      }
    })(),
    { objectMode: false },
  );
  return { head, stream };
}
