/**
 * An HTTP proxy in front of the S3-compatible test server that drops the connection in the middle of an
 * object's body, the way a real network does: the first GET of a chosen key whose answer is longer than
 * `cutAfter` gets its headers and the first `cutAfter` bytes, then the socket is destroyed. Every GET's Range header is recorded, so a
 * test can tell a resumed read (a ranged GET from the byte where it broke) from a read again from byte 0.
 * With `resumeAnswer`, the GETs after a drop are answered from the whole body the proxy kept of the cut GET,
 * the way a cache or a server that ignores Range does: 'whole-200' sends the whole object
 * with 200; 'whole-206' sends it with 206 and a Content-Range from byte 0 (not the byte asked for).
 * With `stall`, the cut GETs are never closed but go silent, the way a dead route or a hung server leaves
 * them: 'body' after the headers and the first `cutAfter` bytes, 'headers' before any answer at all.
 */
import { createServer, request, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface S3DropProxy {
  url: string;
  /** GETs of the key, in arrival order: their Range header ('' for none). */
  readonly ranges: string[];
  close(): Promise<void>;
}

export async function startS3DropProxy(
  target: string,
  options: {
    key: string;
    cutAfter: number;
    drops?: number;
    beforeResume?: () => Promise<void>;
    resumeAnswer?: 'whole-200' | 'whole-206';
    stall?: 'body' | 'headers';
    /** GETs of the object passed on untouched and unrecorded first: a load's look at its header before the read. */
    passFirst?: number;
  },
): Promise<S3DropProxy> {
  const upstream = new URL(target);
  const ranges: string[] = [];
  let drops = options.drops ?? 1;
  let passing = options.passFirst ?? 0;
  // The cut GET's whole answer, read from upstream to its end (only the first `cutAfter` bytes go on).
  let kept: Promise<{ headers: IncomingMessage['headers']; body: Buffer }> | undefined;
  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    const isObjectGet = req.method === 'GET' && decodeURIComponent((req.url ?? '').split('?')[0]!).endsWith(`/${options.key}`);
    if (isObjectGet && passing > 0) {
      passing--;
      const out = request({ host: upstream.hostname, port: upstream.port, method: req.method, path: req.url, headers: req.headers }, (answer) => {
        res.writeHead(answer.statusCode ?? 502, answer.headers);
        answer.pipe(res);
      });
      out.on('error', () => res.destroy());
      res.on('close', () => out.destroy());
      req.pipe(out);
      return;
    }
    const cut = isObjectGet && drops > 0;
    if (cut && options.stall === 'headers') {
      drops--;
      ranges.push(String(req.headers.range ?? ''));
      return;
    }
    const forward = () => {
      const out = request({ host: upstream.hostname, port: upstream.port, method: req.method, path: req.url, headers: req.headers }, (answer) => {
        res.writeHead(answer.statusCode ?? 502, answer.headers);
        // An answer no longer than `cutAfter` (a read of an object's first bytes) goes through whole and uses up no drop.
        if (!cut || Number(answer.headers['content-length'] ?? Infinity) <= options.cutAfter) return void answer.pipe(res);
        drops--;
        let sent = 0;
        const chunks: Buffer[] = [];
        kept ??= new Promise((resolve) => answer.on('end', () => resolve({ headers: answer.headers, body: Buffer.concat(chunks) })));
        answer.on('data', (chunk: Buffer) => {
          chunks.push(chunk);
          if (sent >= options.cutAfter) return;
          const part = chunk.subarray(0, options.cutAfter - sent);
          sent += part.length;
          res.write(part);
          if (sent >= options.cutAfter && options.stall === undefined) setTimeout(() => res.socket?.destroy(), 20);
        });
      });
      out.on('error', () => res.destroy());
      req.pipe(out);
    };
    if (isObjectGet && !cut && req.headers.range && kept && options.resumeAnswer) {
      ranges.push(String(req.headers.range));
      const how = options.resumeAnswer;
      void kept.then(({ headers, body }) => {
        const size = body.length;
        const common = { etag: headers.etag ?? '', 'last-modified': headers['last-modified'] ?? '', 'content-type': 'application/octet-stream' };
        if (how === 'whole-200') res.writeHead(200, { ...common, 'content-length': String(size) });
        else res.writeHead(206, { ...common, 'content-length': String(size), 'content-range': `bytes 0-${size - 1}/${size}` });
        res.end(body);
      });
      return;
    }
    if (isObjectGet) {
      ranges.push(String(req.headers.range ?? ''));
      if (!cut && ranges.length > 1 && options.beforeResume) {
        const hook = options.beforeResume;
        options.beforeResume = undefined;
        void hook().then(forward);
        return;
      }
    }
    forward();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    ranges,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
