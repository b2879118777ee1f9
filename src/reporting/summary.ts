import { writesToAccount, type LoadResult } from './result.js';
import { bucketWcu, type Timeline } from './timeline.js';
import { bucketsPerColumn, columnMeans, sparkline } from './charts.js';

import { escapeControl, formatBytes, formatCount, formatDuration, formatPercent, HIDDEN, shownKey } from '../shared/format.js';

/**
 * The end-of-load summary for people (stderr). Pure: a string from the result. Partition key values are
 * shown (hot keys, bottleneck) unless `excerpts` is false (--no-excerpts).
 */
export function formatSummary(result: LoadResult, stoppedBecause?: string, excerpts = true, width = 80): string {
  const seconds = result.elapsedMs / 1000;
  const lines = [
    stoppedBecause
      ? `ddb-spread: load into ${result.table} STOPPED: ${stoppedBecause}`
      : `ddb-spread: load into ${result.table} ${result.complete ? 'complete' : 'finished with rejected rows'}`,
    `  rows read     ${formatCount(result.rowsRead)}`,
    `  written       ${formatCount(result.written)}${result.deleted ? `  (${formatCount(result.written - result.deleted)} put, ${formatCount(result.deleted)} deleted)` : ''}`,
    `  superseded    ${formatCount(result.superseded)}  (same primary key later in the input; the later row was written)`,
    `  rejected      ${formatCount(result.rejected)}${formatReasons(result.rejectedByReason)}`,
  ];
  if (result.transformOutputs !== undefined)
    lines.push(
      `  transform     ${formatCount(result.transformOutputs)} items out, ${formatCount(result.skippedByTransform ?? 0)} rows skipped (neither written nor rejected), ${formatCount(result.splitWrites ?? 0)} extra items of split rows`,
    );
  if (result.revived)
    lines.push(
      `  revived       ${formatCount(result.revived)}  (superseded rows written in place of a later row of their key that DynamoDB refused; in written or rejected above)`,
    );
  const division = result.division;
  if (division?.by === 'parts' || division?.by === 'chain' || division?.by === 'ranges')
    lines.push(
      `  share         ${formatCount(division.parts)} of ${formatCount(division.parts + division.otherParts)} ${division.by === 'ranges' ? 'byte ranges' : 'parts'}, ${formatBytes(division.bytes)} of ${formatBytes(division.bytes + division.otherBytes)}${division.scannedBytes !== undefined ? `, and ${formatBytes(division.scannedBytes)} scanned for where records start` : ''}${division.copiedBytes ? ` (${formatBytes(division.copiedBytes)} read back from the copy kept then)` : ''}  (worker ${result.segment}; the other workers read the rest: ${division.why})`,
    );
  else if (result.segment) {
    lines.push(`  other segments ${formatCount(result.otherSegments)}  (this worker loads segment ${result.segment}; other workers load these rows)`);
    if (division) lines.push(`  division      by key: ${division.why}`);
  }
  if (result.conditionFailed)
    lines.push(
      `  condition failed ${formatCount(result.conditionFailed)}  (--if-not-exists/--if-newer: the table kept its item, newer or already there; not written, not rejected)`,
    );
  if (result.skippedExpired)
    lines.push(
      `  expired       ${formatCount(result.skippedExpired)}  (--skip-expired: their TTL was past at the load time, so DynamoDB would delete them; not written)`,
    );
  if (stoppedBecause) {
    const unaccounted = writesToAccount(result) - result.written - result.superseded - result.rejected - result.otherSegments;
    if (unaccounted > 0)
      lines.push(`  not written   ${formatCount(unaccounted)}  (read, not known to be stored before the stop: unsent, or a call cut off without an answer)`);
  }
  lines.push(
    `  write units   ${formatCount(result.consumedWcu)} consumed (DynamoDB${consumedNote(result)}), ${formatCount(result.plannedWcu)} planned`,
    `  batches       ${formatCount(result.batches)}, retries ${formatCount(result.retries)}, throttled items ${formatCount(result.throttledItems)}`,
    ...formatThrottles(result.throttlesByReason),
    `  elapsed       ${formatDuration(seconds)}, ${formatCount(result.itemsPerSecond)} items/s`,
  );
  lines.push(...formatRate(result, excerpts));
  const course = formatCourse(result.timeline, width);
  if (course) lines.push(course);
  lines.push(`  write order   ${result.order}${result.orderTempBytes > 0 ? `, ${formatBytes(result.orderTempBytes)} through temporary files` : ''}`);
  if (result.checkpointPath)
    lines.push(
      `  checkpoint    ${result.checkpointPath}${result.resumedFromBatch !== undefined ? `  (resumed after ${formatCount(result.resumedFromBatch, 'batch')} done before)` : ''}`,
    );
  if (result.shardManifestPath) lines.push(`  shard manifest ${result.shardManifestPath}  (${formatCount(result.shardedKeys, 'key')} sharded)`);
  if (result.rejectsPath) lines.push(`  reject file   ${result.rejectsPath}`);
  if (result.conditionFailuresPath) lines.push(`  condition failures ${result.conditionFailuresPath}  (one line per row whose condition was false)`);
  lines.push(...formatSkipped(result.skipped));
  return `${lines.join('\n')}\n`;
}

