import { NEW_ON_DEMAND_WCU } from '../pacing/rateChoice.js';
import type { TableInfo } from '../shared/tableInfo.js';

/** What the table takes now: provisioned WCU, or an on-demand table's warm throughput (4,000 when new). */
export function nowCapacity(info: TableInfo): number {
  if (info.billingMode === 'PROVISIONED' && info.provisionedWcu) return info.provisionedWcu;
  return info.warmWriteUnits ?? NEW_ON_DEMAND_WCU;
}

/** The table's capacity during the load: as it is, or for on-demand at least what the target asks. */
export function tableCapacity(info: TableInfo, target: number): number {
  const now = nowCapacity(info);
  if (info.billingMode === 'PROVISIONED') return now;
  return Number.isFinite(target) ? Math.max(now, target) : now;
}
