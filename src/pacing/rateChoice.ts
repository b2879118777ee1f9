import { formatCount } from '../shared/format.js';
import { LoaderError } from '../shared/errors.js';
import type { RateControlOptions } from './rateControl.js';
import type { TableInfo } from '../shared/tableInfo.js';

/** What `--wcu` asks for. */
export type WcuSpec = { kind: 'fixed'; wcu: number } | { kind: 'auto'; percent: number };

export const DEFAULT_AUTO_PERCENT = 80;
/** Writes per second a new on-demand table takes at once (AWS: "up to 4,000 writes per second"). */
export const NEW_ON_DEMAND_WCU = 4000;
/** Default per-table on-demand write quota (adjustable in Service Quotas). */
export const ON_DEMAND_TABLE_QUOTA_WCU = 40_000;
/** "throttling can still occur if the throughput exceeds twice the previous peak within the same 30 minutes" */
const ON_DEMAND_GROWTH = { factor: 2, windowMs: 30 * 60_000 };

/**
 * What the table takes now: provisioned WCU, or an on-demand table's warm throughput (4,000 when new).
 * The estimate works at it without --wcu, and a load without a target is judged against it.
 */
export function nowCapacity(info: Pick<TableInfo, 'billingMode' | 'provisionedWcu' | 'warmWriteUnits'>): number {
  if (info.billingMode === 'PROVISIONED' && info.provisionedWcu) return info.provisionedWcu;
  return info.warmWriteUnits ?? NEW_ON_DEMAND_WCU;
}

/** Parses --wcu: a number of write units per second, "auto" or "auto:P%". */
export function parseWcuSpec(text: string): WcuSpec {
  const value = text.trim();
  const auto = /^auto(?::(\d+(?:\.\d+)?)%?)?$/i.exec(value);
  if (auto) {
    const percent = auto[1] === undefined ? DEFAULT_AUTO_PERCENT : Number(auto[1]);
    if (!(percent >= 1 && percent <= 100)) throw new LoaderError('INVALID_OPTION', `--wcu auto:P% takes a percentage from 1 to 100, got "${text}"`);
    return { kind: 'auto', percent };
  }
  const wcu = Number(value);
  if (!/^\d+(\.\d+)?$/.test(value) || !(wcu >= 1) || !Number.isFinite(wcu)) {
    throw new LoaderError('INVALID_OPTION', `--wcu takes write units per second (a number from 1 up), "auto" or "auto:P%" (e.g. auto:60%), got "${text}"`);
  }
  return { kind: 'fixed', wcu };
}

export interface RateChoice {
  /** The load's target rate (Infinity without --wcu). */
  targetWcu: number;
  growth?: RateControlOptions['growth'];
  /** One sentence for the user: the rate and why. */
  reason: string;
  /** A caution worth printing (a fixed rate above what the table is provisioned for). */
  warning?: string;
  /** One worker's part of a budget several share (--total-wcu): the budget of all of them, WCU/s. */
  wholeWcu?: number;
  /** A fixed rate as the user gave it, for other warnings about it ("--total-wcu 40,000"). */
  label?: string;
}

/**
 * The rate of one worker of `workers` (--segment i/N): its own --wcu, or its part of the budget of them
 * all (`total`: --total-wcu, or --wcu auto, which is the table's rate for the whole load). The budget is
 * chosen, and warned about, as the whole load's, then divided: 1/N of the target, and of an on-demand
 * table's growth (its warm start and cap), to begin with; load/sharedRate.ts hands parts on from there.
 */
export function chooseWorkerRate(own: WcuSpec | undefined, total: WcuSpec | undefined, workers: number, table: Parameters<typeof chooseRate>[1]): RateChoice {
  if (total === undefined) return chooseRate(own, table);
  const whole = chooseRate(total, table, '--total-wcu');
  const part = whole.targetWcu / workers;
  const growth = whole.growth ? { ...whole.growth, initial: whole.growth.initial / workers, cap: whole.growth.cap / workers } : undefined;
  return {
    targetWcu: part,
    ...(growth ? { growth } : {}),
    reason: `${whole.reason}, for all ${workers} workers together: ${formatCount(part)} WCU/s each while all run`,
    ...(whole.warning ? { warning: whole.warning } : {}),
    wholeWcu: whole.targetWcu,
  };
}

/**
 * The rate of all `workers` workers of a load together, as the table feels it (the whole load's estimate):
 * --total-wcu, else each worker's own fixed --wcu, `workers` times over; --wcu auto given to several
 * workers is the whole load's already (options.ts makes it --total-wcu). Chosen and warned about as one
 * rate, as chooseWorkerRate chooses the budget before dividing it.
 */
