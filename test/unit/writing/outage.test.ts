/**
 * An outage is not bad data: which failures are the endpoint's, when failures make an
 * outage, and what the writer does with a batch through one. The writer runs against a scripted client;
 * the watch against real timers with a policy of milliseconds.
 */
import type { BatchWriteItemCommandOutput } from '@aws-sdk/client-dynamodb';
import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { describe, expect, it } from 'vitest';
import type { ErrorFacts } from '../../../src/aws/backoff.js';
import { DEFAULT_BACKOFF } from '../../../src/aws/backoff.js';
import { EndpointWatch, type OutageEvent } from '../../../src/writing/endpointWatch.js';
import { endpointFailure, OutageTracker, outagePolicy, probeDelay, type OutagePolicy } from '../../../src/writing/outage.js';
import { keyIdsOf } from '../../../src/typing/key.js';
import type { KeySchema, PlannedWrite } from '../../../src/shared/types.js';
import { writeBatch, type WriterContext } from '../../../src/writing/writeBatch.js';

describe('endpointFailure: the endpoint failed, not the rows', () => {
  it.each<[string, ErrorFacts, string | undefined]>([
    ['connection refused', { name: 'Error', code: 'ECONNREFUSED' }, 'ECONNREFUSED'],
    ['connection reset', { name: 'Error', code: 'ECONNRESET', message: 'socket hang up' }, 'ECONNRESET'],
    ['DNS failure', { code: 'ENOTFOUND' }, 'ENOTFOUND'],
    ['DNS try again', { code: 'EAI_AGAIN' }, 'EAI_AGAIN'],
    ['request timeout', { name: 'TimeoutError', code: 'ETIMEDOUT' }, 'ETIMEDOUT'],
    ['SDK timeout without a code', { name: 'TimeoutError' }, 'TimeoutError'],
    ['500 InternalServerError', { name: 'InternalServerError', httpStatus: 500 }, 'HTTP 500 InternalServerError'],
    ['503 ServiceUnavailable', { name: 'ServiceUnavailableException', httpStatus: 503 }, 'HTTP 503 ServiceUnavailableException'],
    ['a 502 from a proxy, unnamed', { name: 'Error', httpStatus: 502 }, 'HTTP 502'],
    [
      'container credentials timing out',
      { name: 'CredentialsProviderError', message: 'connect ETIMEDOUT 169.254.170.2:80' },
      expect.stringMatching(/^credentials/),
    ],
    ['throttled: an answer', { name: 'ProvisionedThroughputExceededException', httpStatus: 400 }, undefined],
    ['ThrottlingException: an answer', { name: 'ThrottlingException', httpStatus: 400 }, undefined],
    ['validation: an answer', { name: 'ValidationException', httpStatus: 400 }, undefined],
    ['access denied: an answer', { name: 'AccessDeniedException', httpStatus: 400 }, undefined],
    ['expired token: an answer', { name: 'ExpiredTokenException', httpStatus: 400 }, undefined],
    ['table gone: an answer', { name: 'ResourceNotFoundException', httpStatus: 400 }, undefined],
  ])('%s', (_, facts, label) => {
    expect(endpointFailure(facts)).toEqual(label);
  });
});

const POLICY: OutagePolicy = { timeoutMs: 10_000, minFailures: 3, quietMs: 2000, probeBaseMs: 250, probeCapMs: 5000 };

