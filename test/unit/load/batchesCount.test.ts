/**
 * A batch is counted once it is past the concurrency gate, so a snapshot
 * taken while the reader waits for a slot (the --stop-timeout summary) counts only batches handed on.
 * A fake client (in-process): DescribeTable answers at once, BatchWriteItem waits until released.
 */
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect, it } from 'vitest';
import { load } from '../../../src/load/load.js';

it('a snapshot while the reader waits for a slot counts only the batches past the gate', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'review-'));
  const input = join(dir, 'in.csv');
  writeFileSync(input, 'pk\n' + Array.from({ length: 60 }, (_, i) => `k${i}`).join('\n') + '\n');
  const releases: (() => void)[] = [];
  let open = false;
  const client = {
    config: { region: async () => 'us-east-1' },
    destroy() {},
    async send(cmd: { input: Record<string, unknown> }) {
      if (!('RequestItems' in cmd.input))
        return {
          Table: {
            TableName: 'Tbl',
            KeySchema: [{ AttributeName: 'pk', KeyType: 'HASH' }],
            AttributeDefinitions: [{ AttributeName: 'pk', AttributeType: 'S' }],
            BillingModeSummary: { BillingMode: 'PAY_PER_REQUEST' },
          },
        };
      if (!open) await new Promise<void>((r) => releases.push(r));
      return { UnprocessedItems: {} };
    },
  };
  let snapshot: (() => { batches: number }) | undefined;
  const done = load(
    { input, table: 'Tbl', concurrency: 1, pacing: false, rejectsPath: join(dir, 'rejects.jsonl') },
    {
      client: client as never,
      now: () => 0,
      onEvent: (e) => {
        if (e.type === 'started') snapshot = e.snapshot as never;
      },
    },
  );
  let failed: unknown;
  done.catch((e) => (failed = e));
  while (releases.length < 1 && !failed) await new Promise((r) => setTimeout(r, 10));
  await new Promise((r) => setTimeout(r, 200));
  const whileWaiting = snapshot!().batches;
  open = true;
  for (const r of releases) r();
  const final = await done;
  expect(final.batches).toBe(3);
  expect(whileWaiting).toBe(1);
});
