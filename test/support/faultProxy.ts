/**
 * An HTTP proxy in front of DynamoDB Local that injects BatchWriteItem faults, deterministically.
 * DynamoDB Local never throttles, never returns UnprocessedItems and never drops a connection; this proxy
 * does, on the calls a policy chooses, so the writer's retry paths run against a real table. Every other
 * request (DescribeTable, Scan, ...) is forwarded unchanged. It is a test harness, not a partition model.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { BATCH_WRITE, createForwarder, delay, dynamoErrors, json, ownHeaders, reply, startProxyServer } from './httpForward.js';

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
  /**
   * Takes the endpoint down for every call, not only BatchWriteItem: `refuse` closes the
   * port (ECONNREFUSED), `reset` destroys each request's socket, `stall` never answers (the client's
   * request timeout fires). Until restore().
   */
  outage(kind: OutageKind): Promise<void>;
  restore(): Promise<void>;
  close(): Promise<void>;
}

export type OutageKind = 'refuse' | 'reset' | 'stall';

/** Real DynamoDB error shapes (the SDK reads the name after '#'). */
export const faults = {
  throttled: (): FaultAction => ({ kind: 'error', ...dynamoErrors.provisionedThroughputExceeded }),
  throttling: (): FaultAction => ({ kind: 'error', ...dynamoErrors.throttling }),
  internal: (): FaultAction => ({ kind: 'error', ...dynamoErrors.internal }),
  unavailable: (): FaultAction => ({ kind: 'error', ...dynamoErrors.unavailable }),
  drop: (): FaultAction => ({ kind: 'drop' }),
  forward: (): FaultAction => ({ kind: 'forward' }),
};

/** Forwards everything until a policy is set. */
export async function startFaultProxy(target: string, initial: FaultPolicy = () => ({ kind: 'forward' })): Promise<FaultProxy> {
  const upstream = createForwarder(target);
  let policy = initial;
  const calls: BatchWriteCall[] = [];
  const forward = (req: IncomingMessage, body: Buffer) => upstream.forward(req, body);

  let down: OutageKind | undefined;
  const stalled: ServerResponse[] = [];
  const handle = async (req: IncomingMessage, res: ServerResponse, body: Buffer) => {
    if (down === 'reset') return void req.socket.destroy();
    if (down === 'stall') return void stalled.push(res);
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
        if (action.delayMs) await delay(action.delayMs);
        return reply(res, action.status, ownHeaders(`FAULT${index}`), json({ __type: action.type, message: action.message ?? action.type.split('#')[1] }));
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
          return reply(res, 200, ownHeaders(`FAULT${index}`), json({ UnprocessedItems: held }));
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

  const server = await startProxyServer('faultProxy', handle);

  return {
    url: server.url,
    calls,
    faultCount: () => calls.filter((c) => c.action !== 'forward').length,
    setPolicy(next) {
      policy = next;
    },
    async outage(kind) {
      down = kind;
      if (kind === 'refuse') await server.refuse();
    },
    async restore() {
      down = undefined;
      for (const res of stalled.splice(0)) res.destroy();
      await server.listen();
    },
    async close() {
      for (const res of stalled.splice(0)) res.destroy();
      await server.close();
      upstream.close();
    },
  };
}
