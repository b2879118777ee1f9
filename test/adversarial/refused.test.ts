/**
 * Adversarially: rows DynamoDB itself refuses (a GSI key of the wrong type: a number in
 * `status`, which the index keys as S) mixed with good rows over a few primary keys, in every write
 * order. Writing the rows one by one in input order, a refused row changes nothing: the key keeps the
 * last row DynamoDB accepted before it. So the table must hold, per key, the last accepted row (even
 * when a refused row superseded it in a batch), and each refused row must be in the reject file once
 * (or, when a later row has its key, may end superseded: the table is the same).
 * Accepted codes for a refused row: WRITE_REJECTED, or a code from planning if the loader learns to
 * predict the GSI type mismatch from DescribeTable (KEY_TYPE_MISMATCH, TYPE_ERROR).
 */
import { CreateTableCommand, DescribeTableCommand } from '@aws-sdk/client-dynamodb';
import { randomBytes } from 'node:crypto';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fc, it } from '@fast-check/vitest';
import { describe, expect } from 'vitest';
import { load } from '../../src/index.js';
import type { OrderMode } from '../../src/ordering/order.js';
import { keyOf, type PlainItem } from '../support/adversarialOracle.js';
import { fcParams, REPLAY, scanRaw } from '../support/adversarialPipeline.js';
import { readRejectsIfAny } from '../support/rejects.js';
import { useLocalAws } from '../support/localAws.js';

const FILE = 'test/adversarial/refused.test.ts';
const ORDERS: OrderMode[] = ['input', 'window', 'round-robin', 'spread'];
const REFUSED_CODES = ['WRITE_REJECTED', 'KEY_TYPE_MISMATCH', 'TYPE_ERROR'];

const { endpoint, client, dir, trackTable, dropTable } = useLocalAws({ name: 'adversarial-refused', processCredentials: true });
let seq = 0;

/** A table pk (S) + sk (N) with a GSI on status (S). */
async function gsiTable(): Promise<string> {
  const name = trackTable(`t_${randomBytes(8).toString('hex')}`);
  await client().send(
    new CreateTableCommand({
      TableName: name,
      BillingMode: 'PAY_PER_REQUEST',
      AttributeDefinitions: [
        { AttributeName: 'pk', AttributeType: 'S' },
        { AttributeName: 'sk', AttributeType: 'N' },
        { AttributeName: 'status', AttributeType: 'S' },
      ],
      KeySchema: [
        { AttributeName: 'pk', KeyType: 'HASH' },
        { AttributeName: 'sk', KeyType: 'RANGE' },
      ],
      GlobalSecondaryIndexes: [{ IndexName: 'byStatus', KeySchema: [{ AttributeName: 'status', KeyType: 'HASH' }], Projection: { ProjectionType: 'ALL' } }],
    }),
  );
  for (let i = 0; i < 600; i++) {
    const res = await client().send(new DescribeTableCommand({ TableName: name }));
    if (res.Table?.TableStatus === 'ACTIVE') return name;
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error(`table ${name} not ACTIVE`);
}

interface GsiRow {
  pk: string;
  sk: number;
  /** A number is refused by DynamoDB (the index keys status as S). */
  status: string | number;
  n: number;
}

const rowArb = fc.record({
  pk: fc.constantFrom('a', 'b', 'c'),
  sk: fc.integer({ min: 0, max: 1 }),
  status: fc.oneof({ weight: 3, arbitrary: fc.constantFrom('new', 'shipped') }, { weight: 1, arbitrary: fc.constant(404) }),
  n: fc.nat({ max: 1000 }),
});

describe(`adversarial: rows DynamoDB refuses, superseding accepted ones (${REPLAY(FILE)})`, () => {
  it.prop([fc.array(rowArb, { minLength: 1, maxLength: 60 }), fc.constantFrom(...ORDERS), fc.integer({ min: 1, max: 4 })], fcParams(15))(
    "the table holds each key's last accepted row; every refused row is in the reject file once",
    async (rows: GsiRow[], order: OrderMode, concurrency: number) => {
      const n = ++seq;
      const input = join(dir(), `${n}.jsonl`);
      await writeFile(input, rows.map((r) => JSON.stringify(r)).join('\n') + '\n');
      const rejectsPath = join(dir(), `${n}.rejects.jsonl`);
      const table = await gsiTable();
      try {
        // The oracle: one by one, in input order. A refused row with a later row of the same key may
        // also end superseded (never sent): the table is the same either way.
        const expected = new Map<string, PlainItem>();
        const mustReject = new Set<number>();
        const mayReject = new Set<number>();
        rows.forEach((r, i) => {
          const key = keyOf(r.pk, String(r.sk));
          if (typeof r.status === 'number') {
            mayReject.add(i + 1);
            if (!rows.slice(i + 1).some((later) => keyOf(later.pk, String(later.sk)) === key)) mustReject.add(i + 1);
          } else expected.set(key, { n: { N: String(r.n) }, pk: { S: r.pk }, sk: { N: String(r.sk) }, status: { S: r.status } });
        });
        const result = await load(
          { input, table, endpoint, region: 'us-east-1', order, concurrency, rejectsPath },
          { random: () => 0, signal: AbortSignal.timeout(60_000) },
        );
        expect(result.rowsRead).toBe(rows.length);
        expect(result.written + result.superseded + result.rejected, 'every row accounted for').toBe(rows.length);
        const actual = await scanRaw(endpoint, table);
        expect(new Map([...actual].sort()), 'the table').toEqual(new Map([...expected].sort()));
        const records = await readRejectsIfAny(rejectsPath);
        const lines = records.map((r) => r.line);
        expect(lines.length, 'each rejected line once').toBe(new Set(lines).size);
        expect(result.rejected).toBe(lines.length);
        for (const line of mustReject) expect(lines, `refused line ${line}, the last of its key, is rejected`).toContain(line);
        for (const r of records) {
          expect(mayReject.has(r.line), `line ${r.line} was rejected but DynamoDB accepts it`).toBe(true);
          expect(REFUSED_CODES, `code of line ${r.line}`).toContain(r.code);
        }
      } finally {
        await dropTable(table);
      }
    },
    120_000,
  );
});
