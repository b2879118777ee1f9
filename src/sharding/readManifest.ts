import { LoaderError } from '../shared/errors.js';
import { MAX_SHARDS, parseShardRule, type ResolvedShardRule, type SuffixBase } from './shardRule.js';
import { MANIFEST_VERSION } from './shardManifest.js';

/**
 * A shard manifest as a reader uses it: formats 1 (older versions, without the algorithm or suffix base) and 2, checked field by field, so a
 * file that is not one ddb-spread wrote is refused with its path and the field, never a wrong query.
 */
export interface ShardPlan {
  manifestVersion: 1 | 2;
  table: string;
  partitionKey: string;
  /** The sort key attribute; undefined when a format 1 manifest does not say. */
  sortKey: string | null | undefined;
  separator: string;
  /** Rules in the order applied, each hash and time rule with its attribute. */
  rules: ResolvedShardRule[];
  suffixBase: SuffixBase;
  seed: number;
  /** Format 2: random:N suffixes follow from the seed and the primary key. Format 1 drew them from the input's path and line. */
  randomFromKey: boolean;
  shardedKeys: ReadonlySet<string> | 'all';
  /** The attribute that holds each sharded item's logical key (--keep-original-key), when the load kept it. */
  keepOriginalKey?: string | undefined;
  keys: ReadonlyMap<string, readonly string[]>;
  complete: boolean;
  /** The ddb-spread that wrote it, when recorded. */
  toolVersion: string | undefined;
}

export function parseShardManifest(text: string, path: string): ShardPlan {
  const invalid = (what: string) =>
    new LoaderError('MANIFEST_INVALID', `${path} is not a ddb-spread shard manifest (${what}); pass the manifest the load wrote (--manifest)`, { file: path });
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    throw invalid(`not JSON: ${(error as Error).message}`);
  }
  if (!isRecord(value)) throw invalid('expected a JSON object');
  const version = value['manifestVersion'];
  if (version !== 1 && version !== MANIFEST_VERSION) {
    throw new LoaderError(
      'MANIFEST_INVALID',
      `shard manifest ${path} has format ${JSON.stringify(version ?? null)}; this ddb-spread reads formats 1 and ${MANIFEST_VERSION}: use the ddb-spread that wrote it, or a newer one`,
      { file: path },
    );
  }
  const str = (name: string): string => {
    const v = value[name];
    if (typeof v !== 'string' || v === '') throw invalid(`field ${name} should be a non-empty string`);
    return v;
  };
  const seed = value['seed'];
  if (!Number.isInteger(seed) || (seed as number) < 0 || (seed as number) > 0xffffffff) throw invalid('field seed should be an integer from 0 to 4294967295');
  const ruleTexts = value['rules'];
  if (!Array.isArray(ruleTexts) || ruleTexts.length === 0 || ruleTexts.some((r) => typeof r !== 'string'))
    throw invalid('field rules should be a list of rules');
  const rules = (ruleTexts as string[]).map((text): ResolvedShardRule => {
    let rule;
    try {
      rule = parseShardRule(text);
    } catch (error) {
      throw invalid(`rule "${text}": ${(error as Error).message}`);
    }
    if (rule.kind !== 'random' && rule.attribute === undefined) throw invalid(`rule "${text}" names no attribute`);
    return rule as ResolvedShardRule;
  });
  const base = version === 1 ? 0 : value['suffixBase'];
  if (base !== 0 && base !== 1) throw invalid('field suffixBase should be 0 or 1');
  const sortKey = version === 1 ? undefined : value['sortKey'];
  if (sortKey !== undefined && sortKey !== null && (typeof sortKey !== 'string' || sortKey === '')) throw invalid('field sortKey should be a name or null');
  const keep = value['keepOriginalKey'];
  if (keep !== undefined && keep !== null && (typeof keep !== 'string' || keep === '')) throw invalid('field keepOriginalKey should be a name or null');
  const tool = value['tool'];
  return {
    manifestVersion: version,
    table: str('table'),
    partitionKey: str('partitionKey'),
    sortKey,
    separator: str('separator'),
    rules,
    suffixBase: base,
    seed: seed as number,
    randomFromKey: version === MANIFEST_VERSION,
    shardedKeys: shardedKeysOf(value['shardedKeys'], invalid),
    keepOriginalKey: typeof keep === 'string' ? keep : undefined,
    keys: keysOf(value['keys'], invalid),
    complete: value['complete'] === true,
    toolVersion: isRecord(tool) && typeof tool['version'] === 'string' ? tool['version'] : undefined,
  };
}

function shardedKeysOf(v: unknown, invalid: (what: string) => Error): ReadonlySet<string> | 'all' {
  if (v === 'all') return 'all';
  if (!Array.isArray(v) || v.some((k) => typeof k !== 'string')) throw invalid('field shardedKeys should be "all" or a list of keys');
  return new Set(v as string[]);
}

function keysOf(v: unknown, invalid: (what: string) => Error): ReadonlyMap<string, readonly string[]> {
  if (!isRecord(v)) throw invalid('field keys should be an object');
  const keys = new Map<string, string[]>();
  for (const [original, values] of Object.entries(v)) {
    if (!Array.isArray(values) || values.some((w) => typeof w !== 'string')) throw invalid(`field keys["${original}"] should be a list of key values`);
    keys.set(original, values as string[]);
  }
  return keys;
}

function isRecord(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** More queries than this for one logical key and the reader is told to narrow it (MAX_SHARDS of one rule). */
export const MAX_FANOUT = MAX_SHARDS;
