import type { TestSeams } from '../load/loadDependencies.js';

/**
 * The sizes the tests that spawn the CLI shrink, read from the environment here and nowhere below: the
 * library takes them as a dependency (LoadDependencies.testSeams). Users never set these variables.
 */
export function testSeamsFromEnv(env: NodeJS.ProcessEnv): { testSeams?: TestSeams } {
  const stripeBytes = numberOf(env['DDB_SPREAD_TEST_STRIPE_BYTES']);
  const parquetStallMs = numberOf(env['DDB_SPREAD_TEST_PARQUET_STALL_MS']);
  const restartRows = numberOf(env['DDB_SPREAD_TEST_RESTART_ROWS']);
  const timelineBucketMs = numberOf(env['DDB_SPREAD_TEST_TIMELINE_BUCKET_MS']);
  const heartbeatMs = numberOf(env['DDB_SPREAD_TEST_HEARTBEAT_MS']);
  const prewarmPollMs = numberOf(env['DDB_SPREAD_TEST_PREWARM_POLL_MS']);
  const silentMs = numberOf(env['DDB_SPREAD_TEST_SILENT_MS']);
  const rangeWaitMs = numberOf(env['DDB_SPREAD_TEST_RANGE_WAIT_MS']);
  if ([stripeBytes, parquetStallMs, restartRows, timelineBucketMs, heartbeatMs, prewarmPollMs, silentMs, rangeWaitMs].every((v) => v === undefined)) return {};
  return {
    testSeams: {
      ...(stripeBytes !== undefined ? { stripeBytes } : {}),
      ...(parquetStallMs !== undefined ? { parquetStallMs } : {}),
      ...(restartRows !== undefined ? { restartRows } : {}),
      ...(timelineBucketMs !== undefined ? { timelineBucketMs } : {}),
      ...(heartbeatMs !== undefined ? { heartbeatMs } : {}),
      ...(prewarmPollMs !== undefined ? { prewarmPollMs } : {}),
      ...(silentMs !== undefined ? { silentMs } : {}),
      ...(rangeWaitMs !== undefined ? { rangeWaitMs } : {}),
    },
  };
}

function numberOf(text: string | undefined): number | undefined {
  return text === undefined ? undefined : Number(text);
}
