import type { LoadResult } from './result.js';

const n = (value: number) => Math.round(value).toLocaleString('en-US');

/**
 * The end-of-load summary for people (stderr). Pure: a string from the result. Partition key values are
 * shown (hot keys, bottleneck) unless `excerpts` is false (--no-excerpts).
 */
export function formatSummary(result: LoadResult, stoppedBecause?: string, excerpts = true): string {
  const seconds = result.elapsedMs / 1000;
  const lines = [
    stoppedBecause ? `ddb-spread: load into ${result.table} STOPPED: ${stoppedBecause}` : `ddb-spread: load into ${result.table} ${result.complete ? 'complete' : 'finished with rejected rows'}`,
    `  rows read     ${n(result.rowsRead)}`,
    `  written       ${n(result.written)}`,
    `  superseded    ${n(result.superseded)}  (same primary key later in the input; the later row was written)`,
    `  rejected      ${n(result.rejected)}${formatReasons(result.rejectedByReason)}`,
  ];
  if (result.revived) lines.push(`  revived       ${n(result.revived)}  (superseded rows written in place of a later row of their key that DynamoDB refused; in written or rejected above)`);
  if (result.segment) lines.push(`  other segments ${n(result.otherSegments)}  (this worker loads segment ${result.segment}; other workers load these rows)`);
  if (stoppedBecause) {
    const unaccounted = result.rowsRead - result.written - result.superseded - result.rejected - result.otherSegments;
    if (unaccounted > 0) lines.push(`  not written   ${n(unaccounted)}  (read but not sent before the stop)`);
  }
  lines.push(
    `  write units   ${n(result.consumedWcu)} consumed (DynamoDB), ${n(result.plannedWcu)} planned`,
    `  batches       ${n(result.batches)}, retries ${n(result.retries)}, throttled items ${n(result.throttledItems)}`,
    `  elapsed       ${seconds.toFixed(1)} s, ${n(result.itemsPerSecond)} items/s`,
  );
  lines.push(...formatRate(result, excerpts));
  lines.push(`  write order   ${result.order}${result.orderTempBytes > 0 ? `, ${(result.orderTempBytes / 1024 ** 2).toFixed(1)} MB through temporary files` : ''}`);
  if (result.checkpointPath) lines.push(`  checkpoint    ${result.checkpointPath}${result.resumedFromBatch !== undefined ? `  (resumed after ${n(result.resumedFromBatch)} batches done before)` : ''}`);
  if (result.shardManifestPath) lines.push(`  shard manifest ${result.shardManifestPath}  (${n(result.shardedKeys)} keys sharded)`);
  if (result.rejectsPath) lines.push(`  reject file   ${result.rejectsPath}`);
  return `${lines.join('\n')}\n`;
}

function formatRate(result: LoadResult, excerpts: boolean): string[] {
  const rate = result.rate;
  const lines = [
    `  rate          ${rate.targetWcu === undefined ? 'no target' : `target ${n(rate.targetWcu)} WCU/s`} (${rate.reason}); average ${n(rate.averageWcu)}${rate.peakWcu > 0 ? `, best second ${n(rate.peakWcu)}` : ''} WCU/s`,
    `  throttles     ${n(rate.tableThrottles)} table, ${n(rate.keyThrottles)} key; rate cut ${n(rate.decreases)} times${rate.restores > 0 ? `, ${n(rate.restores)} undone (throttles independent of the rate)` : ''}; errors ${n(rate.errors)} (retried, rate kept)${rate.finalWcu !== undefined && rate.targetWcu !== undefined && rate.finalWcu < rate.targetWcu ? `, ending at ${n(rate.finalWcu)} WCU/s` : ''}${Math.abs(rate.costRatio - 1) > 0.02 ? `; DynamoDB charged ${rate.costRatio.toFixed(2)}x the planned units` : ''}`,
  ];
  const show = (key: string) => (excerpts ? JSON.stringify(key) : '(key hidden by --no-excerpts)');
  if (result.hotKeys.length > 0 && result.hotKeys[0]!.share >= 0.01) {
    lines.push(`  hottest keys  ${result.hotKeys.filter((k) => k.share >= 0.01).slice(0, 3).map((k) => `${show(k.key)} ${(k.share * 100).toFixed(1)}%`).join(', ')}`);
  }
  const b = result.bottleneck;
  if (b) {
    lines.push(
      `  bottleneck    partition key ${show(b.key)}: ${n(b.units)} WCU take ${b.keySeconds.toFixed(0)} s at --key-wcu ${n(rate.keyWcu)}, the rest of the load ${b.loadSeconds.toFixed(0)} s`,
      `                shard it ${b.recommendedShards} ways (at least ${b.minShards}; twice that for headroom): --shard hash:${b.recommendedShards}${excerpts ? ` --shard-keys ${b.key}` : ''}`,
    );
  }
  return lines;
}

function formatReasons(byReason: Record<string, number>): string {
  const entries = Object.entries(byReason).sort((a, b) => b[1] - a[1]);
  return entries.length === 0 ? '' : `  (${entries.map(([code, count]) => `${code} ${n(count)}`).join(', ')})`;
}

/** The summary for machines (--json on stdout): the result object with stable field names. */
export function summaryJson(result: LoadResult, error?: { code: string; message: string }, excerpts = true): string {
  const { elapsedMs, itemsPerSecond, consumedWcu, ...rest } = result;
  // Partition key values can be customer data: --no-excerpts keeps them out of every output.
  if (!excerpts) {
    rest.hotKeys = rest.hotKeys.map((k) => ({ ...k, key: '(hidden)' }));
    if (rest.bottleneck) rest.bottleneck = { ...rest.bottleneck, key: '(hidden)' };
  }
  return `${JSON.stringify({
    ...rest,
    consumedWcu: Math.round(consumedWcu * 10) / 10,
    elapsedMs: Math.round(elapsedMs),
    itemsPerSecond: Math.round(itemsPerSecond),
    ...(error ? { error } : {}),
  })}\n`;
}
