import { formatShardRule, type ResolvedShardOptions } from './shard.js';

/** More partition key values than this and the manifest stops listing them (memory stays bounded). */
export const MAX_MANIFEST_VALUES = 1_000_000;

/** The shard manifest file: what a reader needs to find every item of a sharded key. */
export interface ShardManifestJson {
  manifestVersion: 1;
  table: string;
  partitionKey: string;
  separator: string;
  /** The rules in the order applied, as given: "time:day:createdAt", "hash:4:orderId", "random:8". */
  rules: string[];
  /** N of every random/hash rule, in rule order (null for time rules). */
  shardCounts: (number | null)[];
  /** Seed of random:N, so the same input sharded again gives the same suffixes. */
  seed: number;
  /** The attribute holding the unsharded key value, if any (a GSI on it serves unified reads). */
  keepOriginalKey: string | null;
  /** The keys --shard-keys named, or "all" when every key was sharded. */
  shardedKeys: string[] | 'all';
  /** For each sharded key: every partition key value written, sorted. */
  keys: Record<string, string[]>;
  /** False when there were more than MAX_MANIFEST_VALUES values and `keys` lists only the first ones. */
  complete: boolean;
  valuesWritten: number;
}

/** Collects the partition key values written for each sharded key, for the manifest. */
export class ShardManifest {
  readonly #keys = new Map<string, Set<string>>();
  #values = 0;
  #complete = true;

  constructor(
    readonly table: string,
    readonly options: ResolvedShardOptions,
  ) {}

  add(original: string, written: string): void {
    let values = this.#keys.get(original);
    if (values?.has(written)) return;
    if (this.#values >= MAX_MANIFEST_VALUES) {
      this.#complete = false;
      return;
    }
    if (!values) {
      values = new Set();
      this.#keys.set(original, values);
    }
    values.add(written);
    this.#values++;
  }

  /** Sharded keys seen so far. */
  get keyCount(): number {
    return this.#keys.size;
  }

  get valuesWritten(): number {
    return this.#values;
  }

  toJSON(): ShardManifestJson {
    const keys: Record<string, string[]> = {};
    for (const original of [...this.#keys.keys()].sort()) {
      Object.defineProperty(keys, original, { value: [...this.#keys.get(original)!].sort(naturalOrder), enumerable: true, writable: true, configurable: true });
    }
    const { rules, separator, seed, keepOriginalKey, partitionKey } = this.options;
    return {
      manifestVersion: 1,
      table: this.table,
      partitionKey,
      separator,
      rules: rules.map(formatShardRule),
      shardCounts: rules.map((r) => (r.kind === 'time' ? null : r.shards)),
      seed,
      keepOriginalKey: keepOriginalKey ?? null,
      shardedKeys: this.options.keys ? [...this.options.keys].sort() : 'all',
      keys,
      complete: this.#complete,
      valuesWritten: this.#values,
    };
  }
}

const collator = new Intl.Collator('en', { numeric: true });
/** "k#2" before "k#10". */
function naturalOrder(a: string, b: string): number {
  return collator.compare(a, b) || (a < b ? -1 : a > b ? 1 : 0);
}
