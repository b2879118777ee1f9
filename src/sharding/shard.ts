import { NumberValue } from '@aws-sdk/lib-dynamodb';
import { createHash } from 'node:crypto';
import { LoaderError, RowError } from '../shared/errors.js';
import { ownValue, setOwn } from '../shared/ownRecord.js';
import type { Item, KeySchema } from '../shared/types.js';
import { timeLikeAttributes, timeLikeHint } from './timeColumns.js';
import { literalCollision, separatorIsAmbiguous } from './logicalKey.js';
import { DEFAULT_SHARD_SEPARATOR, formatShardRule, type ResolvedShardRule, type ShardRule, type SuffixBase, type TimeUnit } from './shardRule.js';

/**
 * Write sharding: the partition key value gets suffixes so one hot key's writes spread over several
 * partition keys. Rules (shardRule.ts) apply in the order given: time:day then hash:4 gives
 * "user-1#2024-01-15#3".
 */

export { DEFAULT_SHARD_SEPARATOR };

export interface ShardOptions {
  rules: readonly ShardRule[];
  /** @default "#" */
  separator?: string;
  /** Shard only these partition key values (the hot keys); every key when undefined. */
  keys?: ReadonlySet<string>;
  /** Store the unsharded partition key value in this attribute (for a GSI that unifies reads). */
  keepOriginalKey?: string;
  /** Seed of `random:N`: the same seed and primary key give the same suffix (for reloads, resume and readers). */
  seed: number;
  /** The first suffix of `random:N` and `hash:N`: 0 gives .0 … .N-1, 1 gives .1 … .N (as AWS's "Randomizing Across Multiple Partition Key Values"). @default 0 */
  suffixBase?: SuffixBase;
}

export interface ResolvedShardOptions {
  rules: ResolvedShardRule[];
  separator: string;
  keys: ReadonlySet<string> | undefined;
  keepOriginalKey: string | undefined;
  seed: number;
  suffixBase: SuffixBase;
  /** The partition key attribute being suffixed. */
  partitionKey: string;
  /** The sort key attribute, whose value (with the partition key's) decides a random:N suffix. */
  sortKey: string | undefined;
}

/** Checks sharding against the table before any row is read; hash and time default to the sort key. */
export function resolveShardOptions(options: ShardOptions, schema: KeySchema, table: string): ResolvedShardOptions {
  const pk = schema.partitionKey;
  if (options.rules.length === 0) throw new LoaderError('INVALID_OPTION', 'sharding needs at least one --shard rule');
  if (pk.type !== 'S') {
    throw new LoaderError(
      'INVALID_OPTION',
      `--shard needs a string partition key, but "${pk.name}" of table "${table}" is ${pk.type === 'N' ? 'a number' : 'binary'}; a suffix like "#3" cannot be added to it`,
      { table, field: pk.name },
    );
  }
  const separator = options.separator ?? DEFAULT_SHARD_SEPARATOR;
  if (typeof separator !== 'string' || separator.length === 0) throw new LoaderError('INVALID_OPTION', '--shard-separator must be a non-empty string');
  const rules = options.rules.map((rule): ResolvedShardRule => {
    if (rule.kind === 'random') return rule;
    const attribute = rule.attribute ?? schema.sortKey?.name;
    if (attribute === undefined) {
      throw new LoaderError(
        'INVALID_OPTION',
        `--shard ${rule.kind}:… needs an attribute (table "${table}" has no sort key to default to), e.g. --shard ${rule.kind === 'hash' ? `hash:${rule.shards}:orderId` : `time:${rule.unit}:createdAt`}`,
        { table },
      );
    }
    if (attribute === pk.name) {
      throw new LoaderError(
        'INVALID_OPTION',
        `--shard ${rule.kind}: cannot take its value from the partition key "${pk.name}" itself; name another attribute`,
        { table, field: attribute },
      );
    }
    return { ...rule, attribute };
  });
  if (separatorIsAmbiguous(separator, rules)) {
    // logicalKey.ts: a number suffix is the run of digits at the end, which a separator ending in a digit
    // would lengthen; two logical keys could then be written as one value.
    throw new LoaderError(
      'INVALID_OPTION',
      `--shard-separator "${separator}" ends with a digit, so a number suffix could be read two ways ("k1" + "${separator}" + "0" and "k" + "${separator}" + "10" would both be written); choose a separator that does not end with a digit, such as "#"`,
    );
  }
  const keep = options.keepOriginalKey;
  if (keep !== undefined && (keep === '' || keep === pk.name || keep === schema.sortKey?.name)) {
    throw new LoaderError('INVALID_OPTION', `--keep-original-key must name a new attribute, not "${keep}" (a key attribute of table "${table}")`, {
      table,
      field: keep,
    });
  }
  if (!Number.isInteger(options.seed) || options.seed < 0 || options.seed > 0xffffffff) {
    throw new LoaderError('INVALID_OPTION', `--shard-seed must be an integer from 0 to ${0xffffffff}, got ${options.seed}`);
  }
  const suffixBase = options.suffixBase ?? 0;
  if (suffixBase !== 0 && suffixBase !== 1) throw new LoaderError('INVALID_OPTION', `--shard-base must be 0 or 1, got ${String(suffixBase)}`);
  return { rules, separator, keys: options.keys, keepOriginalKey: keep, seed: options.seed, suffixBase, partitionKey: pk.name, sortKey: schema.sortKey?.name };
}

