import { nowCapacity } from '../pacing/rateChoice.js';
import type { TableInfo } from '../shared/tableInfo.js';

export { nowCapacity };

/** The table's capacity during the load: as it is, or for on-demand at least what the target asks. */
export function tableCapacity(info: TableInfo, target: number): number {
  const now = nowCapacity(info);
  if (info.billingMode === 'PROVISIONED') return now;
  return Number.isFinite(target) ? Math.max(now, target) : now;
}
