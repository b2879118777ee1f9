import { type ResolvedShardOptions } from './shard.js';
import { formatShardRule, type SuffixBase } from './shardRule.js';

/** More partition key values than this and the manifest stops listing them (memory stays bounded). */
export const MAX_MANIFEST_VALUES = 1_000_000;

/** The manifest format this version writes; readShardManifest also reads format 1. */
export const MANIFEST_VERSION = 2;

/**
 * How suffixes are computed, as recorded in the manifest. Version 2: random:N from the seed and the
 * primary key; version 1 (manifest format 1): random:N from the input's path and line, which no reader
 * can compute again (query still finds every item; get cannot).
 */
export const SHARD_ALGORITHM = { name: 'ddb-spread-shard', version: 2 } as const;

/** The formulas, in words a reader in another language can follow (docs/SHARDING.md, "Reading sharded keys back"). */
export const ALGORITHM_TEXT = {
  random: 'int(md5(utf8(seed + "\\0" + pk + "\\0" + sk)).hex, 16) % N + suffixBase; seed in decimal; without a sort key: seed + "\\0" + pk',
  hash: 'int(md5(utf8(value)).hex, 16) % N + suffixBase',
  time: 'UTC bucket of the attribute: YYYY-MM-DDTHH (hour), YYYY-MM-DD (day), YYYY-MM (month); ISO 8601 without an offset is UTC; epoch numbers below 1e11 are seconds, otherwise milliseconds',
} as const;

/** How a value becomes the text that is hashed. */
export const VALUE_TEXT = {
  string: 'as is, UTF-8',
  number: "DynamoDB's canonical text: no sign for positives, no leading or trailing zeros, plain notation (1.50 -> 1.5, 1e3 -> 1000)",
  binary: 'base64 with padding (RFC 4648)',
} as const;

/** The shard manifest file: what a reader needs to find every item of a sharded key, and to compute a suffix. */
export interface ShardManifestJson {
  manifestVersion: typeof MANIFEST_VERSION;
  /** The ddb-spread that wrote it. */
  tool: { name: 'ddb-spread'; version: string };
  algorithm: typeof SHARD_ALGORITHM & { formulas: typeof ALGORITHM_TEXT };
  valueText: typeof VALUE_TEXT;
  table: string;
  partitionKey: string;
  /** The sort key attribute (part of the random:N input), null for a table without one. */
  sortKey: string | null;
  separator: string;
  /** The rules in the order applied, with their attributes: "time:day:createdAt", "hash:4:orderId", "random:8". */
  rules: string[];
  /** N of every random/hash rule, in rule order (null for time rules). */
  shardCounts: (number | null)[];
  /** The first number suffix: 0 (k#0 … k#N-1) or 1 (k#1 … k#N). */
  suffixBase: SuffixBase;
  /** Seed of random:N, so the same rows sharded again (or read back) give the same suffixes. */
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
    /** The ddb-spread writing it (package.json's version). */
    readonly toolVersion: string,
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

  /**
   * Goes on from the manifest an earlier run of this load saved (a resume at a restart point does not read
   * the rows before it again, so their keys come from there).
   */
  restore(saved: { keys: ReadonlyMap<string, readonly string[]>; complete: boolean }): void {
    for (const [original, written] of saved.keys) for (const value of written) this.add(original, value);
    if (!saved.complete) this.#complete = false;
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
    const { rules, separator, seed, keepOriginalKey, partitionKey, sortKey, suffixBase } = this.options;
    return {
      manifestVersion: MANIFEST_VERSION,
      tool: { name: 'ddb-spread', version: this.toolVersion },
      algorithm: { ...SHARD_ALGORITHM, formulas: ALGORITHM_TEXT },
      valueText: VALUE_TEXT,
      table: this.table,
      partitionKey,
      sortKey: sortKey ?? null,
      separator,
      rules: rules.map(formatShardRule),
      shardCounts: rules.map((r) => (r.kind === 'time' ? null : r.shards)),
      suffixBase,
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
