/**
 * Adversarial suite (b) and (c): generated files loaded with the real load() into DynamoDB
 * Local, in every write order, then under injected faults (500, 503, throttling, dropped connections,
 * replies lost after the write). After each load: rows read = written + superseded + rejected + not
 * written (0 here: nothing stops these loads), the table equals writing the rows one by one in input
 * order (every item, every type), and the reject file holds each rejected line once with file, line and
 * code. A small table per case and a bounded number of cases (FC_RUNS scales them).
 */
import { fc, it } from '@fast-check/vitest';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect } from 'vitest';
import { load, type LoadResult } from '../../src/index.js';
import type { OrderMode } from '../../src/ordering/order.js';
import { expectedOf, type Expected } from '../support/adversarialOracle.js';
import { expectTableAndRejects, fcParams, REPLAY } from '../support/adversarialPipeline.js';
import { fileModel, HOSTILE, KEY_SCHEMA, PLAIN, serialize, type FileModel, type Profile } from '../support/adversarialRows.js';
import { useLocalAws } from '../support/localAws.js';
import { startPartitionProxy } from '../support/partitionProxy.js';

const FILE = 'test/adversarial/load.test.ts';
const ORDERS: OrderMode[] = ['input', 'window', 'round-robin', 'spread', 'stripes'];
const E2E: Profile = { ...PLAIN, maxRows: 40 };

const { endpoint, dir, newTable, dropTable } = useLocalAws({ name: 'adversarial-load', processCredentials: true, keys: KEY_SCHEMA });
let seq = 0;
/** Faults the proxy injected over the fault property's cases (the property proves nothing without them). */
let injected = 0;
/** Stripes cases read in stripes (a case whose cut shows no key order falls back to round-robin, rightly). */
let striped = 0;

/** The counters add up and match the oracle. */
export function expectCounters(result: LoadResult, model: FileModel, expected: Expected): void {
  const notWritten = result.rowsRead - result.written - result.superseded - result.rejected - result.otherSegments;
  expect({ rowsRead: result.rowsRead, rejected: result.rejected, writtenOrSuperseded: result.written + result.superseded, notWritten }).toEqual({
    rowsRead: model.rows.length,
    rejected: expected.rejects.size,
    writtenOrSuperseded: expected.good,
    notWritten: 0,
  });
  // At least one write per primary key that ends in the table.
  expect(result.written).toBeGreaterThanOrEqual(expected.table.size);
  const byReason: Record<string, number> = {};
  for (const code of expected.rejects.values()) byReason[code] = (byReason[code] ?? 0) + 1;
  expect(result.rejectedByReason).toEqual(byReason);
  expect(result.complete).toBe(expected.rejects.size === 0);
}

interface Case {
  model: FileModel;
  order: OrderMode;
  concurrency: number;
  window: number;
}

const caseOf = (profile: Profile, orders: OrderMode[]) =>
  fc.record({
    model: fileModel(profile),
    order: fc.constantFrom(...orders),
    concurrency: fc.integer({ min: 1, max: 8 }),
    window: fc.integer({ min: 2, max: 6 }),
  });

async function loadAndCheck({ model: drawn, order, concurrency, window }: Case, through: string = endpoint): Promise<void> {
  // Stripes are for files grouped by partition key: the rows sorted by it (stably, so each key's rows keep
  // their order), not gzipped (a compressed file is read whole, never in stripes), and cut into 64-byte
  // stripes, so even these small files are read at many points.
  const model = order === 'stripes' ? { ...drawn, gzip: false, rows: [...drawn.rows].sort((a, b) => (a.pk < b.pk ? -1 : a.pk > b.pk ? 1 : 0)) } : drawn;
  const file = serialize(model);
  const expected = expectedOf(model, file.lines);
  const n = ++seq;
  const input = join(dir(), `${n}.${model.format}${model.gzip ? '.gz' : ''}`);
  await writeFile(input, file.bytes);
  const rejectsPath = join(dir(), `${n}.rejects.jsonl`);
  const table = await newTable();
  try {
    const result = await load(
      {
        input,
        table,
        endpoint: through,
        region: 'us-east-1',
        types: file.types,
        order,
        ...(order === 'window' ? { window } : {}),
        concurrency,
        rejectsPath,
        maxAttempts: 100,
      },
      // Backoff sleeps of 0 ms: the faults are retried at once.
      // A load that hangs is stopped (and fails the case) instead of using up the test's time.
      { random: () => 0, signal: AbortSignal.timeout(60_000), testSeams: { stripeBytes: 64 } },
    );
    if (result.order === 'stripes') striped++;
    expectCounters(result, model, expected);
    await expectTableAndRejects(endpoint, table, rejectsPath, input, expected);
  } finally {
    await dropTable(table);
  }
}

describe(`adversarial loads against DynamoDB Local (${REPLAY(FILE)})`, () => {
  for (const order of ORDERS) {
    // Stripes draw twice the cases: a small file whose ranges each hold one key is read whole (about 3 in 4
    // here), and the check below needs some that were striped.
    it.prop([caseOf(E2E, [order])], fcParams(order === 'stripes' ? 24 : 12))(
      `plain files, --order ${order}: the table is the oracle's, counters add up, each reject once`,
      (c) => loadAndCheck(c),
      120_000,
    );
  }

  // Invalid UTF-8, mixed line endings, prototype names and deep nesting together, end to end.
  it.prop([caseOf({ ...HOSTILE, maxRows: 30 }, ORDERS)], fcParams(12))(
    'hostile files (prototype names, mixed line endings, invalid UTF-8, deep nesting), any order',
    (c) => loadAndCheck(c),
    120_000,
  );

  it.prop([caseOf({ ...E2E, tooLarge: false }, ORDERS), fc.integer({ min: 1, max: 2 ** 31 - 1 })], fcParams(10))(
    'plain files under injected faults (500, 503, throttling, dropped and lost replies): every row lands as the oracle says',
    async (c, seed) => {
      const proxy = await startPartitionProxy(endpoint, {
        model: { tableWcu: 1_000_000 },
        partitionKeyName: 'pk',
        seed,
        faults: { internal: 0.1, unavailable: 0.1, throttling: 0.1, drop: 0.05, lostReply: 0.1 },
      });
      try {
        await loadAndCheck(c, proxy.url);
      } finally {
        const { internal, unavailable, throttling, drop, lostReply } = proxy.stats().faults;
        injected += internal + unavailable + throttling + drop + lostReply;
        await proxy.close();
      }
    },
    120_000,
  );

  it('the fault property did inject faults', () => {
    expect(injected).toBeGreaterThan(0);
  });

  it('the stripes property did read files in stripes', () => {
    expect(striped).toBeGreaterThan(0);
  });
});
