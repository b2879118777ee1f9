/**
 * Adversarial suite with --if-not-exists in its option space: generated files (bad rows and repeated keys
 * included) loaded with the real load() into DynamoDB Local, in any write order and concurrency, also under
 * injected faults (500, 503, throttling, dropped and lost replies: a call whose reply is lost was stored, and
 * its resend finds the row's own item). After each load the table equals the oracle's (the rows one by one,
 * each written only where its key is absent: the first good row of a key wins), each rejected line is in the
 * reject file once, and the counters add up exactly: written = the keys, conditionFailed = the later good
 * rows of those keys, superseded 0, rows read = written + conditionFailed + rejected; and --condition-failures
 * lists exactly the lines of those later rows, each once (a lost reply's resend that finds its own item lists none).
 */
import { fc, it } from '@fast-check/vitest';
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect } from 'vitest';
import { load } from '../../src/index.js';
import type { OrderMode } from '../../src/ordering/order.js';
import { expectedOf, type Expected, type PlainItem } from '../support/adversarialOracle.js';
import { expectTableAndRejects, fcParams, REPLAY } from '../support/adversarialPipeline.js';
import { fileModel, KEY_SCHEMA, PLAIN, serialize, type FileModel, type Profile } from '../support/adversarialRows.js';
import { useLocalAws } from '../support/localAws.js';
import { startPartitionProxy } from '../support/partitionProxy.js';

const FILE = 'test/adversarial/conditional.test.ts';
const ORDERS: OrderMode[] = ['auto', 'input', 'window', 'round-robin', 'spread'];
const PROFILE: Profile = { ...PLAIN, maxRows: 40 };

const { endpoint, dir, newTable, dropTable } = useLocalAws({ name: 'adversarial-conditional', processCredentials: true, keys: KEY_SCHEMA });
let seq = 0;
let injected = 0;

/** The oracle under --if-not-exists: a key's first good row is stored, its later ones fail their condition (their lines). */
function firstWins(base: Expected): { expected: Expected; failed: number; failedLines: number[] } {
  const table = new Map<string, PlainItem>();
  const failedLines: number[] = [];
  for (const fate of base.fates) {
    if (!('written' in fate)) continue;
    if (table.has(fate.key)) failedLines.push(fate.line);
    else table.set(fate.key, fate.written);
  }
  return { expected: { ...base, table, good: table.size }, failed: failedLines.length, failedLines };
}

interface Case {
  model: FileModel;
  order: OrderMode;
  concurrency: number;
}

const caseOf = fc.record({ model: fileModel(PROFILE), order: fc.constantFrom(...ORDERS), concurrency: fc.integer({ min: 1, max: 8 }) });

async function loadAndCheck({ model, order, concurrency }: Case, through: string = endpoint): Promise<void> {
  const file = serialize(model);
  const { expected, failed, failedLines } = firstWins(expectedOf(model, file.lines));
  const n = ++seq;
  const input = join(dir(), `${n}.${model.format}${model.gzip ? '.gz' : ''}`);
  await writeFile(input, file.bytes);
  const rejectsPath = join(dir(), `${n}.rejects.jsonl`);
  const conditionFailuresPath = join(dir(), `${n}.failed.jsonl`);
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
        ifNotExists: true,
        conditionFailuresPath,
      },
      { random: () => 0, signal: AbortSignal.timeout(60_000) },
    );
    expect({
      rowsRead: result.rowsRead,
      rejected: result.rejected,
      written: result.written,
      conditionFailed: result.conditionFailed,
      superseded: result.superseded,
      notWritten: result.notWritten,
    }).toEqual({
      rowsRead: model.rows.length,
      rejected: expected.rejects.size,
      written: expected.table.size,
      conditionFailed: failed,
      superseded: 0,
      notWritten: 0,
    });
    expect(result.complete).toBe(expected.rejects.size === 0);
    await expectTableAndRejects(endpoint, table, rejectsPath, input, expected);
    const listed = failed === 0 ? [] : (await readFile(conditionFailuresPath, 'utf8')).split('\n').filter(Boolean);
    expect(listed.map((l) => (JSON.parse(l) as { line: number }).line).sort((a, b) => a - b)).toEqual(failedLines.sort((a, b) => a - b));
    expect(result.conditionFailuresPath).toBe(failed === 0 ? undefined : conditionFailuresPath);
  } finally {
    await dropTable(table);
  }
}

describe(`adversarial loads with --if-not-exists (${REPLAY(FILE)})`, () => {
  it.prop([caseOf], fcParams(15))(
    'any order and concurrency: the first good row of each key stored, the counters exact, each reject once',
    (c) => loadAndCheck(c),
    180_000,
  );

  it.prop([caseOf, fc.integer({ min: 1, max: 2 ** 31 - 1 })], fcParams(8))(
    'under injected faults (500, 503, throttling, dropped and lost replies): the same, a lost reply counted as written',
    async (c, seed) => {
      const proxy = await startPartitionProxy(endpoint, {
        model: { tableWcu: 1_000_000 },
        partitionKeyName: 'pk',
        singleWriteFaults: true,
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
