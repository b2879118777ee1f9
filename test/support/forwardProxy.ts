/**
 * A loopback HTTP proxy as a corporate network has one: absolute-URI requests for http targets are
 * forwarded, CONNECT opens a tunnel for https targets. It records what passed through it.
 */
import { createServer, request as httpRequest } from 'node:http';
import { connect, type AddressInfo, type Socket } from 'node:net';

export interface ForwardProxy {
  url: string;
  /** Requests forwarded (http targets), as "METHOD absolute-url", and CONNECT tunnels, as "CONNECT host:port". */
  seen: string[];
  close(): Promise<void>;
}

export async function startForwardProxy(): Promise<ForwardProxy> {
  const seen: string[] = [];
  const sockets = new Set<Socket>();
  const server = createServer((req, res) => {
    seen.push(`${req.method} ${req.url}`);
    let target: URL;
    try {
      target = new URL(req.url ?? '');
    } catch {
      res.writeHead(400).end('absolute URI expected');
      return;
    }
    const out = httpRequest(
      { host: target.hostname, port: target.port, path: `${target.pathname}${target.search}`, method: req.method, headers: req.headers },
      (upstream) => {
        res.writeHead(upstream.statusCode ?? 502, upstream.headers);
        upstream.pipe(res);
      },
    );
    out.on('error', () => res.writeHead(502).end());
    req.pipe(out);
  });
  server.on('connect', (req, client: Socket, head: Buffer) => {
    seen.push(`CONNECT ${req.url}`);
    const [host, port] = (req.url ?? '').split(':');
    const upstream = connect(Number(port), host ?? '127.0.0.1', () => {
      client.write('HTTP/1.1 200 Connection Established\r\n\r\n');
      upstream.write(head);
      upstream.pipe(client);
      client.pipe(upstream);
    });
    for (const s of [client, upstream]) {
      sockets.add(s);
      s.on('close', () => sockets.delete(s));
      s.on('error', () => {
        client.destroy();
        upstream.destroy();
      });
    }
  });
  server.on('connection', (s: Socket) => {
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    seen,
    close: () =>
      new Promise((resolve) => {
        for (const s of sockets) s.destroy();
        server.close(() => resolve());
      }),
  };
}
