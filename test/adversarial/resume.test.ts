/**
 * Adversarial suite (d): the CLI with --checkpoint, killed with SIGKILL at random points of its
 * writing (once or twice), then run again with the same command until it finishes. The table must equal
 * the row-by-row oracle and the reject file must hold each rejected line exactly once, with file, line and
 * code, whatever the kill points, the write order and the input. --wcu keeps each load slow enough that
 * most kills land while writing (asserted over the cases: a run that ends first proves nothing
 * about resuming, though its table is checked all the same).
 */
import { fc, it } from '@fast-check/vitest';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { beforeAll, describe, expect } from 'vitest';
import type { OrderMode } from '../../src/ordering/order.js';
import { expectedOf } from '../support/adversarialOracle.js';
import { expectTableAndRejects, fcParams, REPLAY } from '../support/adversarialPipeline.js';
import { fileModel, KEY_SCHEMA, PLAIN, serialize, type Profile } from '../support/adversarialRows.js';
import { batchesDone } from '../support/checkpoint.js';
import { assertCliBuilt, runCli } from '../support/cli.js';
import { localEnv } from '../support/env.js';
import { useLocalAws } from '../support/localAws.js';

const FILE = 'test/adversarial/resume.test.ts';
const ORDERS: OrderMode[] = ['input', 'window', 'round-robin', 'spread', 'stripes'];
/** 60-150 rows: 3-6 batches of 25 at --wcu 40, one and a half to four seconds of writing. */
const RESUME: Profile = { ...PLAIN, tooLarge: false, minRows: 60, maxRows: 150, badShare: 0.08 };

const { endpoint, dir, newTable, dropTable } = useLocalAws({ name: 'adversarial-resume', keys: KEY_SCHEMA });
process.env['DDB_SPREAD_TEST_STRIPE_BYTES'] = '64';
let seq = 0;
/** Kills that landed while writing, and cases run: on a busy machine a small load may finish before its kill. */
let landed = 0;
let cases = 0;

beforeAll(assertCliBuilt);

describe(`adversarial kill -9 and resume (${REPLAY(FILE)})`, () => {
  it.prop(
    [
      fc.record({
        model: fileModel(RESUME),
        order: fc.constantFrom(...ORDERS),
        concurrency: fc.integer({ min: 1, max: 4 }),
        // Kill once the checkpoint records this many batches done (then this many more, for a second kill).
        kills: fc.array(fc.integer({ min: 1, max: 2 }), { minLength: 1, maxLength: 2 }),
      }),
    ],
    // Shrinking spawns the CLI again and again: bounded, so a failure reports within the test's time.
    { ...fcParams(6), interruptAfterTimeLimit: 150_000, markInterruptAsFailure: true },
  )(
    'plain files, any order, SIGKILL at random batches then the same command: table = oracle, each reject once',
    async ({ model: drawn, order, concurrency, kills }) => {
      // Stripes: rows sorted by partition key (stably), not gzipped (a compressed file is read whole), cut into
      // 64-byte stripes (the CLI inherits the variable).
      const model = order === 'stripes' ? { ...drawn, gzip: false, rows: [...drawn.rows].sort((a, b) => (a.pk < b.pk ? -1 : a.pk > b.pk ? 1 : 0)) } : drawn;
      const file = serialize(model);
      const expected = expectedOf(model, file.lines);
      // Enough rows to write that a kill can land while writing (at --wcu 40, over a second).
      fc.pre(expected.good >= 50);
      const n = ++seq;
      const input = join(dir(), `${n}.${model.format}${model.gzip ? '.gz' : ''}`);
      await writeFile(input, file.bytes);
      const table = await newTable();
      const checkpoint = join(dir(), `${n}.checkpoint.json`);
      const rejectsPath = join(dir(), `${n}.rejects.jsonl`);
      const types = Object.entries(file.types)
        .map(([name, type]) => `${name}:${type}`)
        .join(',');
      const args = [
        'load',
        input,
        '--table',
        table,
        '--types',
        types,
        '--order',
        order,
        '--concurrency',
        String(concurrency),
        '--wcu',
        '40',
        '--checkpoint',
        checkpoint,
        '--rejects',
        rejectsPath,
        '--no-progress',
      ];
      const env = localEnv(endpoint);
      try {
        let target = 0;
        let killed = 0;
        for (const step of kills) {
          target += step;
          const at = target;
          const run = await runCli(args, {
            cwd: dir(),
            env,
            stdout: 'ignore',
            timeoutMs: 60_000,
            kill: { signal: 'SIGKILL', when: () => batchesDone(checkpoint) >= at },
          });
          // The run may finish before the kill on a small input; then the next run has nothing to do.
          if (run.signal === 'SIGKILL') killed++;
          else expect([0, 2], run.stderr).toContain(run.code);
        }
        landed += killed;
        cases++;
        const last = await runCli(args, { cwd: dir(), env, stdout: 'ignore', timeoutMs: 60_000 });
        // A finished checkpoint reports its outcome again: the same exit code either way.
        expect(last.code, last.stderr).toBe(expected.rejects.size > 0 ? 2 : 0);
        await expectTableAndRejects(endpoint, table, rejectsPath, input, expected);
      } finally {
        await dropTable(table);
      }
    },
    300_000,
  );

  it('kills landed while writing in most cases', () => {
    // Shrinking tries ever smaller inputs, which finish before their kill more often, and a busy
    // machine slows the kill's watcher: a third is what shows the property exercises kills at all.
    expect(landed, `${landed} kills landed in ${cases} cases`).toBeGreaterThanOrEqual(Math.ceil(cases / 3));
  });
});
