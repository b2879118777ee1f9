/**
 * Batches sleeping out a throttle's backoff lend their in-flight slot (src/pacing/inFlight.ts), so more
 * batches go while they wait. Lending must not let a later write of a primary key overtake an earlier
 * one: through the partition proxy throttling and failing half the calls, with every primary key written
 * many times across batches, a recorder in front of the proxy sees no two calls holding one primary key
 * under way together, and the table ends as writing the rows one by one would leave it.
 */
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { load, type LoadOptions } from '../../src/index.js';
import { scanAll, type TableKeys } from '../support/ddb.js';
import { BATCH_WRITE, createForwarder, reply, startProxyServer, type ProxyServer } from '../support/httpForward.js';
import { useLocalAws } from '../support/localAws.js';
import { startPartitionProxy } from '../support/partitionProxy.js';

const KEYS: TableKeys = { partitionKey: { name: 'pk', type: 'S' }, sortKey: { name: 'sk', type: 'N' } };
const { endpoint, client, dir, newTable, closeAfterAll } = useLocalAws({ name: 'throttle-backoff', processCredentials: true, keys: KEYS });

/** Far above anything DynamoDB Local can take: every throttle is the injected ThrottlingException. */
const NO_LIMIT = { tableWcu: 1_000_000, partitions: 8, partitionMaxWcu: 1_000_000 };

interface Recorder extends ProxyServer {
  /** BatchWriteItem calls that arrived while another call holding one of their primary keys was under way. */
  readonly overlaps: string[];
  /** The most BatchWriteItem calls under way at once. */
  readonly peak: number;
}

/** Forwards every call to `target`, recording which primary keys each BatchWriteItem call holds while it is under way. */
async function startRecorder(target: string): Promise<Recorder> {
  const upstream = createForwarder(target);
  const underWay = new Map<string, number>();
  const overlaps: string[] = [];
  let calls = 0;
  let peak = 0;
  const server = await startProxyServer('recorder', async (req, res, body) => {
    if (req.headers['x-amz-target'] !== BATCH_WRITE) {
      const answer = await upstream.forward(req, body);
      reply(res, answer.status, answer.headers, answer.body);
      return;
    }
    const requests = Object.values((JSON.parse(body.toString('utf8')) as { RequestItems: Record<string, WireRequest[]> }).RequestItems).flat();
    const keys = requests.map((r) => {
      const item = r.PutRequest?.Item ?? r.DeleteRequest?.Key ?? {};
      return `${item['pk']?.S}/${item['sk']?.N}`;
    });
    for (const key of keys) if (underWay.has(key)) overlaps.push(key);
    for (const key of keys) underWay.set(key, (underWay.get(key) ?? 0) + 1);
    peak = Math.max(peak, ++calls);
    try {
      const answer = await upstream.forward(req, body);
      reply(res, answer.status, answer.headers, answer.body);
    } catch {
      // The proxy behind dropped the call (a dropped connection or a lost reply): so does this one.
      res.destroy();
    } finally {
      calls--;
      for (const key of keys) {
        const n = underWay.get(key)! - 1;
        if (n === 0) underWay.delete(key);
        else underWay.set(key, n);
      }
    }
  });
  return {
    ...server,
    overlaps,
    get peak() {
      return peak;
    },
    close: async () => {
      await server.close();
      upstream.close();
    },
  };
}

interface WireRequest {
  PutRequest?: { Item?: Record<string, { S?: string; N?: string }> };
  DeleteRequest?: { Key?: Record<string, { S?: string; N?: string }> };
}

describe('throttled batches lend their slot while they back off', () => {
  it('half the calls throttled or failed, keys written many times: nothing lost, no two calls of a key under way together, the last row of each key stored', async () => {
    // Every other row has a key of its own; the rest cycle through 35 keys, so each batch shares keys
    // with the batches around it and each of those keys is written about 14 times. A high --wcu: the
    // rate starts high, so the load is bound by the faults and the keys' turns, not by a slow start.
    const rows = 1000;
    const lines = ['pk,sk,v'];
    const last = new Map<string, number>();
    for (let i = 0; i < rows; i++) {
      const [pk, sk] = i % 2 === 0 ? [`u${i % 13}`, i] : [`r${i % 7}`, (i >> 1) % 5];
      lines.push(`${pk},${sk},${i}`);
      last.set(`${pk}/${sk}`, i);
    }
    const input = join(dir(), 'rewrites.csv');
    await writeFile(input, `${lines.join('\n')}\n`);

    const proxy = await startPartitionProxy(endpoint, {
      partitionKeyName: 'pk',
      model: NO_LIMIT,
      seed: 11,
      faults: { throttling: 0.35, internal: 0.05, drop: 0.05, lostReply: 0.05 },
    });
    closeAfterAll(proxy);
    const recorder = await startRecorder(proxy.url);
    closeAfterAll(recorder);

    const table = await newTable();
    const result = await load(
      {
        region: 'us-east-1',
        input,
        table,
        endpoint: recorder.url,
        concurrency: 4,
        wcu: 20_000,
        types: { sk: 'N', v: 'N' } as LoadOptions['types'],
        rejectsPath: join(dir(), 'rewrites.rejects.jsonl'),
      },
      {},
    );

    // The faults were heavy: about a third of the calls throttled, more failed.
    const { faults, calls } = proxy.stats();
    expect(faults.throttling).toBeGreaterThan(0.25 * calls);
    expect(faults.lostReply + faults.drop + faults.internal).toBeGreaterThan(0.1 * calls);
    // Nothing lost: every row written or superseded by a later row of its key, none rejected.
    expect(result).toMatchObject({ rowsRead: rows, rejected: 0, complete: true });
    expect(result.written + result.superseded).toBe(rows);
    // A call holding a key never went while another call holding it was under way.
    expect(recorder.overlaps).toEqual([]);
    // The table holds each key's last row, as writing the rows one by one would leave it.
    const stored = await scanAll(client(), table);
    expect(stored).toHaveLength(last.size);
    const got = new Map(stored.map((item) => [`${item['pk']?.S}/${item['sk']?.N}`, Number(item['v']?.N)]));
    expect(got).toEqual(last);
  }, 60_000);
});