describe('OutageTracker: when failures are an outage', () => {
  it('a burst of resets with no answer for less than quietMs is noise, however many calls fail', () => {
    const t = new OutageTracker(POLICY);
    for (let i = 0; i < 20; i++) expect(t.failed(1000 + i, 1000, 'ECONNRESET')).toBeUndefined();
    expect(t.outage).toBeUndefined();
  });

  it('fewer than minFailures calls are not an outage, however long they took (one slow timeout)', () => {
    const t = new OutageTracker(POLICY);
    expect(t.failed(31_000, 1000, 'TimeoutError')).toBeUndefined();
    expect(t.failed(31_001, 1000, 'TimeoutError')).toBeUndefined();
    expect(t.failed(31_002, 1000, 'TimeoutError')).toMatchObject({ since: 1000, reason: 'TimeoutError', declaredAt: 31_002 });
  });

  it('failures for quietMs with no answer make an outage, since the earliest failed call was sent; an answer ends it', () => {
    const t = new OutageTracker(POLICY);
    t.failed(100, 50, 'ECONNREFUSED');
    t.failed(900, 800, 'ECONNREFUSED');
    expect(t.failed(2049, 2000, 'ECONNREFUSED')).toBeUndefined();
    const outage = t.failed(2050, 2000, 'ECONNREFUSED');
    expect(outage).toEqual({ since: 50, reason: 'ECONNREFUSED', declaredAt: 2050 });
    // Declared once; later failures only update the reason.
    expect(t.failed(2100, 2060, 'ETIMEDOUT')).toBeUndefined();
    expect(t.outage?.reason).toBe('ETIMEDOUT');
    expect(t.expired(2050 + 9999)).toBe(false);
    expect(t.expired(2050 + 10_000)).toBe(true);
    expect(t.answered()).toMatchObject({ since: 50 });
    expect(t.outage).toBeUndefined();
    expect(t.expired(1e9)).toBe(false);
  });

  it('an answer in between starts the count again', () => {
    const t = new OutageTracker(POLICY);
    t.failed(100, 0, 'HTTP 503');
    t.failed(200, 100, 'HTTP 503');
    t.answered();
    expect(t.failed(5000, 4990, 'HTTP 503')).toBeUndefined();
    expect(t.outage).toBeUndefined();
  });

  it('one batch failing while the load is not down gets as long as an outage would (quietMs + timeout)', () => {
    const t = new OutageTracker(POLICY);
    expect(t.batchExpired(11_999, 0)).toBe(false);
    expect(t.batchExpired(12_000, 0)).toBe(true);
  });

  it('probes wait 250 ms, doubling, capped at 5 s', () => {
    expect([0, 1, 2, 3, 4, 5, 10].map((n) => probeDelay(n, POLICY))).toEqual([250, 500, 1000, 2000, 4000, 5000, 5000]);
    expect(outagePolicy(1234)).toMatchObject({ timeoutMs: 1234, minFailures: 3, quietMs: 2000 });
  });
});

const SCHEMA: KeySchema = { partitionKey: { name: 'pk', type: 'S' } };
function put(pk: string, n: number): PlannedWrite {
  const item = { pk, n: String(n) };
  return { origin: { file: 'in.csv', line: n, raw: `${pk},${n}` }, item, ...keyIdsOf(item, SCHEMA), size: 10, wcu: 1 };
}
const refused = () => Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:8000'), { code: 'ECONNREFUSED' });
const unavailable = () => Object.assign(new Error('Service unavailable'), { name: 'ServiceUnavailableException', $metadata: { httpStatusCode: 503 } });
const throttled = () => Object.assign(new Error('slow down'), { name: 'ThrottlingException', $metadata: { httpStatusCode: 400 } });
const ok = (): Partial<BatchWriteItemCommandOutput> => ({ UnprocessedItems: {} });

/** A writer context whose client answers from `script` (an Error is thrown); `answer` decides past its end. */
function scripted(
  script: Array<Error | Partial<BatchWriteItemCommandOutput>>,
  options: Partial<WriterContext> = {},
  after?: () => Error | Partial<BatchWriteItemCommandOutput>,
) {
  let calls = 0;
  const client = {
    async send(): Promise<Partial<BatchWriteItemCommandOutput>> {
      calls++;
      const next = script.shift() ?? after?.();
      if (next === undefined) throw new Error(`the script has no answer for call ${calls}`);
      if (next instanceof Error) throw next;
      return next;
    },
  };
  const ctx: WriterContext = {
    client: client as unknown as DynamoDBDocumentClient,
    table: 'T',
    keySchema: SCHEMA,
    endpoint: 'http://localhost:8000',
    maxAttempts: 2,
    backoff: DEFAULT_BACKOFF,
    random: () => 0,
    sleep: async () => undefined,
    ...options,
  };
  return { ctx, calls: () => calls };
}