const COURSE_LABEL = '  course        ';

/**
 * The load's course as a sparkline of WCU/s, fitted to the terminal's width: a load that ran at its rate
 * is a flat line, one that was cut or stalled shows where. Nothing for a load shorter than two buckets.
 */
function formatCourse(timeline: Timeline | undefined, width: number): string | undefined {
  if (!timeline || timeline.buckets.length < 2) return undefined;
  const rates = timeline.buckets.map(bucketWcu);
  const line = (room: number) => {
    const columns = Math.max(6, room);
    const seconds = (bucketsPerColumn(rates.length, columns) * timeline.bucketMs) / 1000;
    return { spark: sparkline(rates, columns), note: courseNote(Math.max(...columnMeans(rates, columns)), seconds) };
  };
  // The note takes its room first; it may grow once when columns widen (5.0 s to 10.0 s a column).
  let fitted = line(width - COURSE_LABEL.length - 2 - courseNote(Math.max(...rates), timeline.bucketMs / 1000).length);
  for (let i = 0; i < 2; i++) {
    const again = line(width - COURSE_LABEL.length - 2 - fitted.note.length);
    if (again.spark === fitted.spark) break;
    fitted = again;
  }
  return `${COURSE_LABEL}${fitted.spark}  ${fitted.note}`;
}

function courseNote(topWcu: number, columnSeconds: number): string {
  return `(top ${formatCount(topWcu)} WCU/s; ${formatDuration(columnSeconds)} each)`;
}

/** Shown by name in the text summary; the rest are counted here and named in --json and --report. */
const SKIPPED_SHOWN = 100;

/** Every entry of a folder, glob or prefix not read, named with why: nothing is left out in silence. */
function formatSkipped(skipped: LoadResult['skipped']): string[] {
  if (skipped.length === 0) return [];
  const lines = [`  skipped       ${formatCount(skipped.length)} ${skipped.length === 1 ? 'entry' : 'entries'} of the input folders not read:`];
  for (const s of skipped.slice(0, SKIPPED_SHOWN)) lines.push(`                ${s.name}  (${s.reason}: ${s.detail})`);
  if (skipped.length > SKIPPED_SHOWN)
    lines.push(`                and ${formatCount(skipped.length - SKIPPED_SHOWN)} more, each named in the --json summary and the --report file`);
  return lines;
}

function formatRate(result: LoadResult, excerpts: boolean): string[] {
  const rate = result.rate;
  const lines = [
    `  rate          ${rate.targetWcu === undefined ? 'no target' : `target ${formatCount(rate.targetWcu)} WCU/s`} (${rate.reason}); average ${formatCount(rate.averageWcu)}${rate.peakWcu > 0 ? `, best second ${formatCount(rate.peakWcu)}` : ''} WCU/s`,
    `  throttles     ${formatCount(rate.tableThrottles)} table, ${formatCount(rate.keyThrottles)} key; rate cut ${formatCount(rate.decreases, 'time')}${rate.restores > 0 ? `, ${formatCount(rate.restores)} undone (throttles independent of the rate)` : ''}; errors ${formatCount(rate.errors)} (retried, rate kept)${rate.finalWcu !== undefined && rate.targetWcu !== undefined && rate.finalWcu < rate.targetWcu ? `, ending at ${formatCount(rate.finalWcu)} WCU/s` : ''}${Math.abs(rate.costRatio - 1) > 0.02 ? `; DynamoDB charged ${rate.costRatio.toFixed(2)}x the planned units` : ''}`,
  ];
  const show = (key: string) => shownKey(key, excerpts);
  if (result.hotKeys.length > 0 && result.hotKeys[0]!.share >= 0.01) {
    lines.push(
      `  hottest keys  ${result.hotKeys
        .filter((k) => k.share >= 0.01)
        .slice(0, 3)
        .map((k) => `${show(k.key)} ${formatPercent(k.share)}`)
        .join(', ')}`,
    );
  }
  const b = result.bottleneck;
  if (b) {
    lines.push(
      `  bottleneck    partition key ${show(b.key)}: ${formatCount(b.units)} WCU take ${formatDuration(b.keySeconds)} at --key-wcu ${formatCount(rate.keyWcu)}, the rest of the load ${formatDuration(b.loadSeconds)}`,
      `                shard it ${b.recommendedShards} ways (at least ${b.minShards}; twice that for headroom): --shard hash:${b.recommendedShards}${excerpts ? ` --shard-keys ${b.key}` : ''}`,
      // What the advice costs readers, and why adaptive capacity does not help above the per-partition limit.
      `                readers then make ${formatCount(b.recommendedShards, 'query')} per key (one per suffix, merged: ddb-spread query); adaptive capacity may isolate a hot key, never above 1,000 WCU/s`,
    );
  }
  return lines;
}

