import { NEW_ON_DEMAND_WCU, ON_DEMAND_TABLE_QUOTA_WCU, type WcuSpec } from '../pacing/rateChoice.js';
import { formatCount } from '../shared/format.js';
import type { TableInfo } from '../shared/tableInfo.js';

/** One warm write throughput to raise: the table's (no index) or a GSI's. */
export interface WarmRaise {
  /** The GSI; undefined for the table. */
  index: string | undefined;
  /** Write units per second it takes at once now, as DescribeTable reported it (undefined: not reported). */
  from: number | undefined;
  /** What it is raised to. */
  to: number;
}

/** What --prewarm does before the first write: pure, from the table's description and the load's rate. */
export interface PrewarmPlan {
  /** The write units per second the load should find warm: its own target. */
  targetWcu: number;
  /** Only upward: a warm throughput at or above the target is left alone (DynamoDB cannot lower one anyway). */
  raises: WarmRaise[];
  /** Why a part (or all) of the table is left alone. */
  notes: string[];
}

/**
 * The warm write throughput the load wants, by its own rate choice (pacing/rateChoice.ts): a fixed --wcu
 * (or --total-wcu, or each of N workers' --wcu together) is that rate; --wcu auto:P% on an on-demand table
 * starts at P% of the warm throughput and aims at P% of the table's cap (MaxWriteRequestUnits, else the
 * default table quota), so warming the cap makes its start its target. Undefined without a target: there
 * is nothing to warm to.
 */
export function prewarmTargetWcu(
  own: WcuSpec | undefined,
  total: WcuSpec | undefined,
  workers: number,
  table: Pick<TableInfo, 'onDemandMaxWriteUnits'>,
): number | undefined {
  const whole = total ?? (own?.kind === 'fixed' ? { kind: 'fixed' as const, wcu: own.wcu * workers } : own);
  if (whole === undefined) return undefined;
  if (whole.kind === 'fixed') return whole.wcu;
  return table.onDemandMaxWriteUnits ?? ON_DEMAND_TABLE_QUOTA_WCU;
}

/**
 * What to raise, and to what: the table and every GSI whose warm write throughput is below the target
 * (each takes at most the load's whole rate, as the rate counts the units of all of them), each capped
 * at its own MaxWriteRequestUnits, never lowered. A provisioned table is left alone: it takes its
 * provisioned WCU, which warm throughput does not raise. An index that is not ACTIVE cannot be updated.
 */
export function planPrewarm(table: TableInfo, targetWcu: number): PrewarmPlan {
  const target = Math.ceil(targetWcu);
  const plan: PrewarmPlan = { targetWcu: target, raises: [], notes: [] };
  if (!(Number.isFinite(target) && target > 0)) {
    plan.notes.push('no target rate to warm the table to: --prewarm needs --wcu (a rate, or auto) or --total-wcu');
    return plan;
  }
  if (table.billingMode === 'PROVISIONED') {
    plan.notes.push(
      `table "${table.name}" is provisioned: it takes its provisioned ${formatCount(table.provisionedWcu ?? 0)} WCU at once, and raising its warm throughput does not raise that; nothing to pre-warm`,
    );
    return plan;
  }
  const raise = (index: string | undefined, from: number | undefined, cap: number | undefined): void => {
    const to = cap !== undefined && cap > 0 ? Math.min(target, cap) : target;
    // DescribeTable without WarmThroughput: what DynamoDB gives a new on-demand table.
    if ((from ?? NEW_ON_DEMAND_WCU) >= to) return;
    plan.raises.push({ index, from, to });
  };
  raise(undefined, table.warmWriteUnits, table.onDemandMaxWriteUnits);
  for (const gsi of table.gsis) {
    if (gsi.status !== undefined && gsi.status !== 'ACTIVE') {
      plan.notes.push(`GSI "${gsi.name}" is ${gsi.status}: its warm throughput cannot be raised until it is ACTIVE`);
      continue;
    }
    raise(gsi.name, gsi.warmWriteUnits, gsi.onDemandMaxWriteUnits);
  }
  return plan;
}

/** The table as it will be once the plan is done: for the rate choice and the estimate's figures. */
export function prewarmedTable(table: TableInfo, plan: PrewarmPlan): TableInfo {
  const to = (index: string | undefined) => plan.raises.find((r) => r.index === index)?.to;
  const tableTo = to(undefined);
  return {
    ...table,
    ...(tableTo !== undefined ? { warmWriteUnits: tableTo } : {}),
    gsis: table.gsis.map((g) => {
      const gsiTo = to(g.name);
      return gsiTo !== undefined ? { ...g, warmWriteUnits: gsiTo } : g;
    }),
  };
}

/** The UpdateTable request of the plan (WarmThroughput of the table, and of each GSI in GlobalSecondaryIndexUpdates). */
export function warmThroughputUpdate(plan: PrewarmPlan): { table?: number; indexes: Array<{ name: string; writeUnits: number }> } {
  const table = plan.raises.find((r) => r.index === undefined)?.to;
  const indexes = plan.raises.flatMap((r) => (r.index !== undefined ? [{ name: r.index, writeUnits: r.to }] : []));
  return { ...(table !== undefined ? { table } : {}), indexes };
}

/** The AWS CLI command that does what the plan does, for a user who would rather run it themselves. */
export function prewarmCommand(tableName: string, plan: PrewarmPlan): string | undefined {
  const update = warmThroughputUpdate(plan);
  if (update.table === undefined && update.indexes.length === 0) return undefined;
  const parts = [`aws dynamodb update-table --table-name ${shellWord(tableName)}`];
  if (update.table !== undefined) parts.push(`--warm-throughput WriteUnitsPerSecond=${update.table}`);
  if (update.indexes.length > 0) {
    const json = JSON.stringify(update.indexes.map((i) => ({ Update: { IndexName: i.name, WarmThroughput: { WriteUnitsPerSecond: i.writeUnits } } })));
    parts.push(`--global-secondary-index-updates ${shellWord(json)}`);
  }
  return parts.join(' ');
}

/** One line per raise: "table Orders 4,000 → 20,000 WCU/s". */
export function describeRaises(tableName: string, plan: PrewarmPlan): string[] {
  return plan.raises.map(
    (r) =>
      `${r.index === undefined ? `table "${tableName}"` : `GSI "${r.index}"`}: ${r.from === undefined ? `${formatCount(NEW_ON_DEMAND_WCU)} (not reported; a new table's)` : formatCount(r.from)} → ${formatCount(r.to)} write units/s`,
  );
}

function shellWord(text: string): string {
  return /^[\w.:/@=-]+$/.test(text) ? text : `'${text.replace(/'/g, `'\\''`)}'`;
}
