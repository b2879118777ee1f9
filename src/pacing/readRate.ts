import { formatCount } from '../shared/format.js';
import { LoaderError } from '../shared/errors.js';

/** What `--rcu` asks for: read units per second, or a share of what the table takes. */
export type RcuSpec = { kind: 'fixed'; rcu: number } | { kind: 'auto'; percent: number };

/** --rcu auto's share, as --wcu auto's (pacing/rateChoice.ts). */
export const DEFAULT_AUTO_READ_PERCENT = 80;
/** Read units per second a new on-demand table takes at once (AWS: 12,000 reads, with 4,000 writes). */
export const NEW_ON_DEMAND_RCU = 12_000;

/** The table's read capacity as DescribeTable gives it. */
export interface ReadCapacity {
  billingMode: 'PROVISIONED' | 'PAY_PER_REQUEST';
  provisionedRcu?: number | undefined;
  /** WarmThroughput.ReadUnitsPerSecond: what the table takes at once. */
  warmReadUnits?: number | undefined;
  /** OnDemandThroughput.MaxReadRequestUnits: the on-demand table's own ceiling. */
  maxReadUnits?: number | undefined;
}

/** Parses --rcu (or the library's `rcu`): a number above 0, "auto" or "auto:P%" (1 to 100). Pure. */
export function parseRcuSpec(value: number | string): RcuSpec {
  if (typeof value === 'number') {
    if (!Number.isFinite(value) || value <= 0) throw new LoaderError('INVALID_OPTION', `--rcu takes read units per second above 0, got ${String(value)}`);
    return { kind: 'fixed', rcu: value };
  }
  const text = String(value).trim();
  const auto = /^auto(?::(\d+(?:\.\d+)?)%?)?$/i.exec(text);
  if (auto) {
    const percent = auto[1] === undefined ? DEFAULT_AUTO_READ_PERCENT : Number(auto[1]);
    if (!(percent >= 1 && percent <= 100)) throw new LoaderError('INVALID_OPTION', `--rcu auto:P% takes a percentage from 1 to 100, got "${text}"`);
    return { kind: 'auto', percent };
  }
  const rcu = Number(text);
  if (text === '' || !Number.isFinite(rcu) || rcu <= 0)
    throw new LoaderError('INVALID_OPTION', `--rcu takes read units per second above 0, "auto" or "auto:P%" (e.g. auto:50%), got "${text}"`);
  return { kind: 'fixed', rcu };
}

/**
 * The verify's read rate, and why, pure. auto: P% of a provisioned table's read capacity; on demand, P% of
 * what the table takes at once (its warm read throughput, else a new table's 12,000), never above P% of its
 * MaxReadRequestUnits. A verify does not push an on-demand table to grow: it shares the table with its
 * traffic. With --segment i/N each worker takes 1/N of it.
 */
export function chooseReadRate(spec: RcuSpec, table: ReadCapacity, workers = 1): { rcu: number; reason: string } {
  const perWorker = workers > 1 ? `, 1/${workers} of it for this --segment` : '';
  if (spec.kind === 'fixed') return { rcu: spec.rcu, reason: `--rcu ${formatCount(spec.rcu)}` };
  const share = spec.percent / 100;
  const positive = (n: number | undefined) => (n !== undefined && Number.isFinite(n) && n > 0 ? n : undefined);
  const provisioned = positive(table.provisionedRcu);
  if (table.billingMode === 'PROVISIONED' && provisioned !== undefined) {
    const rcu = Math.max(1, (provisioned * share) / workers);
    return { rcu, reason: `--rcu auto: ${spec.percent}% of the table's provisioned ${formatCount(provisioned)} RCU${perWorker} = ${formatCount(rcu)} RCU/s` };
  }
  const warm = positive(table.warmReadUnits);
  const max = positive(table.maxReadUnits);
  const base = Math.min(warm ?? NEW_ON_DEMAND_RCU, max ?? Infinity);
  const rcu = Math.max(1, (base * share) / workers);
  const from =
    max !== undefined && max <= (warm ?? NEW_ON_DEMAND_RCU)
      ? `its MaxReadRequestUnits of ${formatCount(max)}`
      : warm !== undefined
        ? `its warm read throughput of ${formatCount(warm)} RCU/s`
        : `${formatCount(NEW_ON_DEMAND_RCU)} RCU/s (what a new on-demand table takes at once; DynamoDB reported no warm throughput)`;
  return { rcu, reason: `--rcu auto: on-demand table; ${spec.percent}% of ${from}${perWorker} = ${formatCount(rcu)} RCU/s` };
}
