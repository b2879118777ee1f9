import { growthSchedule, type Growth } from './reachableRate.js';
import { prewarmCommand, type PrewarmPlan, type WarmRaise } from '../load/prewarmPlan.js';
import { UNNAMED_TABLE } from './offlineTable.js';
import type { TableInfo } from '../shared/tableInfo.js';

/** Unasked advice only when it saves at least this much writing: below a second it is noise. */
export const ADVICE_MIN_SAVED_SECONDS = 1;

/** The estimate's word on pre-warming: what --prewarm does (or would do), how long it saves, and its price. */
export interface PrewarmAdvice {
  /** --prewarm was given: the load raises these itself, and the figures above assume it. */
  given: boolean;
  /** The write units per second the load wants warm. */
  targetWcu: number;
  raises: WarmRaise[];
  /** The AWS CLI command that does the same; undefined when nothing is to be raised. */
  command: string | undefined;
  /** Seconds of writing from the table's warm throughput, growing as DynamoDB allows; and from the target at once. */
  secondsWithout: number;
  secondsWith: number;
  savedSeconds: number;
  /** What pre-warming costs, as far as a public price was found. */
  cost: string;
  /** Why a part was left alone (a provisioned table, an index not ACTIVE). */
  notes: string[];
}

/** Pre-warming is billed by AWS; no figure for it was found in a public source ddb-spread could check. */
export const PREWARM_COST =
  'billed by AWS for raising warm throughput above what the table has (reading it is free); no public price was found to apply, so none is given: see https://aws.amazon.com/dynamodb/pricing/on-demand/';

export interface PrewarmAdviceInput {
  table: TableInfo;
  plan: PrewarmPlan;
  /** How the rate grows on the table as it is (without the raise): undefined when the target is taken at once. */
  growth: Growth | undefined;
  /** Write units of the whole load, table and GSIs. */
  totalWcu: number;
  given: boolean;
  /** The table came from the offline flags: without --table its name is a placeholder (YOUR_TABLE in the command). */
  offline?: boolean;
}

/**
 * With --prewarm, always (what it does, or why nothing). Without, only for an on-demand table whose warm
 * throughput holds the load below its target (the rate must grow, doubling every 30 minutes at most): the
 * command to run, or --prewarm, and the writing time it saves (a second at least). Pure.
 */
export function advisePrewarm(input: PrewarmAdviceInput): PrewarmAdvice | undefined {
  const { plan, growth, totalWcu } = input;
  const limited = growth !== undefined && growth.initial < growth.cap && growth.factor > 1;
  if (!input.given && (input.table.billingMode !== 'PAY_PER_REQUEST' || plan.raises.length === 0 || !limited)) return undefined;
  const secondsWithout = growth ? growthSchedule(growth, totalWcu).seconds : totalWcu / Math.max(1e-9, plan.targetWcu);
  // Warm at the target, the load starts there: its cap is the rate it asked for (auto: P% of the cap warmed).
  const secondsWith = growth && plan.raises.length > 0 ? totalWcu / Math.max(1e-9, growth.cap) : secondsWithout;
  const savedSeconds = Math.max(0, secondsWithout - secondsWith);
  if (!input.given && savedSeconds < ADVICE_MIN_SAVED_SECONDS) return undefined;
  const name = input.offline && input.table.name === UNNAMED_TABLE ? 'YOUR_TABLE' : input.table.name;
  return {
    given: input.given,
    targetWcu: plan.targetWcu,
    raises: plan.raises,
    command: prewarmCommand(name, plan),
    secondsWithout,
    secondsWith,
    savedSeconds,
    cost: PREWARM_COST,
    notes: plan.notes,
  };
}
