import type { SampleStatement } from './sampling.js';

/** How one key of the input stands in the table. */
export type Outcome =
  /** Stored as the input leaves it. */
  | 'matched'
  /** Its last row was a delete (or every row of it was refused by the load), and the table has no item: as expected. */
  | 'absent'
  /** The input leaves an item; the table has none. */
  | 'missing'
  /** The table's item differs from the one the input leaves, in the attributes named. */
  | 'different'
  /** The input's last word on the key is a delete; the table still has an item. */
  | 'deletedButPresent'
  /** Every row of the key is in the load's reject file, yet the table has an item. */
  | 'rejectedButPresent'
  /** --scan: an item of the table whose key the input never writes. */
  | 'extra'
  /**
   * --skip-expired A: the table has no item, and the input's item has a TTL (A) that has passed since the load:
   * DynamoDB's TTL may have deleted it, so absent is as fine as present (present, it is compared as any item).
   */
  | 'expired'
  /**
   * The key's last row tried in the load is in its --condition-failures file: its condition was false, and
   * the table kept the item it had (another writer's, or an earlier row's), which the input cannot tell.
   * Not compared, and not read.
   */
  | 'conditionKept';

/** The outcomes of the input's keys (extra items are the table's, counted apart). */
export const OUTCOMES: readonly Outcome[] = [
  'matched',
  'absent',
  'missing',
  'different',
  'deletedButPresent',
  'rejectedButPresent',
  'expired',
  'conditionKept',
];

/** The outcomes that are a difference: any one makes the verify exit non-zero. */
export const DIFFERENCES: readonly Outcome[] = ['missing', 'different', 'deletedButPresent', 'rejectedButPresent', 'extra'];

export interface VerifyResult {
  table: string;
  input: string;
  /** Keys checked, by outcome (extra: items --scan found that the input does not explain; 0 without --scan). */
  outcomes: Record<Outcome, number>;
  /** The Scan read (--scan): the table's items scanned, in how many segments; undefined when the keys were read by BatchGetItem. */
  /** expired: items no row writes whose TTL (--skip-expired) has passed: DynamoDB's TTL deletes them, so not extra. */
  scan: { segments: number; items: number; expired?: number } | undefined;
  /**
   * How the table was read: BatchGetItem of the input's keys, or a Scan of the whole table (segments), and
   * why (--scan N, or what --scan auto priced); rescanned: a resumed verify scanned the whole table again.
   */
  tableRead: { read: 'batch-get' | 'scan'; segments: number; why: string; rescanned?: boolean };
  /** Keys of the input checked (the sum of outcomes but extra). */
  checked: number;
  /** Keys that differ (missing, different, deleted but present, rejected but present, extra). */
  differing: number;
  /**
   * The input's planned writes, each accounted for once: checked (the key's last write), superseded (a
   * later write of its key decides), or outside the sample.
   */
  writes: { planned: number; checked: number; superseded: number; notSampled: number };
  /** Rows the dry run read, and those it rejected as the load would (never written, never checked). */
  rows: { read: number; rejected: number; otherSegment: number };
  /** Rows named in the load's reject file (rows DynamoDB refused are expected absent), and the file. */
  loadRejects: { path: string; rows: number } | undefined;
  /** Distinct keys of the input (held in memory during the verify). */
  keys: number;
  /** --sample: the share asked for and what the sample proves. */
  sample: ({ share: number } & SampleStatement) | undefined;
  /** This run's reads (a resumed verify's earlier runs' are in checkpoint.readsTotal). */
  reads: {
    calls: number;
    keys: number;
    retries: number;
    throttled: number;
    consumedRcu: number;
    /** Scan calls, of `calls` (the rest are BatchGetItem's). */
    scanCalls: number;
    /** Items the Scan read evaluated (0 when the keys were read by BatchGetItem). */
    scanned: number;
    consistentRead: boolean;
    /** The read units per second paced at (--rcu, or what --rcu auto chose); undefined: unpaced. */
    rcu: number | undefined;
    /** The read units per second any one partition key was held to (--key-rcu). */
    keyRcu?: number;
    /** How --rcu's rate was chosen (auto: from which capacity). */
    rcuReason?: string;
  };
  /**
   * --checkpoint: the verify's own checkpoint; the planned writes an earlier run had settled (0: this run
   * started it), the keys of them it had checked, and the reads of every run so far.
   */
  checkpoint?: { path: string; resumedFrom: number; checkedBefore: number; readsTotal: { calls: number; keys: number; consumedRcu: number } };
  /** The differences file (the reject file's format), when any key differs. */
  differencesPath: string | undefined;
  /** The first differences, for the summary (at most 20). */
  examples: Difference[];
  elapsedMs: number;
  itemsPerSecond: number;
}

/** One key not as the input leaves it. */
export interface Difference {
  outcome: Outcome;
  file: string;
  line: number;
  key: Record<string, string> | undefined;
  /** The attributes that differ (different only). */
  attributes?: string[];
  /** Expected and stored values of those attributes, as DynamoDB JSON text (absent under --no-excerpts). */
  values?: Record<string, { expected: unknown; stored: unknown }>;
}