describe('writeBatch through endpoint failures', () => {
  it("endpoint failures spend none of the rows' --max-attempts: 6 of them then an answer, with --max-attempts 2, and every row is written", async () => {
    // A watch that sees no outage in this (no quiet period passes): only the rows' budget is in question.
    const { watch } = watchOf({ timeoutMs: 60_000, quietMs: 60_000 });
    const { ctx, calls } = scripted([refused(), unavailable(), refused(), unavailable(), refused(), unavailable(), throttled(), ok()], { watch });
    const outcome = await writeBatch([put('a', 1), put('b', 2)], ctx);
    expect(outcome.rejected).toEqual([]);
    expect(outcome.fatal).toBeUndefined();
    expect(outcome.written.map((w) => w.item['pk'])).toEqual(['a', 'b']);
    expect(calls()).toBe(8);
  });

  it('throttled past --max-attempts is still RETRIES_EXHAUSTED (the endpoint answered)', async () => {
    const { ctx } = scripted([unavailable(), throttled(), throttled()]);
    const outcome = await writeBatch([put('a', 1)], ctx);
    expect(outcome.rejected.map((r) => r.code)).toEqual(['RETRIES_EXHAUSTED']);
  });

  it('without a watch, --max-attempts endpoint failures in a row stop the load (ENDPOINT_UNREACHABLE): no row rejected, none written', async () => {
    const { ctx } = scripted([unavailable(), unavailable()]);
    const outcome = await writeBatch([put('a', 1), put('b', 2)], ctx);
    expect(outcome.rejected).toEqual([]);
    expect(outcome.written).toEqual([]);
    expect(outcome.fatal?.code).toBe('ENDPOINT_UNREACHABLE');
    expect(outcome.fatal?.message).toMatch(
      /2 calls in a row to DynamoDB at http:\/\/localhost:8000 failed \(HTTP 503 ServiceUnavailableException\); no row was rejected/,
    );
  });
});

/** A watch with a policy of milliseconds; its events in order. */
function watchOf(policy: Partial<OutagePolicy>, signal?: AbortSignal) {
  const events: OutageEvent[] = [];
  const watch = new EndpointWatch({
    policy: { timeoutMs: 300, minFailures: 2, quietMs: 0, probeBaseMs: 5, probeCapMs: 20, ...policy },
    endpoint: 'http://localhost:8000',
    now: () => performance.now(),
    emit: (e) => events.push(e),
    signal,
  });
  return { watch, events };
}

