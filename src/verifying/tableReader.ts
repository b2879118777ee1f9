import { BatchGetItemCommand, ScanCommand, type AttributeValue, type BatchGetItemCommandOutput, type ScanCommandOutput } from '@aws-sdk/client-dynamodb';
import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { setTimeout as sleep } from 'node:timers/promises';
import { errorFacts, fatalAwsError, type AwsContext } from '../aws/awsErrors.js';
import { backoffDelay, classifyFailure } from '../aws/backoff.js';
import { TokenBucket } from '../pacing/tokenBucket.js';
import { LoaderError } from '../shared/errors.js';
import type { KeySchema } from '../shared/types.js';
import { keyIdOf } from '../typing/key.js';
import { keyFromWire } from '../writing/wireItem.js';
import { MAX_KEYS_PER_CALL } from './readUnits.js';

/** One key to read, with the read units it is expected to cost (from the item the input makes). */
export interface KeyToRead {
  keyId: string;
  key: Record<string, AttributeValue>;
  units: number;
}

export interface TableReaderOptions {
  client: DynamoDBDocumentClient;
  table: string;
  keySchema: KeySchema;
  consistentRead: boolean;
  /** Read units per second for the whole verify; undefined: unpaced. */
  rcu: number | undefined;
  /** Read units per second for any one partition key (--key-rcu); undefined: DEFAULT_KEY_RCU. */
  keyRcu?: number | undefined;
  /** Calls in a row that make no progress (throttled, UnprocessedKeys only, failed) before the verify stops. */
  maxAttempts: number;
  aws: AwsContext;
  signal?: AbortSignal | undefined;
  random?: () => number;
  now?: () => number;
}

/** What the reader did, for the summary and the bench. */
export interface ReadCounters {
  calls: number;
  /** Keys asked for by BatchGetItem, each once per read (UnprocessedKeys sent again are not counted again). */
  keys: number;
  retries: number;
  throttled: number;
  consumedRcu: number;
  /** Scan calls (pages, retries included), of `calls`. */
  scanCalls: number;
  /** Items the Scan evaluated (ScannedCount), over its segments. */
  scanned: number;
}

/**
 * Reads items by key with BatchGetItem (only reads: verify never calls a write API), at most 100 keys a
 * call (paced, at most a second of --rcu), paced by a token bucket of read units (--rcu): each call reserves the units its keys are expected
 * to cost before it is sent, and any units DynamoDB reports beyond that are reserved after, so the rate
 * read stays within --rcu. UnprocessedKeys and throttled or failed calls are sent again after a capped,
 * jittered backoff (aws/backoff.ts); --max-attempts calls in a row without progress stop the verify.
 */
/** A partition's read ceiling: 3,000 read units per second. */
export const DEFAULT_KEY_RCU = 3000;
/** Partition keys whose buckets are kept before the full ones (idle for a second) are let go. */
const KEY_BUCKETS_KEPT = 10_000;

export class TableReader {
  readonly counters: ReadCounters = { calls: 0, keys: 0, retries: 0, throttled: 0, consumedRcu: 0, scanCalls: 0, scanned: 0 };
  #bucket: TokenBucket | undefined;
  /** Per partition key (its DynamoDB JSON): what it read lately, at most --key-rcu a second. */
  #keyBuckets = new Map<string, TokenBucket>();
  #keyRcu: number;
  /** Read units per second now: --rcu, or this worker's part of the rate the workers share (sharedReadRate.ts). */
  #rcu: number | undefined;
  #now: () => number;
  #random: () => number;

  constructor(private readonly options: TableReaderOptions) {
    this.#now = options.now ?? (() => performance.now());
    this.#random = options.random ?? Math.random;
    // One second of burst: a verify must not spend a minute of saved-up units at once on a live table.
    this.#rcu = options.rcu;
    this.#bucket = options.rcu === undefined ? undefined : new TokenBucket(options.rcu, 1, this.#now(), 0);
    this.#keyRcu = options.keyRcu ?? DEFAULT_KEY_RCU;
  }

