/**
 * Adversarial suite with --transform in its option space: generated files (bad rows included) loaded with
 * the real load() into DynamoDB Local through a drawn transform (skip some rows, throw on some, tag each item
 * with its line, split each row into its item and a copy under another sort key; synchronous or async), in
 * any write order, also under injected faults. After each load the table equals the oracle's (the rows one
 * by one, each through the transform), each rejected line is in the reject file once with its code
 * (TRANSFORM_FAILED for a throw), and the counters add up: rows read + extra items of split rows = written +
 * superseded + rejected + skipped by the transform.
 */
import { fc, it } from '@fast-check/vitest';
import { NumberValue } from '@aws-sdk/lib-dynamodb';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect } from 'vitest';
import { load } from '../../src/index.js';
import type { OrderMode } from '../../src/ordering/order.js';
import type { Item } from '../../src/shared/types.js';
import type { TransformFunction, TransformResult } from '../../src/typing/transform.js';
import { expectedOf, keyOf, type Expected, type PlainItem } from '../support/adversarialOracle.js';
import { expectTableAndRejects, fcParams, REPLAY } from '../support/adversarialPipeline.js';
import { fileModel, KEY_SCHEMA, PLAIN, serialize, setOwn, type FileModel, type Profile } from '../support/adversarialRows.js';
import { useLocalAws } from '../support/localAws.js';
import { startPartitionProxy } from '../support/partitionProxy.js';

const FILE = 'test/adversarial/transform.test.ts';
const ORDERS: OrderMode[] = ['auto', 'input', 'window', 'round-robin', 'spread'];
/** No 410 KB rows: a split copy of one would be a second reject of its line (the oracle keeps one per line). */
const PROFILE: Profile = { ...PLAIN, tooLarge: false, maxRows: 40 };
/** The attribute the drawn transform tags items with (no generated column has this name). */
const TAG = 'transformLine';
/** The split copy's sort key: the row's plus this. */
const SPLIT_SK = 100;

const { endpoint, dir, newTable, dropTable } = useLocalAws({ name: 'adversarial-transform', processCredentials: true, keys: KEY_SCHEMA });
let seq = 0;
let injected = 0;

/** A transform of the family: each choice decided by the row's line alone, so the oracle can replay it. */
interface Drawn {
  /** Skip rows whose line is divisible by this (0: none). */
  skipEvery: number;
  /** Throw on rows whose line leaves 1 when divided by this (0: none). */
  throwEvery: number;
  tag: boolean;
  split: boolean;
  async: boolean;
}

const drawnTransform = fc.record({
  skipEvery: fc.constantFrom(0, 2, 3),
  throwEvery: fc.constantFrom(0, 4, 5),
  tag: fc.boolean(),
  split: fc.boolean(),
  async: fc.boolean(),
});

const skips = (d: Drawn, line: number) => d.skipEvery > 0 && line % d.skipEvery === 0;
const throws = (d: Drawn, line: number) => d.throwEvery > 0 && line % d.throwEvery === 1;

function transformOf(d: Drawn): TransformFunction {
  const sync = (item: Item, line: number): TransformResult => {
    if (throws(d, line)) throw new Error(`drawn throw at line ${line}`);
    if (skips(d, line)) return null;
    // An item without its key goes on as it is: the planner rejects it (MISSING_KEY), once.
    if (item['pk'] === undefined || item['sk'] === undefined) return item;
    const out: Item = { ...item };
    if (d.tag) setOwn(out, TAG, `L${line}`);
    if (!d.split) return out;
    return [out, { ...out, sk: new NumberValue(String(Number((item['sk'] as NumberValue).value) + SPLIT_SK)) }];
  };
  return d.async ? async (item, origin) => sync(item, origin.line) : (item, origin) => sync(item, origin.line);
}

/** The oracle's rows through the drawn transform, in input order (later writes of a key win). */
function transformedExpected(model: FileModel, base: Expected, d: Drawn) {
  const table = new Map<string, PlainItem>();
  const rejects = new Map<number, string>();
  let skipped = 0;
  let split = 0;
  let writes = 0;
  base.fates.forEach((fate, r) => {
    const { line } = fate;
    if ('rejected' in fate && model.rows[r]!.bad !== 'missingKey') {
      rejects.set(line, fate.rejected); // refused while typing: the transform never sees it
      return;
    }
    if (throws(d, line)) return rejects.set(line, 'TRANSFORM_FAILED');
    if (skips(d, line)) return skipped++;
    if ('rejected' in fate) return rejects.set(line, fate.rejected); // its key is missing: refused after the transform
    const item: PlainItem = { ...fate.written };
    if (d.tag) setOwn<PlainItem[string]>(item, TAG, { S: `L${line}` });
    const sorted = (i: PlainItem) =>
      Object.fromEntries(
        Object.keys(i)
          .sort()
          .map((k) => [k, i[k]!]),
      ) as PlainItem;
    table.set(fate.key, sorted(item));
    writes++;
    if (d.split) {
      const sk = String(Number((fate.written['sk'] as { N: string }).N) + SPLIT_SK);
      table.set(keyOf(model.rows[r]!.pk, sk), sorted({ ...item, sk: { N: sk } }));
      writes++;
      split++;
    }
  });
  const expected: Expected = { fates: base.fates, table, rejects, good: writes };
  return { expected, skipped, split };
}

interface Case {
  model: FileModel;
  transform: Drawn;
  order: OrderMode;
  concurrency: number;
}

const caseOf = fc.record({
  model: fileModel(PROFILE),
  transform: drawnTransform,
  order: fc.constantFrom(...ORDERS),
  concurrency: fc.integer({ min: 1, max: 8 }),
});

async function loadAndCheck({ model, transform, order, concurrency }: Case, through: string = endpoint): Promise<void> {
  const file = serialize(model);
  const { expected, skipped, split } = transformedExpected(model, expectedOf(model, file.lines), transform);
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
        concurrency,
        rejectsPath,
        maxAttempts: 100,
        transform: transformOf(transform),
      },
      { random: () => 0, signal: AbortSignal.timeout(60_000) },
    );
    expect({
      rowsRead: result.rowsRead,
      rejected: result.rejected,
      skippedByTransform: result.skippedByTransform,
      splitWrites: result.splitWrites,
      writtenOrSuperseded: result.written + result.superseded,
      notWritten: result.notWritten,
    }).toEqual({
      rowsRead: model.rows.length,
      rejected: expected.rejects.size,
      skippedByTransform: skipped,
      splitWrites: split,
      writtenOrSuperseded: expected.good,
      notWritten: 0,
    });
    expect(result.rowsRead + (result.splitWrites ?? 0)).toBe(result.written + result.superseded + result.rejected + (result.skippedByTransform ?? 0));
    expect(result.complete).toBe(expected.rejects.size === 0);
    await expectTableAndRejects(endpoint, table, rejectsPath, input, expected);
  } finally {
    await dropTable(table);
  }
}

describe(`adversarial loads with --transform (${REPLAY(FILE)})`, () => {
  it.prop([caseOf], fcParams(20))(
    'a drawn transform, any order: the table is the oracle through the transform, counters add up, each reject once',
    (c) => loadAndCheck(c),
    180_000,
  );

  it.prop([caseOf, fc.integer({ min: 1, max: 2 ** 31 - 1 })], fcParams(8))(
    'under injected faults (500, 503, throttling, dropped and lost replies): the same',
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
    180_000,
  );

  it('the fault property did inject faults', () => {
    expect(injected).toBeGreaterThan(0);
  });
});
