import type { ResolvedShardRule, SuffixBase, TimeUnit } from './shardRule.js';

/**
 * Sharded keys read backwards, pure: which logical key a partition key value is a
 * shard of, and which literal (unsharded) values would land on a sharded key's values.
 *
 * A sharded key is written `<logical><sep><suffix 1>…<sep><suffix n>`, one suffix per rule. Read from the
 * right, that decomposition is unique: a time suffix has a fixed width (`YYYY-MM`, `YYYY-MM-DD`,
 * `YYYY-MM-DDTHH`), and a random or hash suffix is the run of digits at the end, as long as the separator
 * does not end with a digit (resolveShardOptions refuses one that does with those rules: with "1",
 * `k1`+`1`+`0` and `k`+`1`+`10` are both `k110`). So two rows sharded with the same rules land on one
 * partition key value only when their logical keys are equal.
 *
 * What remains is a literal key of the same load that looks like a suffixed one: with `--shard-keys USER`
 * and `--shard hash:4`, a row keyed `USER#3` would be written as it is, on the value where USER's shard 3
 * lives. Whether USER's twin row comes before it, after it, in another segment or in another load, the
 * table could not tell them apart, and `query --key USER` would return it. So such a row is refused by its
 * value alone (literalCollision): stateless, so the order of the rows, stripes and workers cannot matter,
 * and exact, because only values a rule could have produced for a listed key are refused.
 */

/** How suffixes are written: what ResolvedShardOptions and a manifest's ShardPlan both carry. */
export interface SuffixScheme {
  rules: readonly ResolvedShardRule[];
  separator: string;
  suffixBase: SuffixBase;
}

/** A partition key value taken apart: the logical key and its suffixes in rule order. */
export interface ShardedValue {
  logical: string;
  suffixes: string[];
}

/**
 * The logical key and suffixes `value` is written as under `scheme`, or undefined when no rule could have
 * produced it (a suffix out of range or not in the form its rule writes, a separator missing).
 */
export function parseShardedValue(value: string, scheme: SuffixScheme): ShardedValue | undefined {
  let rest = value;
  const suffixes: string[] = [];
  for (let i = scheme.rules.length - 1; i >= 0; i--) {
    const rule = scheme.rules[i]!;
    const suffix = rule.kind === 'time' ? trailingBucket(rest, rule.unit) : trailingNumber(rest, rule.shards, scheme.suffixBase);
    if (suffix === undefined) return undefined;
    const head = rest.length - suffix.length - scheme.separator.length;
    if (head < 0 || !rest.startsWith(scheme.separator, head)) return undefined;
    suffixes.unshift(suffix);
    rest = rest.slice(0, head);
  }
  // An empty partition key is never sharded (applyShard leaves it to the key checks).
  return rest === '' ? undefined : { logical: rest, suffixes };
}

/**
 * The sharded key a literal partition key value would collide with: `value` is not sharded itself (not in
 * `shardedKeys`) but reads as a value one of `shardedKeys` is written under. Undefined when it is safe,
 * and always when every key is sharded (nothing is written literally then).
 */
export function literalCollision(value: string, scheme: SuffixScheme, shardedKeys: ReadonlySet<string> | 'all' | undefined): ShardedValue | undefined {
  if (shardedKeys === undefined || shardedKeys === 'all' || shardedKeys.has(value)) return undefined;
  const parsed = parseShardedValue(value, scheme);
  return parsed && shardedKeys.has(parsed.logical) ? parsed : undefined;
}

/** Whether a separator could make a number suffix read two ways (see above): it ends with a digit. */
export function separatorIsAmbiguous(separator: string, rules: readonly ResolvedShardRule[]): boolean {
  return /\d$/.test(separator) && rules.some((rule) => rule.kind !== 'time');
}

/** The digits at the end of `text`, when they are a suffix random:N or hash:N writes (base..base+N-1, no leading zero). */
function trailingNumber(text: string, shards: number, base: SuffixBase): string | undefined {
  let start = text.length;
  while (start > 0 && isDigit(text.charCodeAt(start - 1))) start--;
  const digits = text.slice(start);
  if (digits === '' || (digits.length > 1 && digits.startsWith('0')) || digits.length > 6) return undefined;
  const n = Number(digits);
  return n >= base && n < base + shards ? digits : undefined;
}

const BUCKET_WIDTH: Record<TimeUnit, number> = { month: 7, day: 10, hour: 13 };

/** The time bucket at the end of `text`, when it is one timeBucket writes (a real date, hour 00-23). */
function trailingBucket(text: string, unit: TimeUnit): string | undefined {
  const width = BUCKET_WIDTH[unit];
  if (text.length < width) return undefined;
  const bucket = text.slice(text.length - width);
  const m = /^(\d{4})-(\d{2})(?:-(\d{2})(?:T(\d{2}))?)?$/.exec(bucket);
  if (!m) return undefined;
  const [, year, month, day = '01', hour = '00'] = m;
  // Built field by field (Date.UTC would take years 0-99 for 1900-1999); a date that rolls over (02-30)
  // or an hour past 23 comes out as another bucket, so it is not one timeBucket writes (the same slice of
  // the ISO text: shard.ts's timeBucket, not imported, so the two modules do not import each other).
  const date = new Date(0);
  date.setUTCFullYear(Number(year), Number(month) - 1, Number(day));
  date.setUTCHours(Number(hour), 0, 0, 0);
  return date.toISOString().slice(0, width) === bucket ? bucket : undefined;
}

function isDigit(code: number): boolean {
  return code >= 48 && code <= 57;
}
