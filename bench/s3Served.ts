import { createServer, request } from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * A pass-through HTTP proxy in front of the local S3 server that counts the body bytes it hands out for
 * GET requests: what the workers fetched from S3, counted by the server's side, whatever the CLI says of
 * its own reads (its scans, its ranges, the first bytes it checks, the listing's own GETs).
 */
export interface S3Served {
  endpoint: string;
  /** Body bytes of GET answers since the last reset. */
  served: { bytes: number };
  close(): Promise<void>;
}

export async function startS3Served(upstream: string): Promise<S3Served> {
  const target = new URL(upstream);
  const served = { bytes: 0 };
  const server = createServer((req, res) => {
    const forward = request({ host: target.hostname, port: target.port, method: req.method, path: req.url, headers: req.headers }, (answer) => {
      res.writeHead(answer.statusCode ?? 502, answer.headers);
      if (req.method === 'GET') answer.on('data', (chunk: Buffer) => (served.bytes += chunk.length));
      answer.pipe(res);
    });
    forward.on('error', () => res.destroy());
    // A worker that has what it needs closes the GET early: stop the upstream answer too.
    res.on('close', () => forward.destroy());
    req.pipe(forward);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    endpoint: `http://127.0.0.1:${port}`,
    served,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
