import { LoaderError } from '../shared/errors.js';
import { hashShard, keyText, parseTime, randomShard, timeBucket } from './shard.js';
import { MAX_FANOUT, type ShardPlan } from './readManifest.js';
import { literalCollision } from './logicalKey.js';

/**
 * The read side of sharding, pure: which partition key values hold a logical key's items (one Query
 * each), and the one value that holds an item whose primary key is known (one GetItem).
 */

/**
 * Every partition key value a logical key's items may be under. Unsharded keys (not in --shard-keys) are
 * themselves. random and hash rules give every suffix (N1 × N2 … values), with the values the manifest
 * lists; a time rule's buckets cannot be enumerated, so they come from the manifest's list.
 */
export function writtenKeysOf(plan: ShardPlan, key: string): string[] {
  if (plan.shardedKeys !== 'all' && !plan.shardedKeys.has(key)) return [key];
  const listed = plan.keys.get(key) ?? [];
  if (plan.rules.some((r) => r.kind === 'time')) {
    if (listed.length === 0 && !plan.complete) {
      throw new LoaderError(
        'MANIFEST_INVALID',
        `the values of key "${key}" are not listed (no manifest, or it stopped listing after its limit), and time buckets cannot be enumerated: pass the load's manifest (--manifest)`,
      );
    }
    return [...listed];
  }
  const fanout = plan.rules.reduce((n, r) => n * (r.kind === 'time' ? 1 : r.shards), 1);
  if (fanout > MAX_FANOUT) {
    throw new LoaderError(
      'MANIFEST_INVALID',
      `key "${key}" is spread over ${fanout} partition key values, more than ${MAX_FANOUT} queries; query them in parts`,
    );
  }
  let values = [key];
  for (const rule of plan.rules) {
    if (rule.kind === 'time') continue;
    const suffixes = Array.from({ length: rule.shards }, (_, i) => String(i + plan.suffixBase));
    values = values.flatMap((v) => suffixes.map((s) => `${v}${plan.separator}${s}`));
  }
  return [...new Set([...values, ...listed])];
}

/**
 * The partition key value an item was written under, from its primary key and, for hash and time rules
 * on other attributes, their values (`values`, typed as in the item). Throws MANIFEST_INVALID naming
 * what is missing: a rule whose attribute is not given, or random:N of a format 1 manifest.
 */
export function shardedKeyOf(plan: ShardPlan, key: string, sort: unknown, values: Readonly<Record<string, unknown>> = {}): string {
  if (plan.shardedKeys !== 'all' && !plan.shardedKeys.has(key)) return key;
  const valueOf = (attribute: string) => (attribute === plan.sortKey ? sort : values[attribute]);
  let written = key;
  for (const rule of plan.rules) {
    let suffix: string;
    if (rule.kind === 'random') {
      if (!plan.randomFromKey) {
        throw new LoaderError(
          'MANIFEST_INVALID',
          `the manifest is format ${plan.manifestVersion} (ddb-spread ${plan.toolVersion ?? 'before 0.2'}): its random:${rule.shards} suffixes came from the input's path and line and cannot be computed; use ddb-spread query, or reload with this version`,
        );
      }
      const sortText = plan.sortKey === null ? undefined : keyText(sort);
      suffix = String(randomShard(plan.seed, key, sortText, rule.shards) + plan.suffixBase);
    } else {
      const value = valueOf(rule.attribute);
      if (value === undefined) {
        throw new LoaderError(
          'INVALID_OPTION',
          `--shard ${rule.kind}:…:${rule.attribute} takes its suffix from "${rule.attribute}", which is not the sort key: give its value (--value ${rule.attribute}=…), or use ddb-spread query`,
          { field: rule.attribute },
        );
      }
      suffix =
        rule.kind === 'hash' ? String(hashShard(hashText(value, rule.attribute), rule.shards) + plan.suffixBase) : bucketOf(value, rule.unit, rule.attribute);
    }
    written += plan.separator + suffix;
  }
  return written;
}

function hashText(value: unknown, attribute: string): string {
  const text = keyText(value);
  if (text === undefined || text === '')
    throw new LoaderError('INVALID_OPTION', `"${attribute}" must be a string, number or binary to compute its hash suffix`, { field: attribute });
  return text;
}

function bucketOf(value: unknown, unit: 'hour' | 'day' | 'month', attribute: string): string {
  const ms = parseTime(value);
  if (ms === undefined) {
    throw new LoaderError('INVALID_OPTION', `"${attribute}" is not a readable time (ISO 8601 such as 2024-01-15T13:45:00Z, or epoch seconds or milliseconds)`, {
      field: attribute,
    });
  }
  return timeBucket(ms, unit);
}

/**
 * Which items read under a logical key's values are that key's: a reader must never
 * return an item of another logical key. A sharded key's values hold only its own items, as far as the
 * load can see to it: a load refuses a literal key that reads as a sharded key's value
 * (SHARD_KEY_COLLISION), and sharded keys are written apart (logicalKey.ts). With --keep-original-key the
 * item also says whose it is (the load sets it on every sharded item, and refuses a row that holds another
 * value there), so an item under those values that does not name the key is skipped: this holds for a
 * table other writers filled too. An unsharded key that reads as a sharded key's value holds that key's
 * items: with --keep-original-key they are skipped (they name it); without, the key is refused.
 */
export function ownerCheck(plan: ShardPlan, key: string): (item: Readonly<Record<string, unknown>>) => boolean {
  const keep = plan.keepOriginalKey;
  const sharded = plan.shardedKeys === 'all' || plan.shardedKeys.has(key);
  if (sharded) return keep === undefined ? () => true : (item) => item[keep] === key;
  const twin = literalCollision(key, plan, plan.shardedKeys);
  // A key no sharded key is written under: its items are its own, whatever attributes they carry.
  if (!twin) return () => true;
  if (keep !== undefined) return (item) => item[keep] !== twin.logical;
  throw new LoaderError(
    'INVALID_OPTION',
    `"${key}" is the partition key value sharded key "${twin.logical}" is written under (suffix ${twin.suffixes.map((s) => `"${s}"`).join(', ')}): the items under it are "${twin.logical}"'s, since a load refuses such a key unsharded (SHARD_KEY_COLLISION); read --key ${twin.logical}, or, for items another tool wrote there, query the table directly`,
  );
}