/**
 * The suffix of `hash:N` for an attribute value: int(md5(value), 16) mod N, exactly the common Python recipe
 * `int(hashlib.md5(event_id.encode()).hexdigest(), 16) % 10`, so a reader in any language can compute it.
 * Numbers hash as their canonical text (DynamoDB's), binary as its base64 text.
 */
export function hashShard(value: string, shards: number): number {
  const hex = createHash('md5').update(value, 'utf8').digest('hex');
  return Number(BigInt(`0x${hex}`) % BigInt(shards));
}

/**
 * The suffix of `random:N` for an item: uniform over 0..N-1, and a function of the seed and the item's
 * primary key only, so a reload (from any path) overwrites, a repeated key lands once (the later row
 * winning), and a reader who knows the key computes it: int(md5(seed NUL pk [NUL sk]), 16) mod N over the
 * UTF-8 bytes, the seed as decimal text, the sort key as keyText gives it (no NUL sk without a sort key).
 * In Python: int(hashlib.md5(f"{seed}\0{pk}\0{sk}".encode()).hexdigest(), 16) % N.
 */
export function randomShard(seed: number, partitionKey: string, sortKey: string | undefined, shards: number): number {
  const text = sortKey === undefined ? `${seed}\0${partitionKey}` : `${seed}\0${partitionKey}\0${sortKey}`;
  return hashShard(text, shards);
}

/**
 * A key or attribute value as the suffix functions hash it: a string as it is, a number as its canonical
 * DynamoDB text (1.50 -> 1.5, 1e3 -> 1000), binary as base64 with padding. Undefined for other types.
 */
export function keyText(value: unknown): string | undefined {
  if (typeof value === 'string') return value;
  if (value instanceof NumberValue) return value.value;
  if (value instanceof Uint8Array) return Buffer.from(value).toString('base64');
  return undefined;
}

const ISO_8601 = /^(\d{4})-(\d{2})-(\d{2})(?:[T ](\d{2})(?::(\d{2})(?::(\d{2})(?:[.,](\d+))?)?)?)?(Z|[+-]\d{2}:?\d{2})?$/;

/**
 * A time value -> milliseconds since the epoch. ISO 8601 text (a date, or a date and time; without an
 * offset it is taken as UTC, so the bucket does not depend on the machine's zone), or epoch numbers:
 * seconds when below 10^11 (before the year 5138), milliseconds otherwise. Undefined when unreadable.
 */
export function parseTime(value: unknown): number | undefined {
  if (value instanceof NumberValue || typeof value === 'number') {
    const n = Number(value instanceof NumberValue ? value.value : value);
    if (!Number.isFinite(n)) return undefined;
    const ms = Math.abs(n) < 1e11 ? n * 1000 : n;
    return inBucketRange(ms) ? ms : undefined;
  }
  if (typeof value !== 'string') return undefined;
  const text = value.trim();
  if (/^-?\d+(\.\d+)?$/.test(text)) return parseTime(Number(text));
  const m = ISO_8601.exec(text);
  if (!m) return undefined;
  const [, y, mo, d, h = '00', mi = '00', s = '00', frac = '', zone = 'Z'] = m;
  const offset = zone === 'Z' ? 'Z' : zone.includes(':') ? zone : `${zone.slice(0, 3)}:${zone.slice(3)}`;
  // Date.parse would roll 2024-02-30 over to March 1st; a calendar date that does not exist is unreadable.
  if (!isCalendarDate(Number(y), Number(mo), Number(d)) || Number(h) > 23 || Number(mi) > 59 || Number(s) > 59) return undefined;
  const ms = Date.parse(`${y}-${mo}-${d}T${h}:${mi}:${s}.${(frac + '000').slice(0, 3)}${offset}`);
  return Number.isNaN(ms) || !inBucketRange(ms) ? undefined : ms;
}

/** Years 0000 to 9999: the buckets are fixed-width text (2024-01-15), as ISO 8601 writes them. */
const MIN_BUCKET_MS = Date.parse('0000-01-01T00:00:00.000Z');
const MAX_BUCKET_MS = Date.UTC(9999, 11, 31, 23, 59, 59, 999);

function isCalendarDate(year: number, month: number, day: number): boolean {
  const date = new Date(0);
  date.setUTCFullYear(year, month - 1, day);
  return date.getUTCFullYear() === year && date.getUTCMonth() === month - 1 && date.getUTCDate() === day;
}

