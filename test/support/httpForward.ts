/**
 * HTTP plumbing shared by the test proxies in front of DynamoDB Local (faultProxy, partitionProxy): a
 * server that hands each request over with its whole body, a forwarder to the upstream, DynamoDB's error
 * bodies, and a reply helper that keeps the upstream's headers valid after a body was rewritten.
 */
import { Agent, createServer, request as httpRequest, type IncomingHttpHeaders, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

/** The x-amz-target of the calls the proxies act on. */
export const TARGET_PREFIX = 'DynamoDB_20120810.';
export const BATCH_WRITE = `${TARGET_PREFIX}BatchWriteItem`;

export interface UpstreamAnswer {
  status: number;
  headers: IncomingHttpHeaders;
  body: Buffer;
}

export interface Forwarder {
  /**
   * Sends the request to the upstream with `body` in place of the client's (the original headers, the
   * signature included: DynamoDB Local does not check it), `headers` overriding single headers.
   */
  forward(req: IncomingMessage, body: Buffer, headers?: Record<string, string>): Promise<UpstreamAnswer>;
  close(): void;
}

export function createForwarder(target: string): Forwarder {
  const upstream = new URL(target);
  const agent = new Agent({ keepAlive: true, maxSockets: 64 });
  return {
    forward: (req, body, overrides = {}) =>
      new Promise((resolve, reject) => {
        const headers = { ...req.headers, ...overrides, host: upstream.host, 'content-length': String(body.length) };
        const out = httpRequest({ host: upstream.hostname, port: upstream.port, path: req.url, method: req.method, headers, agent }, (res) => {
          const chunks: Buffer[] = [];
          res.on('data', (c: Buffer) => chunks.push(c));
          res.on('end', () => resolve({ status: res.statusCode ?? 502, headers: res.headers, body: Buffer.concat(chunks) }));
          res.on('error', reject);
        });
        out.on('error', reject);
        out.end(body);
      }),
    close: () => agent.destroy(),
  };
}

/** Answers with `body`, keeping the upstream's headers except those a rewritten body invalidates. */
export function reply(res: ServerResponse, status: number, headers: IncomingHttpHeaders, body: Buffer): void {
  const clean: Record<string, string | string[]> = {};
  for (const [name, value] of Object.entries(headers)) {
    // The body may have been rewritten: its length and CRC32 are recomputed or dropped.
    if (value === undefined || ['content-length', 'x-amz-crc32', 'transfer-encoding', 'connection', 'keep-alive'].includes(name)) continue;
    clean[name] = value;
  }
  res.writeHead(status, { ...clean, 'content-length': String(body.length) });
  res.end(body);
}

export const json = (value: unknown): Buffer => Buffer.from(JSON.stringify(value));

/** Headers of an answer the proxy makes up itself. */
export const ownHeaders = (requestId: string): IncomingHttpHeaders => ({ 'content-type': 'application/x-amz-json-1.0', 'x-amzn-requestid': requestId });

export interface DynamoErrorShape {
  status: number;
  /** The wire `__type`; the SDK names the error after the part following '#'. */
  type: string;
  message: string;
}

/** Real DynamoDB error shapes. */
export const dynamoErrors = {
  provisionedThroughputExceeded: {
    status: 400,
    type: 'com.amazonaws.dynamodb.v20120810#ProvisionedThroughputExceededException',
    message: 'The level of configured provisioned throughput for the table was exceeded. Consider increasing your provisioning level with the UpdateTable API.',
  },
  throttling: { status: 400, type: 'com.amazon.coral.availability#ThrottlingException', message: 'Rate of requests exceeds the allowed throughput.' },
  internal: { status: 500, type: 'com.amazonaws.dynamodb.v20120810#InternalServerError', message: 'Internal server error' },
  unavailable: { status: 503, type: 'com.amazon.coral.availability#ServiceUnavailableException', message: 'Service unavailable' },
} satisfies Record<string, DynamoErrorShape>;

/** The body of a DynamoDB error: `__type`, `message` and any extra members (e.g. ThrottlingReasons). */
export const errorBody = (type: string, message: string, extra: Record<string, unknown> = {}): Buffer => json({ __type: type, message, ...extra });

export const delay = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

export type RequestHandler = (req: IncomingMessage, res: ServerResponse, body: Buffer) => Promise<void>;

export interface ProxyServer {
  /** http://127.0.0.1:<port>, to use as the endpoint. */
  url: string;
  close(): Promise<void>;
  /** Closes the port and every connection: clients get ECONNREFUSED (and resets for calls under way) until listen(). */
  refuse(): Promise<void>;
  /** Listens again on the same port. */
  listen(): Promise<void>;
}

/**
 * Listens on a free local port and hands each request to `handle` with its whole body. A handler that
 * throws answers 502 with `<name>: <message>` (or loses the socket if it had started answering).
 */
export async function startProxyServer(name: string, handle: RequestHandler): Promise<ProxyServer> {
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      handle(req, res, Buffer.concat(chunks)).catch((error: unknown) => {
        if (!res.headersSent && !res.destroyed) reply(res, 502, { 'content-type': 'text/plain' }, Buffer.from(`${name}: ${(error as Error).message}`));
        else res.destroy();
      });
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  let listening = true;
  const stop = async () => {
    if (!listening) return;
    listening = false;
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  };
  return {
    url: `http://127.0.0.1:${port}`,
    close: stop,
    refuse: stop,
    async listen() {
      if (listening) return;
      await new Promise<void>((resolve) => server.listen(port, '127.0.0.1', resolve));
      listening = true;
    },
  };
}
