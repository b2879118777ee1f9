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

  it('random:N shards keep their values', () => {
    const origins = [
      { file: 'a.csv', line: 1 },
      { file: 'data/events.jsonl', line: 123456 },
      { file: '', line: 70000 },
      { file: 'é.csv', line: 2 },
    ].map((o) => ({ ...o, raw: '' }));
    const pinned: Record<number, [number[], number[]]> = {
      0: [
        [213, 36, 449, 611],
        [2066414565, 1719045388, 378337449, 954058611],
      ],
      1: [
        [696, 725, 83, 173],
        [1825229048, 1858535725, 195338083, 1797371173],
      ],
      12345: [
        [352, 314, 714, 632],
        [1905097352, 840905666, 30430714, 1735031984],
      ],
      4294967295: [
        [157, 678, 215, 474],
        [927587509, 736064678, 780025567, 612637474],
      ],
    };
    for (const [seed, [small, large]] of Object.entries(pinned)) {
      expect(origins.map((o) => randomShard(Number(seed), o, 1000))).toEqual(small);
      expect(origins.map((o) => randomShard(Number(seed), o, 2 ** 31))).toEqual(large);
    }
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