export function chooseWholeRate(own: WcuSpec | undefined, total: WcuSpec | undefined, workers: number, table: Parameters<typeof chooseRate>[1]): RateChoice {
  if (total !== undefined) {
    const whole = chooseRate(total, table, '--total-wcu');
    return { ...whole, reason: workers > 1 ? `${whole.reason}, for all ${workers} workers together` : whole.reason, wholeWcu: whole.targetWcu };
  }
  if (own?.kind !== 'fixed' || workers < 2) return chooseRate(own, table);
  const whole = chooseRate({ kind: 'fixed', wcu: own.wcu * workers }, table, `${workers} workers at --wcu ${formatCount(own.wcu)} each:`);
  return { ...whole, wholeWcu: whole.targetWcu };
}

/**
 * The target rate from --wcu and the table's description. The budget covers every write unit the load
 * causes, GSIs included, so on a provisioned table with GSIs `auto` is conservative for the base table.
 */
export function chooseRate(
  spec: WcuSpec | undefined,
  table: Pick<TableInfo, 'billingMode' | 'provisionedWcu' | 'warmWriteUnits' | 'onDemandMaxWriteUnits' | 'gsis'>,
  /** The option named in the reason and warnings. */
  flag = '--wcu',
): RateChoice {
  if (!spec) return { targetWcu: Infinity, reason: 'no --wcu: as fast as the table takes it, slowing down on throttles' };
  const gsiNote = table.gsis.length > 0 ? ` (the budget includes the writes to ${table.gsis.length} GSI${table.gsis.length > 1 ? 's' : ''})` : '';
  if (spec.kind === 'fixed') {
    const provisioned = table.billingMode === 'PROVISIONED' ? table.provisionedWcu : undefined;
    const label = `${flag} ${formatCount(spec.wcu)}`;
    const choice: RateChoice = { targetWcu: spec.wcu, reason: `${label}${gsiNote}`, label };
    if (provisioned !== undefined && provisioned > 0 && spec.wcu > provisioned) {
      choice.warning = `${label} is above the table's provisioned ${formatCount(provisioned)} WCU; expect throttling once burst capacity is spent`;
    } else if (table.billingMode === 'PAY_PER_REQUEST') {
      // An on-demand table takes its warm throughput at once, and twice its previous peak every 30 minutes.
      const warm = table.warmWriteUnits !== undefined && table.warmWriteUnits > 0 ? table.warmWriteUnits : NEW_ON_DEMAND_WCU;
      if (spec.wcu > warm) {
        choice.warning = `${label} is above the ${formatCount(warm)} WCU/s the on-demand table takes at once (${table.warmWriteUnits ? 'its warm throughput' : 'a new table'}); DynamoDB takes up to twice the previous peak every 30 minutes, so expect throttling until it has grown (${flag} auto grows with it)`;
      }
    }
    return choice;
  }
  const share = spec.percent / 100;
  if (table.billingMode === 'PROVISIONED' && table.provisionedWcu !== undefined && table.provisionedWcu > 0) {
    const target = Math.max(1, table.provisionedWcu * share);
    return {
      targetWcu: target,
      reason: `${flag} auto: ${spec.percent}% of the table's provisioned ${formatCount(table.provisionedWcu)} WCU = ${formatCount(target)} WCU/s${gsiNote}`,
    };
  }
  const warm = table.warmWriteUnits !== undefined && table.warmWriteUnits > 0 ? table.warmWriteUnits : undefined;
  const start = (warm ?? NEW_ON_DEMAND_WCU) * share;
  const cap = table.onDemandMaxWriteUnits !== undefined && table.onDemandMaxWriteUnits > 0 ? table.onDemandMaxWriteUnits : ON_DEMAND_TABLE_QUOTA_WCU;
  const from =
    warm !== undefined
      ? `its warm throughput of ${formatCount(warm)} WCU/s`
      : `${formatCount(NEW_ON_DEMAND_WCU)} WCU/s (what a new on-demand table takes; DynamoDB reported no warm throughput)`;
  return {
    targetWcu: cap * share,
    growth: { initial: start, factor: ON_DEMAND_GROWTH.factor, windowMs: ON_DEMAND_GROWTH.windowMs, cap: cap * share },
    reason: `${flag} auto: on-demand table; starting at ${spec.percent}% of ${from} = ${formatCount(start)} WCU/s, never above twice the peak reached 30 minutes earlier, up to ${spec.percent}% of ${formatCount(cap)}${table.onDemandMaxWriteUnits ? " (the table's MaxWriteRequestUnits)" : ' (the default table quota)'}${gsiNote}`,
  };
}
