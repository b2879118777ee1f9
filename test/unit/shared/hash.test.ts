import { describe, expect, it } from 'vitest';
import { fnv1a32, hash32 } from '../../../src/shared/hash.js';
import { hashShard, randomShard } from '../../../src/sharding/shard.js';
import { DistinctCounter } from '../../../src/estimating/distinctCount.js';

// These values are persisted (shard suffixes in tables and shard manifests, --segment, checkpoints) or shape
// reported figures: they were taken from the code before the hashes were gathered into one module, and must
// never change.
const TEXTS = ['', 'a', 'Sa', 'Scust-1', 'N42', 'é🙂x', 'a much longer partition key value 0123456789'];

describe('stable hashes', () => {
  it('hash32 (FNV-1a + murmur3 finaliser) keeps its values', () => {
    expect(TEXTS.map(hash32)).toEqual([2872998923, 444641715, 1487505336, 2584060596, 2504392617, 2778348900, 824256969]);
  });

  it('FNV-1a (the order buckets of --order) keeps its values', () => {
    expect(TEXTS.map((t) => fnv1a32(t) % 4096)).toEqual([3525, 2348, 633, 107, 2615, 505, 417]);
    expect(TEXTS.map((t) => fnv1a32(t) % 2 ** 31)).toEqual([18652613, 1678518572, 939676281, 1862963307, 1352505911, 704295417, 16413089]);
  });

  it('random:N shards keep their values (md5 of the seed and the primary key)', () => {
    expect(
      [
        [0, 'user-1', 'e1'],
        [12345, 'data/events.jsonl', '123456'],
        [4294967295, 'é', undefined],
      ].map(([seed, pk, sk]) => randomShard(seed as number, pk as string, sk as string | undefined, 1000)),
      // Python: int(hashlib.md5(f"{seed}\0{pk}\0{sk}".encode()).hexdigest(), 16) % 1000 (no \0{sk} without a sort key)
    ).toEqual([587, 210, 563]);
  });

  it('hash:N shards keep their values (md5)', () => {
    expect(TEXTS.map((t) => hashShard(t, 10))).toEqual([6, 7, 4, 5, 6, 2, 7]);
  });

  it('the distinct count over murmur3 lanes keeps its estimates', () => {
    for (const [n, estimate] of [
      [5000, 4978],
      [20000, 20063],
      [100000, 99726],
    ] as const) {
      const counter = new DistinctCounter();
      for (let i = 0; i < n; i++) counter.add(`cust-${i}`);
      counter.add('é🙂');
      counter.add('odd');
      expect(counter.estimate).toBe(estimate);
    }
  });
});
