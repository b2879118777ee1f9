import type { LoadResult } from '../core/result.js';

const n = (value: number) => Math.round(value).toLocaleString('en-US');

/** The end-of-load summary for people (stderr). Pure: a string from the result. */
export function formatSummary(result: LoadResult, stoppedBecause?: string): string {
  const seconds = result.elapsedMs / 1000;
  const lines = [
    stoppedBecause ? `ddb-spread: load into ${result.table} STOPPED: ${stoppedBecause}` : `ddb-spread: load into ${result.table} ${result.complete ? 'complete' : 'finished with rejected rows'}`,
    `  rows read     ${n(result.rowsRead)}`,
    `  written       ${n(result.written)}`,
    `  superseded    ${n(result.superseded)}  (same primary key later in the input; the later row was written)`,
    `  rejected      ${n(result.rejected)}${formatReasons(result.rejectedByReason)}`,
  ];
  if (stoppedBecause) {
    const unaccounted = result.rowsRead - result.written - result.superseded - result.rejected;
    if (unaccounted > 0) lines.push(`  not written   ${n(unaccounted)}  (read but not sent before the stop)`);
  }
  lines.push(
    `  write units   ${n(result.consumedWcu)} consumed (DynamoDB), ${n(result.plannedWcu)} planned`,
    `  batches       ${n(result.batches)}, retries ${n(result.retries)}, throttled items ${n(result.throttledItems)}`,
    `  elapsed       ${seconds.toFixed(1)} s, ${n(result.itemsPerSecond)} items/s`,
  );
  lines.push(`  write order   ${result.order}${result.orderTempBytes > 0 ? `, ${(result.orderTempBytes / 1024 ** 2).toFixed(1)} MB through temporary files` : ''}`);
  if (result.shardManifestPath) lines.push(`  shard manifest ${result.shardManifestPath}  (${n(result.shardedKeys)} keys sharded)`);
  if (result.rejectsPath) lines.push(`  reject file   ${result.rejectsPath}`);
  return `${lines.join('\n')}\n`;
}

function formatReasons(byReason: Record<string, number>): string {
  const entries = Object.entries(byReason).sort((a, b) => b[1] - a[1]);
  return entries.length === 0 ? '' : `  (${entries.map(([code, count]) => `${code} ${n(count)}`).join(', ')})`;
}

/** The summary for machines (--json on stdout): the result object with stable field names. */
export function summaryJson(result: LoadResult, error?: { code: string; message: string }): string {
  const { elapsedMs, itemsPerSecond, consumedWcu, ...rest } = result;
  return `${JSON.stringify({
    ...rest,
    consumedWcu: Math.round(consumedWcu * 10) / 10,
    elapsedMs: Math.round(elapsedMs),
    itemsPerSecond: Math.round(itemsPerSecond),
    ...(error ? { error } : {}),
  })}\n`;
}
