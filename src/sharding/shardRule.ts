import { LoaderError } from '../shared/errors.js';

/** What joins a partition key and its suffixes ("user-1#2024-01-15#3"); here, not in shard.ts, so that the flags can name it without loading the sharding code (and the SDK it needs). */
export const DEFAULT_SHARD_SEPARATOR = '#';

/**
 * A --shard rule (random:N, hash:N[:attribute], time:hour|day|month[:attribute]): its shape, its text
 * form both ways, and the first number suffix. What the rules do to a key is shard.ts; reading a written
 * value back into its logical key is logicalKey.ts.
 */
export type ShardRule =
  { kind: 'random'; shards: number } | { kind: 'hash'; shards: number; attribute?: string } | { kind: 'time'; unit: TimeUnit; attribute?: string };

export const TIME_UNITS = ['hour', 'day', 'month'] as const;
export type TimeUnit = (typeof TIME_UNITS)[number];

export const MAX_SHARDS = 10_000;

/** The first number suffix: 0 (k#0 … k#N-1) or 1 (k#1 … k#N). */
export type SuffixBase = 0 | 1;

/** A rule with its attribute resolved against the table. */
export type ResolvedShardRule =
  { kind: 'random'; shards: number } | { kind: 'hash'; shards: number; attribute: string } | { kind: 'time'; unit: TimeUnit; attribute: string };

/** Parses one --shard value: random:N, hash:N[:attribute], time:hour|day|month[:attribute]. */
export function parseShardRule(text: string): ShardRule {
  const [kind, arg, attribute, ...rest] = text.split(':');
  const fail = (why: string) =>
    new LoaderError('INVALID_OPTION', `--shard "${text}": ${why}; expected random:N, hash:N[:attribute] or time:hour|day|month[:attribute]`);
  if (rest.length > 0) throw fail('too many parts');
  if (attribute === '') throw fail('the attribute name is empty');
  switch (kind) {
    case 'random':
    case 'hash': {
      const shards = Number(arg);
      if (!Number.isInteger(shards) || shards < 2 || shards > MAX_SHARDS || !/^\d+$/.test(arg ?? '')) {
        throw fail(`N must be an integer from 2 to ${MAX_SHARDS}`);
      }
      if (kind === 'random') {
        if (attribute !== undefined) throw fail('random takes no attribute');
        return { kind, shards };
      }
      return attribute === undefined ? { kind, shards } : { kind, shards, attribute };
    }
    case 'time':
      if (!(TIME_UNITS as readonly string[]).includes(arg ?? '')) throw fail(`the bucket must be one of ${TIME_UNITS.join(', ')}`);
      return attribute === undefined ? { kind, unit: arg as TimeUnit } : { kind, unit: arg as TimeUnit, attribute };
    default:
      throw fail(`unknown scheme "${kind}"`);
  }
}

/** Describes the rules the way they were given, for messages and the manifest: "time:day:createdAt". */
export function formatShardRule(rule: ShardRule): string {
  if (rule.kind === 'random') return `random:${rule.shards}`;
  if (rule.kind === 'hash') return `hash:${rule.shards}${rule.attribute ? `:${rule.attribute}` : ''}`;
  return `time:${rule.unit}${rule.attribute ? `:${rule.attribute}` : ''}`;
}
