import { availableParallelism } from 'node:os';
import { configDefaults, defineConfig } from 'vitest/config';

/**
 * Unit test files whose property runs, seeds or input sizes are cut for the unit pass (test/support/testSize.ts),
 * run again at full size by the long project, so `npm test` checks all it checked before.
 */
export const LONG_UNIT_FILES = [
  'test/unit/estimating/stripeOrder.test.ts',
  'test/unit/ordering/adaptiveWindow.test.ts',
  'test/unit/ordering/objectCuts.test.ts',
  'test/unit/load/headByKeyCells.test.ts',
  'test/unit/ordering/order.test.ts',
  'test/unit/ordering/spillDisk.test.ts',
  'test/unit/ordering/stripeResume.test.ts',
  'test/unit/ordering/windowInterleaverModel.test.ts',
  'test/unit/ordering/writeOrderer.test.ts',
  'test/unit/reading/corruptCompressed.test.ts',
  'test/unit/reading/csvFieldDecodeChunks.test.ts',
  'test/unit/reading/csvRawTextAttack.test.ts',
  'test/unit/reading/framerJumps.test.ts',
  'test/unit/reading/hostileInput.test.ts',
  'test/unit/reading/keyCells.test.ts',
  'test/unit/reading/recordStarts.test.ts',
  'test/unit/sharding/logicalKey.test.ts',
  'test/unit/sharding/shard.test.ts',
  'test/unit/shared/heavyHitters.test.ts',
  'test/unit/typing/number.test.ts',
  'test/unit/writing/wireJson.test.ts',
];

/**
 * Integration files that run one at a time, alone on the machine: those that measure rates, durations or
 * throttle counts (sized for the 2 cores CI has, not for sharing them), and those that load samples/ with
 * its default reject file beside it (a second run at once would be refused with exit 75, as users' are).
 * The other integration files run two at a time.
 */
export const SERIAL_INTEGRATION_FILES = [
  'test/cli/cli.test.ts',
  'test/cli/logsCli.test.ts',
  'test/cli/rateCli.test.ts',
  'test/cli/estimateAdvice.test.ts',
  'test/integration/capacityReports.test.ts',
  'test/integration/capacityReportsAttack.test.ts',
  'test/integration/corruptParquet.test.ts',
  'test/integration/directSend.test.ts',
  'test/integration/estimate.test.ts',
  'test/integration/estimatePlannedOrder.test.ts',
  'test/integration/gsiPacing.test.ts',
  'test/integration/load.test.ts',
  'test/integration/partitionProxy.test.ts',
  'test/integration/rateControl.test.ts',
  'test/integration/rateNoise.test.ts',
  'test/integration/segment.test.ts',
  // Timed by the machine too: a throttled load's course drawn in half-second buckets and a browser started
  // within the test's time, shares of a rate budget handed on between workers as they finish, a kill landing
  // before a load's last batch. Beside another file on 2 cores each failed a CI run (2026-11-28) and passed alone.
  'test/integration/htmlReport.test.ts',
  'test/cli/shares.test.ts',
  'test/adversarial/stripeResumeAttack.test.ts',
  // The table's rate over 10 s windows, and a part handed on 30 s after a kill, under a shared budget.
  'test/cli/rateShareAttackClock.test.ts',
  'test/cli/rateShareAttackClockAhead.test.ts',
  'test/cli/rateShareAttackPause.test.ts',
  'test/cli/rateShareAttackOutage.test.ts',
  'test/cli/rateShareAttackUnreadable.test.ts',
  'test/cli/rateShareAttackRestart.test.ts',
  'test/cli/rateShareAttackStall.test.ts',
];

// The AWS SDK warns once a process, on Node < 22, that its releases after January 2027 need Node 22: in the
// global setup, every test worker and every CLI run that was the same 8 lines dozens of times over. The
// variable is the SDK's own switch, set here so the workers and the CLIs they spawn inherit it. Users still
// see the notice: the CLI prints its one line of ours whatever the environment (test/cli/cli.test.ts clears
// the variable to check it).
process.env['AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED'] ??= 'true';

// Vitest leaves a core to its main process by default (one worker on a 2-core machine), but in these
// projects the main process idles while the workers compute, so a core left to it is a core wasted: one
// worker a core halves the wall time of `npm run test:unit` on 2 cores. unit and long share the value
// because vitest runs them in one group, which must have one worker count.
const CPU_BOUND_WORKERS = Math.max(availableParallelism(), 1);

/**
 * Three projects in one run, so `npm test` prints one summary line counting every test (.ci/run reads it).
 * unit: pure code and in-process fakes, with no global setup, so `npm run test:unit` runs on a machine
 * without Java, in under a minute on 2 cores. long: the unit files of LONG_UNIT_FILES again, at full size.
 * integration: what needs DynamoDB Local, the built CLI or a network server; its global setup starts one
 * DynamoDB Local for the run. Vitest runs a project's global setup only when that project
 * has files in the run, so the root config must not have one.
 */
export default defineConfig({
  test: {
    testTimeout: 60_000,
    // The first run downloads DynamoDB Local (~56 MB) inside the integration project's global setup.
    hookTimeout: 120_000,
    pool: 'forks',
    projects: [
      {
        extends: true,
        test: {
          name: 'unit',
          include: ['test/unit/**/*.test.ts'],
          // A worker keeps the modules it loaded from one file to the next: a third less CPU for the pass
          // (importing src/ and its dependencies again for each of ~100 files was the largest cost). The unit
          // files leave no state behind (vi.stubEnv is undone; nothing is mocked), and the long and
          // integration projects still isolate each file.
          isolate: false,
          maxWorkers: CPU_BOUND_WORKERS,
        },
      },
      {
        extends: true,
        test: {
          name: 'long',
          include: LONG_UNIT_FILES,
          env: { DDB_SPREAD_LONG_TESTS: '1' },
          maxWorkers: CPU_BOUND_WORKERS,
        },
      },
      {
        extends: true,
        test: {
          name: 'integration',
          include: ['test/**/*.test.ts'],
          exclude: [...configDefaults.exclude, 'test/unit/**', ...SERIAL_INTEGRATION_FILES],
          globalSetup: ['test/support/globalSetup.ts'],
          // Two files at a time: a file here spends most of its time waiting on DynamoDB Local, s3rver and
          // the CLIs it spawns (about one core between them), so a second file fills the idle core. Each
          // file has its own tables, folders and ports. After unit and long (group 0), before the serial files.
          maxWorkers: CPU_BOUND_WORKERS,
          sequence: { groupOrder: 1 },
        },
      },
      {
        extends: true,
        test: {
          name: 'integration-serial',
          include: SERIAL_INTEGRATION_FILES,
          globalSetup: ['test/support/globalSetup.ts'],
          // One file at a time, on any machine, after every other file: see SERIAL_INTEGRATION_FILES.
          fileParallelism: false,
        },
      },
    ],
  },
});
