import { findBottleneck, type RateSnapshot } from '../pacing/rateControl.js';
import type { OrderMode } from '../ordering/order.js';
import { writesToAccount, type DivisionSummary, type LoadResult, type RateSummary } from '../reporting/result.js';
import type { LoadTally } from './loadTally.js';
import type { CapacityReportsSummary } from '../pacing/capacityReports.js';
import type { SkippedPart } from '../reading/listing.js';
import type { Timeline } from '../reporting/timeline.js';
import { mergeOwn } from '../shared/ownRecord.js';

/** What the result says besides the counters, as the load's parts know it at the moment it is asked. */
export interface ResultFacts {
  table: string;
  input: string;
  order: OrderMode;
  elapsedMs: number;
  bytesRead: number;
  /** The reject file, when a row went there. */
  rejectsPath: string | undefined;
  /** The --condition-failures file, when a row went there. */
  conditionFailuresPath?: string | undefined;
  orderTempBytes: number;
  shardManifestPath: string | undefined;
  shardedKeys: number;
  /** The rate controller's state; undefined without pacing (a dry run, --no-pacing). */
  rate: RateSnapshot | undefined;
  /**
   * The rate the load could reach: its target, but no more than an on-demand table's growth allowed or a
   * provisioned table's WCU; Infinity without a target.
   */
  targetWcu: number;
  /**
   * What the table takes at once (provisioned WCU, an on-demand table's warm throughput, 4,000 when new):
   * without a target, the rate a hot key's time is weighed against. Undefined when not known.
   */
  nowWcu?: number | undefined;
  rateReason: string;
  keyWcu: number;
  pacing: boolean;
  segment: string | undefined;
  division?: DivisionSummary | undefined;
  checkpointPath: string | undefined;
  resumedFromBatch: number | undefined;
  /** This run's calls that asked for ConsumedCapacity; undefined for a dry run. */
  capacityReports: CapacityReportsSummary | undefined;
  /** Entries of the input's folders, globs and prefixes not read, with why. */
  skipped?: readonly SkippedPart[] | undefined;
  /** The load failed or was asked to stop: it is not complete, whatever the counts. */
  stopped?: boolean;
  /** The load's course, when it was recorded. */
  timeline?: Timeline | undefined;
}

/** The result of a load from its tally and the facts of its parts. Pure. */
export function loadResult(tally: LoadTally, facts: ResultFacts): LoadResult {
  const counters = tally.counters;
  const { elapsedMs, bytesRead } = facts;
  const keyUnits = tally.keyUnits;
  return {
    ...counters,
    bytesRead,
    rejectedByReason: { ...counters.rejectedByReason },
    throttlesByReason: mergeOwn(counters.throttlesByReason),
    table: facts.table,
    input: facts.input,
    rejectsPath: facts.rejectsPath,
    ...(facts.conditionFailuresPath !== undefined ? { conditionFailuresPath: facts.conditionFailuresPath } : {}),
    order: facts.order,
    orderTempBytes: facts.orderTempBytes,
    shardManifestPath: facts.shardManifestPath,
    shardedKeys: facts.shardedKeys,
    rate: rateSummary(tally, facts),
    hotKeys: keyUnits.top(5).map((k) => ({ key: displayKey(k.key), units: k.weight, share: keyUnits.total > 0 ? k.weight / keyUnits.total : 0 })),
    bottleneck: bottleneckOf(tally, facts),
    elapsedMs,
    itemsPerSecond: elapsedMs > 0 ? ((counters.written - counters.writtenBeforeResume) * 1000) / elapsedMs : 0,
    segment: facts.segment,
    ...(facts.division ? { division: facts.division } : {}),
    checkpointPath: facts.checkpointPath,
    resumedFromBatch: facts.resumedFromBatch,
    capacityReports: facts.capacityReports,
    ...(facts.timeline ? { timeline: facts.timeline } : {}),
    skipped: [...(facts.skipped ?? [])],
    notWritten: writesToAccount(counters) - counters.written - counters.superseded - counters.rejected - counters.otherSegments,
    // Every row of the input (read to its end, not stopped) written or superseded (or another segment's).
    complete:
      tally.inputEnded &&
      facts.stopped !== true &&
      counters.rejected === 0 &&
      counters.written + counters.superseded + counters.otherSegments === writesToAccount(counters),
  };
}

function rateSummary(tally: LoadTally, facts: ResultFacts): RateSummary {
  const snapshot = facts.rate;
  const { elapsedMs } = facts;
  return {
    targetWcu: snapshot?.targetWcu,
    reason: facts.rateReason,
    keyWcu: facts.keyWcu,
    finalWcu: snapshot?.currentWcu,
    peakWcu: snapshot?.peakWcu ?? 0,
    averageWcu: elapsedMs > 0 ? ((tally.counters.plannedWcu - tally.plannedWcuBeforeResume) * 1000) / elapsedMs : 0,
    costRatio: snapshot?.costRatio ?? 1,
    tableThrottles: snapshot?.tableThrottles ?? 0,
    keyThrottles: snapshot?.keyThrottles ?? 0,
    decreases: snapshot?.decreases ?? 0,
    errors: snapshot?.errors ?? 0,
    restores: snapshot?.restores ?? 0,
  };
}

/** A key that needed longer at --key-wcu than the rest of the load took. */
function bottleneckOf(tally: LoadTally, facts: ResultFacts): LoadResult['bottleneck'] {
  const heaviest = tally.keyUnits.top(1)[0];
  // Every unit of the load (GSIs included) at the load's rate; a key's own units at --key-wcu.
  const units = tally.counters.plannedWcu - tally.plannedWcuBeforeResume;
  const target = facts.targetWcu;
  const loadWcu = Number.isFinite(target) ? target : untargetedWcu(units, facts);
  const found = facts.pacing ? findBottleneck(heaviest, units, loadWcu, facts.keyWcu) : undefined;
  // Without a target the load is weighed against what the table could take, which almost any hot key of a
  // small load exceeds: a key that held it back by less than that is not worth sharding (the sample of 256
  // orders named its hot key for 0.06 s, with advice to shard it 4 ways). With --wcu, the rate asked for.
  if (!found || (!Number.isFinite(target) && found.keySeconds - found.loadSeconds < MIN_BOTTLENECK_SECONDS)) return undefined;
  return { ...found, key: displayKey(found.key) };
}

/** Seconds a hot key must add to the time of a load without --wcu to be named as its bottleneck. */
export const MIN_BOTTLENECK_SECONDS = 1;

/**
 * The rate a load without a target could go at: what the table takes at once (as the estimate assumes),
 * or the best second it reached, or its average, whichever is most. Not the average alone: a hot key held
 * to its own limit stretches the load and drags the average down to its own rate, so the key that set
 * the load's time would never look slower than the load.
 */
function untargetedWcu(units: number, facts: ResultFacts): number {
  const average = facts.elapsedMs > 0 ? (units * 1000) / facts.elapsedMs : 0;
  return Math.max(average, facts.rate?.peakWcu ?? 0, facts.nowWcu ?? 0);
}

/** A partition identity (type letter + value) as the user wrote the key. */
export function displayKey(partitionId: string): string {
  return partitionId.slice(1);
}