  /** Paces the reads from now on at `rcu` read units per second (a paced reader only); reads already reserved keep their turn. */
  setRate(rcu: number): void {
    if (!this.#bucket) throw new Error('setRate on a TableReader without --rcu');
    this.#rcu = rcu;
    this.#bucket.setRate(this.#now(), rcu);
  }

  /** The stored items of `keys` (at most 100), by key identity; a key without an item is absent from the map. */
  async read(keys: readonly KeyToRead[]): Promise<Map<string, Record<string, AttributeValue>>> {
    if (keys.length > MAX_KEYS_PER_CALL) throw new Error(`BatchGetItem takes at most ${MAX_KEYS_PER_CALL} keys, got ${keys.length}`);
    const found = new Map<string, Record<string, AttributeValue>>();
    this.counters.keys += keys.length;
    for (const group of this.#groups(keys)) await this.#readGroup(group, found);
    return found;
  }

  /**
   * The keys as calls: paced, a call holds at most one second of --rcu (one key at least). A call's units
   * are read at once, so 100 keys at a low --rcu would read many seconds' units in one burst.
   */
  #groups(keys: readonly KeyToRead[]): KeyToRead[][] {
    const rcu = this.#rcu;
    if (rcu === undefined) return [[...keys]];
    const groups: KeyToRead[][] = [];
    let group: KeyToRead[] = [];
    let sum = 0;
    for (const key of keys) {
      if (group.length > 0 && sum + key.units > rcu) {
        groups.push(group);
        group = [];
        sum = 0;
      }
      group.push(key);
      sum += key.units;
    }
    if (group.length > 0) groups.push(group);
    return groups;
  }

  /** One BatchGetItem of `keys`, sent again for its UnprocessedKeys; the items found go to `found`. */
  async #readGroup(keys: readonly KeyToRead[], found: Map<string, Record<string, AttributeValue>>): Promise<void> {
    const units = new Map(keys.map((k) => [k.keyId, k.units]));
    let pending = [...keys];
    let attempt = 0;
    while (pending.length > 0) {
      await this.#paceKeys(pending);
      await this.#pace(pending.reduce((sum, k) => sum + k.units, 0));
      let answer: BatchGetItemCommandOutput;
      try {
        this.counters.calls++;
        answer = await this.options.client.send(
          new BatchGetItemCommand({
            RequestItems: { [this.options.table]: { Keys: pending.map((k) => k.key), ConsistentRead: this.options.consistentRead } },
            ReturnConsumedCapacity: 'TOTAL',
          }),
          this.options.signal ? { abortSignal: this.options.signal } : {},
        );
      } catch (error) {
        if (this.options.signal?.aborted) throw new LoaderError('ABORTED', 'the verify was stopped', { cause: error });
        const facts = errorFacts(error);
        if (classifyFailure(facts) !== 'retry') throw fatalAwsError(error, this.options.aws);
        if (facts.name === 'ProvisionedThroughputExceededException' || facts.name === 'ThrottlingException') this.counters.throttled++;
        attempt = await this.#retryAfter(attempt, `${facts.name ?? facts.code ?? 'an error'}`);
        continue;
      }
      const consumed = (answer.ConsumedCapacity ?? []).reduce((sum, c) => sum + (c.CapacityUnits ?? 0), 0);
      this.counters.consumedRcu += consumed;
      const reserved = pending.reduce((sum, k) => sum + k.units, 0);
      // Units DynamoDB charged beyond those reserved (items larger than the input's) are owed to the bucket.
      if (this.#bucket && consumed > reserved) this.#bucket.reserve(this.#now(), consumed - reserved);
      for (const item of answer.Responses?.[this.options.table] ?? [])
        found.set(keyIdOf(keyFromWire(item, this.options.keySchema), this.options.keySchema), item);
      const unprocessed = answer.UnprocessedKeys?.[this.options.table]?.Keys ?? [];
      if (unprocessed.length === 0) break;
      const before = pending.length;
      pending = unprocessed.map((key) => {
        const keyId = keyIdOf(keyFromWire(key, this.options.keySchema), this.options.keySchema);
        return { keyId, key, units: units.get(keyId) ?? 1 };
      });
      // Progress resets the count of attempts: only calls that read nothing at all add up to --max-attempts.
      attempt = pending.length < before ? 0 : attempt;
      attempt = await this.#retryAfter(attempt, 'UnprocessedKeys');
    }
  }

  /**
   * One segment of a parallel Scan (TotalSegments): each page's items go to `onItem`, keys only (and the
   * attributes of `more`) or whole (`more: 'all'`, the Scan read of verify). A Scan is charged on the items
   * it evaluates, whatever the projection, and a page's units are known only once DynamoDB answers (up to
   * 1 MB read). Paced: with `page`, each page evaluates at most `page.limit` items and reserves the units
   * they are expected to cost before it is sent; without it, with --rcu, each page is cut by Limit to the
   * items this segment's share of a second's units reads (at the units per item seen so far; the first
   * page one item), those units reserved before it is sent. Whatever DynamoDB reports beyond is reserved
   * once it comes back, and the segment ends once the units it read are paid for: the segments together
   * read no more than --rcu, not a 1 MB page each at once.
   */
  async scanSegment(
    segment: number,
    totalSegments: number,
    onItem: (keyId: string, item: Record<string, AttributeValue>) => void,
    /** Attributes read besides the key (the TTL attribute), or 'all': the whole item. */
    more: readonly string[] | 'all' = [],
    page?: { limit: number; units: number },
  ): Promise<void> {
    const { keySchema } = this.options;
    const names = more === 'all' ? [] : [...new Set([keySchema.partitionKey.name, ...(keySchema.sortKey ? [keySchema.sortKey.name] : []), ...more])];
    let start: Record<string, AttributeValue> | undefined;
    let attempt = 0;
    // Units per item evaluated, as the pages so far cost (undefined before the first page).
    let unitsPerItem: number | undefined;
    // Not do-while: a retried page's `continue` must send the page again, not test for a next one (a
    // throttled first page would otherwise end the segment with none of its items read).
    for (;;) {
      const share = this.#rcu === undefined ? undefined : Math.max(1, this.#rcu / totalSegments);
      const limit = page ? page.limit : share === undefined ? undefined : unitsPerItem === undefined ? 1 : Math.max(1, Math.floor(share / unitsPerItem));
      // A first page of one item costs a unit at least (half eventually consistent).
      const reserved = page
        ? page.units
        : limit === undefined
          ? 0
          : unitsPerItem === undefined
            ? this.options.consistentRead
              ? 1
              : 0.5
            : limit * unitsPerItem;
      await this.#pace(reserved);
      let answer: ScanCommandOutput;
      try {
        this.counters.calls++;
        this.counters.scanCalls++;
        answer = await this.options.client.send(
          new ScanCommand({
            TableName: this.options.table,
            Segment: segment,
            TotalSegments: totalSegments,
            ConsistentRead: this.options.consistentRead,
            ...(names.length > 0
              ? {
                  ProjectionExpression: names.map((_, i) => `#k${i}`).join(', '),
                  ExpressionAttributeNames: Object.fromEntries(names.map((name, i) => [`#k${i}`, name])),
                }
              : {}),
            ReturnConsumedCapacity: 'TOTAL',
            ...(limit !== undefined ? { Limit: limit } : {}),
            ...(start ? { ExclusiveStartKey: start } : {}),
          }),
          this.options.signal ? { abortSignal: this.options.signal } : {},
        );
      } catch (error) {
        if (this.options.signal?.aborted) throw new LoaderError('ABORTED', 'the verify was stopped', { cause: error });
        const facts = errorFacts(error);
        if (classifyFailure(facts) !== 'retry') throw fatalAwsError(error, this.options.aws);
        if (facts.name === 'ProvisionedThroughputExceededException' || facts.name === 'ThrottlingException') this.counters.throttled++;
        attempt = await this.#retryAfter(attempt, `${facts.name ?? facts.code ?? 'an error'}`, 'Scan');
        continue;
      }
      attempt = 0;
      const consumed = answer.ConsumedCapacity?.CapacityUnits ?? 0;
      this.counters.consumedRcu += consumed;
      this.counters.scanned += answer.ScannedCount ?? answer.Items?.length ?? 0;
      if (this.#bucket && consumed > reserved) this.#bucket.reserve(this.#now(), consumed - reserved);
      const evaluated = answer.ScannedCount ?? answer.Items?.length ?? 0;
      if (evaluated > 0 && consumed > 0) unitsPerItem = consumed / evaluated;
      for (const item of answer.Items ?? []) onItem(keyIdOf(keyFromWire(item, keySchema), keySchema), item);
      start = answer.LastEvaluatedKey;
      if (start === undefined) break;
    }
    // The last page's units are paid for before the segment ends, as every other page's were.
    await this.#pace(0);
  }

  async #retryAfter(attempt: number, why: string, call = 'BatchGetItem'): Promise<number> {
    const next = attempt + 1;
    if (next >= this.options.maxAttempts)
      throw new LoaderError(
        'RETRIES_EXHAUSTED',
        `${call} on ${this.options.table} made no progress in ${next} calls in a row (last: ${why}); lower --rcu or raise --max-attempts, then run the verify again`,
        { table: this.options.table },
      );
    this.counters.retries++;
    await sleep(backoffDelay(next, this.#random), undefined, this.options.signal ? { signal: this.options.signal } : {}).catch(() => undefined);
    if (this.options.signal?.aborted) throw new LoaderError('ABORTED', 'the verify was stopped');
    return next;
  }

  /**
   * No partition key read faster than --key-rcu: each key's units reserved on its partition key's bucket
   * (one second of burst, starting full), and the call waits for the slowest. A partition serves at most
   * 3,000 read units a second, so a verify of one large item collection would be throttled above it.
   */
  async #paceKeys(keys: readonly KeyToRead[]): Promise<void> {
    const now = this.#now();
    const partition = this.options.keySchema.partitionKey.name;
    const perKey = new Map<string, number>();
    for (const k of keys) {
      const id = JSON.stringify(k.key[partition]);
      perKey.set(id, (perKey.get(id) ?? 0) + k.units);
    }
    if (this.#keyBuckets.size > KEY_BUCKETS_KEPT)
      for (const [id, bucket] of this.#keyBuckets) if (bucket.tokens(now) >= this.#keyRcu) this.#keyBuckets.delete(id);
    let wait = 0;
    for (const [id, units] of perKey) {
      let bucket = this.#keyBuckets.get(id);
      if (!bucket) this.#keyBuckets.set(id, (bucket = new TokenBucket(this.#keyRcu, 1, now)));
      wait = Math.max(wait, bucket.reserve(now, units));
    }
    if (wait > 0) await sleep(wait, undefined, this.options.signal ? { signal: this.options.signal } : {}).catch(() => undefined);
    if (this.options.signal?.aborted) throw new LoaderError('ABORTED', 'the verify was stopped');
  }

  async #pace(units: number): Promise<void> {
    if (!this.#bucket) return;
    const wait = this.#bucket.reserve(this.#now(), units);
    if (wait > 0) await sleep(wait, undefined, this.options.signal ? { signal: this.options.signal } : {}).catch(() => undefined);
    if (this.options.signal?.aborted) throw new LoaderError('ABORTED', 'the verify was stopped');
  }
}