function inBucketRange(ms: number): boolean {
  return ms >= MIN_BUCKET_MS && ms <= MAX_BUCKET_MS;
}

/** The UTC bucket of a time: 2024-01-15T13 (hour), 2024-01-15 (day) or 2024-01 (month). */
export function timeBucket(ms: number, unit: TimeUnit): string {
  const iso = new Date(ms).toISOString();
  return unit === 'hour' ? iso.slice(0, 13) : unit === 'day' ? iso.slice(0, 10) : iso.slice(0, 7);
}

export interface ShardedKey {
  /** The partition key value before the suffix. */
  original: string;
  /** The partition key value written. */
  written: string;
}

/**
 * Applies the shard rules to one item, in place: suffixes the partition key and, when asked, keeps the
 * original value in another attribute. Returns undefined when the key is not one of `keys`. Throws
 * RowError(SHARD_ATTRIBUTE) when a rule's attribute is missing or unreadable: a row that cannot be
 * sharded as asked is rejected, never written unsharded. Throws RowError(SHARD_KEY_COLLISION) for a key
 * left unsharded that reads as one a sharded key is written under (logicalKey.ts says why by its value).
 */
export function applyShard(item: Item, options: ResolvedShardOptions): ShardedKey | undefined {
  const original = ownValue(item, options.partitionKey);
  // Key presence and type are checked after sharding (keyIdsOf), with the usual messages.
  if (typeof original !== 'string' || original === '') return undefined;
  if (options.keys && !options.keys.has(original)) {
    const twin = literalCollision(original, options, options.keys);
    if (twin) throw collision(original, twin.logical, twin.suffixes, options);
    return undefined;
  }
  let written = original;
  for (const rule of options.rules) written += options.separator + suffixOf(item, original, rule, options);
  if (options.keepOriginalKey !== undefined) {
    const existing = ownValue(item, options.keepOriginalKey);
    if (existing !== undefined && existing !== original) {
      throw new RowError(
        'SHARD_ATTRIBUTE',
        `--keep-original-key attribute "${options.keepOriginalKey}" already holds another value in this row; choose an attribute the input does not use`,
        options.keepOriginalKey,
      );
    }
    setOwn(item, options.keepOriginalKey, original);
  }
  setOwn(item, options.partitionKey, written);
  return { original, written };
}

function collision(value: string, logical: string, suffixes: readonly string[], options: ResolvedShardOptions): RowError {
  const rules = options.rules.map(formatShardRule).join(' --shard ');
  const other = ['|', '~', '#'].find((sep) => sep !== options.separator && !value.includes(sep)) ?? '|';
  return new RowError(
    'SHARD_KEY_COLLISION',
    `partition key "${value}" is not in --shard-keys, but it is the value --shard-keys key "${logical}" is written under with suffix${suffixes.length > 1 ? 'es' : ''} ${suffixes.map((s) => `"${s}"`).join(', ')} (--shard ${rules}, separator "${options.separator}"): it would overwrite "${logical}"'s items or be read back as one of them, so it is not written; load with a --shard-separator no partition key contains (such as "${other}"), or add "${value}" to --shard-keys`,
    options.partitionKey,
  );
}

function suffixOf(item: Item, original: string, rule: ResolvedShardRule, options: ResolvedShardOptions): string {
  switch (rule.kind) {
    case 'random': {
      // A row without its sort key is rejected by the key checks after sharding; its suffix never lands.
      const sortKey = options.sortKey === undefined ? undefined : keyText(ownValue(item, options.sortKey));
      return String(randomShard(options.seed, original, sortKey, rule.shards) + options.suffixBase);
    }
    case 'hash': {
      const value = ownValue(item, rule.attribute);
      const text = keyText(value);
      if (text === undefined || text === '') {
        throw new RowError(
          'SHARD_ATTRIBUTE',
          `--shard hash:${rule.shards}:${rule.attribute} needs attribute "${rule.attribute}" as a string, number or binary, but the row ${value === undefined || text === '' ? 'has none' : 'has another type'}`,
          rule.attribute,
        );
      }
      return String(hashShard(text, rule.shards) + options.suffixBase);
    }
    case 'time': {
      const value = ownValue(item, rule.attribute);
      const ms = parseTime(value);
      if (ms === undefined) {
        throw new RowError(
          'SHARD_ATTRIBUTE',
          value === undefined
            ? `--shard time:${rule.unit}:${rule.attribute} needs attribute "${rule.attribute}", but the row has none`
            : `--shard time:${rule.unit}:${rule.attribute}: "${rule.attribute}" is not a readable time (ISO 8601 such as 2024-01-15T13:45:00Z, or epoch seconds or milliseconds); ${timeLikeHint(timeLikeAttributes(item, rule.attribute, parseTime), rule.unit)}`,
          rule.attribute,
        );
      }
      return timeBucket(ms, rule.unit);
    }
  }
}
