import { describe, expect, it } from 'vitest';
import { planWorkers } from '../../../src/estimating/workersPlan.js';
import { dealParts } from '../../../src/load/shares.js';
import type { ListedExport } from '../../../src/reading/dynamodbExport.js';
import type { ListedPart } from '../../../src/reading/inputPart.js';

const part = (name: string, size: number, format?: ListedPart['format']): ListedPart => ({
  part: {
    name,
    size,
    open: () => Promise.reject(new Error('not read')),
    outline: () => Promise.reject(new Error('no')),
    contentHash: () => Promise.reject(new Error('no')),
  },
  ...(format ? { format } : {}),
});
const exported = (name: string, parts = 1) => ({ name, items: 1, parts }) as unknown as ListedExport;

describe('planWorkers: how N workers would divide the whole load', () => {
  const sizes = [900, 500, 400, 300, 300, 200, 100, 100];
  const total = sizes.reduce((a, b) => a + b, 0);

  it('one export is divided by data file: the input read once, the slowest worker reads the largest share of the deal', () => {
    const set = { parts: sizes.map((s, i) => part(`data/${i}.json.gz`, s, 'export-full')), exports: [exported('AWSDynamoDB/01')] };
    const plan = planWorkers(set, 3, { partsDisjoint: false });
    const shares = [0, 0, 0];
    dealParts(sizes, 3).forEach((w, i) => (shares[w]! += sizes[i]!));
    expect(plan).toMatchObject({ count: 3, by: 'parts', inputBytes: total, bytesReadByAll: total, largestShareBytes: Math.max(...shares) });
    expect(plan.readShare).toBeCloseTo(Math.max(...shares) / total, 10);
    expect(plan.readShare).toBeLessThan(1);
    expect(plan.why).toMatch(/one DynamoDB export/);
  });

  it('CSV parts of unknown content are divided by key: every worker reads every byte', () => {
    const set = { parts: sizes.map((s, i) => part(`p${i}.csv`, s)), exports: [] };
    const plan = planWorkers(set, 4, { partsDisjoint: false });
    expect(plan).toMatchObject({ by: 'keys', largestShareBytes: total, bytesReadByAll: 4 * total, readShare: 1 });
    expect(plan.why).toMatch(/--parts-disjoint/);
    // Vouched for: divided by part.
    expect(planWorkers(set, 4, { partsDisjoint: true })).toMatchObject({ by: 'parts', bytesReadByAll: total });
  });

  it('an export chain with --checkpoint: divided export by export, read one export after the other', () => {
    const full = [800, 600, 500, 100].map((s, i) => part(`full/${i}.json.gz`, s, 'export-full'));
    const incremental = [300, 50, 40].map((s, i) => part(`inc/${i}.json.gz`, s, 'export-incremental'));
    const set = { parts: [...full, ...incremental], exports: [exported('full', 4), exported('inc', 3)] };
    const plan = planWorkers(set, 2, { partsDisjoint: false, checkpointPath: 'ck.json', order: 'auto' });
    expect(plan).toMatchObject({ by: 'chain', bytesReadByAll: 2390, inputBytes: 2390 });
    // Each export waits for its slowest worker: the full export's largest share (600 + 500), then the incremental's (300).
    const full0 = planWorkers({ parts: full, exports: [exported('full', 4)] }, 2, { partsDisjoint: false });
    expect(plan.readShare).toBeCloseTo((full0.largestShareBytes + 300) / 2390, 10);
    // Without a checkpoint the chain stays divided by key, and says what to pass.
    const byKey = planWorkers(set, 2, { partsDisjoint: false, order: 'auto' });
    expect(byKey).toMatchObject({ by: 'keys', bytesReadByAll: 2 * 2390 });
    expect(byKey.why).toMatch(/--checkpoint/);
  });

  it('one worker reads every part once', () => {
    const set = { parts: sizes.map((s, i) => part(`p${i}.csv`, s)), exports: [] };
    expect(planWorkers(set, 1, { partsDisjoint: false })).toMatchObject({ count: 1, largestShareBytes: total, bytesReadByAll: total, readShare: 1 });
  });

  it('fewer parts than workers are divided by key, or by byte range under --parts-disjoint (each segment but the last scanned once more)', () => {
    expect(planWorkers({ parts: [part('big.csv', 5000)], exports: [] }, 4, { partsDisjoint: false })).toMatchObject({ by: 'keys', bytesReadByAll: 20_000 });
    const mb = 1 << 20;
    expect(planWorkers({ parts: [part('big.csv', 4 * mb)], exports: [] }, 4, { partsDisjoint: true })).toMatchObject({
      by: 'ranges',
      bytesReadByAll: 7 * mb,
      largestShareBytes: 2 * mb,
      readShare: 0.25,
    });
    // One S3 object: the scanned segments are copied and the ranges read from the copies, each byte fetched once.
    expect(planWorkers({ parts: [part('s3://dumps/big.csv', 4 * mb)], exports: [] }, 4, { partsDisjoint: true })).toMatchObject({
      by: 'ranges',
      bytesReadByAll: 4 * mb,
      readShare: 0.25,
    });
  });
});
