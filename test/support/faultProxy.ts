/**
 * An HTTP proxy in front of DynamoDB Local that injects BatchWriteItem faults, deterministically.
 * DynamoDB Local never throttles, never returns UnprocessedItems and never drops a connection; this proxy
 * does, on the calls a policy chooses, so the writer's retry paths run against a real table. Every other
 * request (DescribeTable, Scan, ...) is forwarded unchanged. It is a test harness, not a partition model.
 */
import { Agent, createServer, request as httpRequest, type IncomingHttpHeaders, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

/** What the proxy does with one BatchWriteItem call. */
export type FaultAction =
  | { kind: 'forward' }
  /** Forward only the first `process` write requests; return the others in UnprocessedItems (HTTP 200). */
  | { kind: 'unprocessed'; process: number }
  /** Answer with a DynamoDB error body and status, without forwarding (after `delayMs`, to let other calls overtake). */
  | { kind: 'error'; status: number; type: string; message?: string; delayMs?: number }
  /** Destroy the client's socket without answering (the SDK sees a reset / "socket hang up"). */
  | { kind: 'drop' };

/** Chooses the action for BatchWriteItem call number `callIndex` (0-based) holding `requestCount` write requests. */
export type FaultPolicy = (callIndex: number, requestCount: number) => FaultAction;

export interface BatchWriteCall {
  index: number;
  requestCount: number;
  action: FaultAction['kind'];
}

export interface FaultProxy {
  /** http://127.0.0.1:<port>, to use as the endpoint. */
  readonly url: string;
  /** Every BatchWriteItem call seen, in arrival order. */
  readonly calls: readonly BatchWriteCall[];
  /** Number of calls that were not simply forwarded. */
  faultCount(): number;
  setPolicy(policy: FaultPolicy): void;
  close(): Promise<void>;
}

const BATCH_WRITE = 'DynamoDB_20120810.BatchWriteItem';

/** Real DynamoDB error shapes (the SDK reads the name after '#'). */
export const faults = {
  throttled: (): FaultAction => ({ kind: 'error', status: 400, type: 'com.amazonaws.dynamodb.v20120810#ProvisionedThroughputExceededException', message: 'The level of configured provisioned throughput for the table was exceeded. Consider increasing your provisioning level with the UpdateTable API.' }),
  throttling: (): FaultAction => ({ kind: 'error', status: 400, type: 'com.amazon.coral.availability#ThrottlingException', message: 'Rate of requests exceeds the allowed throughput.' }),
  internal: (): FaultAction => ({ kind: 'error', status: 500, type: 'com.amazonaws.dynamodb.v20120810#InternalServerError', message: 'Internal server error' }),
  unavailable: (): FaultAction => ({ kind: 'error', status: 503, type: 'com.amazon.coral.availability#ServiceUnavailableException', message: 'Service unavailable' }),
  drop: (): FaultAction => ({ kind: 'drop' }),
  forward: (): FaultAction => ({ kind: 'forward' }),
};

/** Forwards everything until a policy is set. */
export async function startFaultProxy(target: string, initial: FaultPolicy = () => ({ kind: 'forward' })): Promise<FaultProxy> {
  const upstream = new URL(target);
  const agent = new Agent({ keepAlive: true, maxSockets: 64 });
  let policy = initial;
  const calls: BatchWriteCall[] = [];

  const forward = (req: IncomingMessage, body: Buffer): Promise<{ status: number; headers: IncomingHttpHeaders; body: Buffer }> =>
    new Promise((resolve, reject) => {
      const headers = { ...req.headers, host: upstream.host, 'content-length': String(body.length) };
      const out = httpRequest({ host: upstream.hostname, port: upstream.port, path: req.url, method: req.method, headers, agent }, (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => resolve({ status: res.statusCode ?? 502, headers: res.headers, body: Buffer.concat(chunks) }));
        res.on('error', reject);
      });
      out.on('error', reject);
      out.end(body);
    });

  const reply = (res: ServerResponse, status: number, headers: IncomingHttpHeaders, body: Buffer) => {
    const clean: Record<string, string | string[]> = {};
    for (const [name, value] of Object.entries(headers)) {
      // The body may have been rewritten: its length and CRC32 are recomputed or dropped.
      if (value === undefined || ['content-length', 'x-amz-crc32', 'transfer-encoding', 'connection', 'keep-alive'].includes(name)) continue;
      clean[name] = value;
    }
    res.writeHead(status, { ...clean, 'content-length': String(body.length) });
    res.end(body);
  };

  const json = (value: unknown) => Buffer.from(JSON.stringify(value));

  const handle = async (req: IncomingMessage, res: ServerResponse, body: Buffer) => {
    if (req.headers['x-amz-target'] !== BATCH_WRITE) {
      const answer = await forward(req, body);
      return reply(res, answer.status, answer.headers, answer.body);
    }
    const parsed = JSON.parse(body.toString('utf8')) as { RequestItems: Record<string, unknown[]> } & Record<string, unknown>;
    const requestCount = Object.values(parsed.RequestItems).reduce((n, list) => n + list.length, 0);
    const index = calls.length;
    const action = policy(index, requestCount);
    calls.push({ index, requestCount, action: action.kind });

    switch (action.kind) {
      case 'forward': {
        const answer = await forward(req, body);
        return reply(res, answer.status, answer.headers, answer.body);
      }
      case 'drop':
        req.socket.destroy();
        return;
      case 'error':
        if (action.delayMs) await new Promise((resolve) => setTimeout(resolve, action.delayMs));
        return reply(res, action.status, { 'content-type': 'application/x-amz-json-1.0', 'x-amzn-requestid': `FAULT${index}` }, json({ __type: action.type, message: action.message ?? action.type.split('#')[1] }));
      case 'unprocessed': {
        let budget = Math.max(0, action.process);
        const sent: Record<string, unknown[]> = {};
        const held: Record<string, unknown[]> = {};
        for (const [table, list] of Object.entries(parsed.RequestItems)) {
          const take = list.slice(0, budget);
          budget -= take.length;
          if (take.length > 0) sent[table] = take;
          if (list.length > take.length) held[table] = list.slice(take.length);
        }
        if (Object.keys(sent).length === 0) {
          return reply(res, 200, { 'content-type': 'application/x-amz-json-1.0', 'x-amzn-requestid': `FAULT${index}` }, json({ UnprocessedItems: held }));
        }
        const answer = await forward(req, json({ ...parsed, RequestItems: sent }));
        if (answer.status !== 200) return reply(res, answer.status, answer.headers, answer.body);
        const upstreamBody = JSON.parse(answer.body.toString('utf8')) as { UnprocessedItems?: Record<string, unknown[]> };
        const unprocessed: Record<string, unknown[]> = { ...upstreamBody.UnprocessedItems };
        for (const [table, list] of Object.entries(held)) unprocessed[table] = [...(unprocessed[table] ?? []), ...list];
        return reply(res, 200, answer.headers, json({ ...upstreamBody, UnprocessedItems: unprocessed }));
      }
    }
  };

  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      handle(req, res, Buffer.concat(chunks)).catch((error: unknown) => {
        if (!res.headersSent) reply(res, 502, { 'content-type': 'text/plain' }, Buffer.from(`faultProxy: ${(error as Error).message}`));
        else res.destroy();
      });
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;

  return {
    url: `http://127.0.0.1:${port}`,
    calls,
    faultCount: () => calls.filter((c) => c.action !== 'forward').length,
    setPolicy(next) {
      policy = next;
    },
    async close() {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      agent.destroy();
    },
  };
}