/** Throttled calls by kind, most first, when any call was throttled. */
function formatThrottles(byReason: Record<string, number> | undefined): string[] {
  const entries = Object.entries(byReason ?? {}).sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : 1));
  if (entries.length === 0) return [];
  // The kinds are the endpoint's words: control characters never reach the terminal raw.
  return [`  throttled by  ${entries.map(([kind, calls]) => `${escapeControl(kind)} ${formatCount(calls)} call${calls === 1 ? '' : 's'}`).join(', ')}`];
}

function formatReasons(byReason: Record<string, number>): string {
  const entries = Object.entries(byReason).sort((a, b) => b[1] - a[1]);
  return entries.length === 0 ? '' : `  (${entries.map(([code, count]) => `${code} ${formatCount(count)}`).join(', ')})`;
}

/**
 * The summary for machines (--json on stdout): the result object with stable field names. The timeline
 * is left to the --report file (`reportTimeline`): a few hundred buckets are not a line for a script.
 */
export function summaryJson(result: LoadResult, error?: { code: string; message: string }, excerpts = true): string {
  const { elapsedMs, itemsPerSecond, consumedWcu, timeline: _timeline, ...rest } = result;
  // Partition key values can be customer data: --no-excerpts keeps them out of every output.
  if (!excerpts) {
    rest.hotKeys = rest.hotKeys.map((k) => ({ ...k, key: HIDDEN }));
    if (rest.bottleneck) rest.bottleneck = { ...rest.bottleneck, key: HIDDEN };
  }
  return `${JSON.stringify({
    ...rest,
    consumedWcu: Math.round(consumedWcu * 10) / 10,
    elapsedMs: Math.round(elapsedMs),
    itemsPerSecond: Math.round(itemsPerSecond),
    ...(error ? { error } : {}),
  })}\n`;
}

/** The timeline as the report holds it: units rounded as the summary's, key values hidden under --no-excerpts. */
export function reportTimeline(timeline: Timeline, excerpts = true): Timeline {
  const round = (units: number) => Math.round(units * 10) / 10;
  return {
    ...timeline,
    buckets: timeline.buckets.map((b) => ({
      ...b,
      ms: Math.round(b.ms),
      consumedWcu: round(b.consumedWcu),
      plannedWcu: round(b.plannedWcu),
      rateWcu: b.rateWcu === null ? null : round(b.rateWcu),
      keys: b.keys.map((k) => ({ key: excerpts ? k.key : HIDDEN, units: round(k.units) })),
    })),
  };
}

/**
 * How the consumed units were counted when some were not reported: calls that did not ask count as
 * planned, which every answer had matched (src/pacing/capacityReports.ts); a call refused whole stored
 * nothing and counts nothing. A resumed load's units include the batches done before, counted by their
 * own run, which may have counted some as planned: the calls named are this run's only.
 */
function consumedNote(result: LoadResult): string {
  const reports = result.capacityReports;
  if (!reports) return '';
  const resumed = result.resumedFromBatch !== undefined && result.resumedFromBatch > 0;
  const notes: string[] = [];
  if (reports.inferredUnits > 0)
    notes.push(
      `${resumed ? 'this run ' : ''}reported on ${formatCount(reports.asked)} of ${formatCount(reports.calls)} calls, the rest as planned${reports.everyCall ? ' until an answer differed' : ', as every answer matched'}`,
    );
  else if (resumed && reports.calls > 0) notes.push('every unit of this run reported');
  if (resumed) notes.push('the batches done before as their run counted them');
  return notes.length === 0 ? '' : `; ${notes.join('; ')}`;
}