describe('EndpointWatch: waits for the endpoint, one probe at a time', () => {
  it('an outage that ends: said once, then back; the batch is written, nothing rejected', async () => {
    const { watch, events } = watchOf({ timeoutMs: 20_000 });
    let failing = 12;
    const { ctx, calls } = scripted([], { watch, maxAttempts: 1 }, () => (failing-- > 0 ? refused() : ok()));
    const outcome = await writeBatch([put('a', 1)], ctx);
    watch.close();
    expect(outcome.rejected).toEqual([]);
    expect(outcome.fatal).toBeUndefined();
    expect(outcome.written).toHaveLength(1);
    expect(calls()).toBe(13);
    expect(events.map((e) => e.type)).toEqual(['endpointDown', 'endpointBack']);
    expect(events[0]).toMatchObject({ endpoint: 'http://localhost:8000', reason: 'ECONNREFUSED', waitMs: 20_000 });
  });

  it('while down, batches wait and only one probe goes at a time; the first answer lets them all go', async () => {
    const { watch, events } = watchOf({ timeoutMs: 5000, probeBaseMs: 20, probeCapMs: 20 });
    let down = true;
    let inFlight = 0;
    let most = 0;
    const client = {
      async send(): Promise<Partial<BatchWriteItemCommandOutput>> {
        inFlight++;
        most = Math.max(most, inFlight);
        await new Promise((r) => setTimeout(r, 2));
        inFlight--;
        if (down) throw refused();
        return ok();
      },
    };
    const ctx: WriterContext = { ...scripted([]).ctx, client: client as unknown as DynamoDBDocumentClient, watch, maxAttempts: 1 };
    const batches = Array.from({ length: 6 }, (_, i) => writeBatch([put(`k${i}`, i)], ctx));
    // Let the outage be declared and a few probes fail.
    await new Promise((r) => setTimeout(r, 150));
    most = 0;
    await new Promise((r) => setTimeout(r, 100));
    expect(most).toBe(1);
    down = false;
    const outcomes = await Promise.all(batches);
    watch.close();
    expect(outcomes.flatMap((o) => o.written)).toHaveLength(6);
    expect(outcomes.flatMap((o) => o.rejected)).toEqual([]);
    expect(events.map((e) => e.type)).toEqual(['endpointDown', 'endpointBack']);
  });

  it('an outage past the timeout stops every batch with ENDPOINT_UNREACHABLE, rows neither written nor rejected', async () => {
    const { watch, events } = watchOf({ timeoutMs: 100 });
    const { ctx } = scripted([], { watch }, () => refused());
    const outcomes = await Promise.all([writeBatch([put('a', 1)], ctx), writeBatch([put('b', 2)], ctx)]);
    watch.close();
    for (const o of outcomes) {
      expect(o).toMatchObject({ written: [], rejected: [] });
      expect(o.fatal?.code).toBe('ENDPOINT_UNREACHABLE');
      expect(o.fatal?.message).toMatch(
        /the endpoint http:\/\/localhost:8000 could not be reached \(ECONNREFUSED\) since .*; waited 0\.1 s \(--outage-timeout\); no row was rejected/,
      );
    }
    expect(events.map((e) => e.type)).toEqual(['endpointDown']);
    // Once stopped, a batch sent later stops at once.
    expect((await writeBatch([put('c', 3)], ctx)).fatal?.code).toBe('ENDPOINT_UNREACHABLE');
  });

  it('credentials that cannot be fetched past the timeout stop the load as CREDENTIALS_UNAVAILABLE (exit 75), not as rejects', async () => {
    const { watch } = watchOf({ timeoutMs: 50 });
    const creds = () => Object.assign(new Error('connect ETIMEDOUT 169.254.170.2:80'), { name: 'CredentialsProviderError' });
    const { ctx } = scripted([], { watch }, creds);
    const outcome = await writeBatch([put('a', 1)], ctx);
    watch.close();
    expect(outcome.rejected).toEqual([]);
    expect(outcome.fatal?.code).toBe('CREDENTIALS_UNAVAILABLE');
  });

  it('aborted with the endpoint up: a batch under way still finishes its resends (a stop writes what it sent)', async () => {
    const controller = new AbortController();
    const { watch } = watchOf({}, controller.signal);
    controller.abort();
    const unprocessedB = { UnprocessedItems: { T: [{ PutRequest: { Item: { pk: { S: 'b' }, n: { S: '2' } } } }] } };
    const { ctx } = scripted([unprocessedB, ok()], { watch });
    const outcome = await writeBatch([put('a', 1), put('b', 2)], ctx);
    watch.close();
    expect(outcome.fatal).toBeUndefined();
    expect(outcome.written.map((w) => w.item['pk'])).toEqual(['a', 'b']);
  });

  it('aborted while waiting: the batch stops at once (ABORTED), its rows not written', async () => {
    const controller = new AbortController();
    const { watch } = watchOf({ timeoutMs: 60_000, probeBaseMs: 60_000, probeCapMs: 60_000 }, controller.signal);
    const { ctx } = scripted([], { watch }, () => refused());
    const started = performance.now();
    const pending = writeBatch([put('a', 1)], ctx);
    setTimeout(() => controller.abort(), 50);
    const outcome = await pending;
    watch.close();
    expect(performance.now() - started).toBeLessThan(5000);
    expect(outcome).toMatchObject({ written: [], rejected: [] });
    expect(outcome.fatal?.code).toBe('ABORTED');
  });
});
