import { describe, expect, it } from 'vitest';
import { parseSegment, segmentOfKey, segmentOfLine, segmentOfWrite } from '../../../src/load/segment.js';
import { mulberry32 } from '../../../tools/mulberry32.js';
import { loaderErrorOf } from '../../support/thrown.js';

describe('parseSegment', () => {
  it.each([
    ['0/4', 0, 4],
    [' 3 / 4 ', 3, 4],
    ['0/1', 0, 1],
    ['3/4', 3, 4],
    ['\t1/2\n', 1, 2],
    ['07/10', 7, 10],
    ['99999/100000', 99_999, 100_000],
  ])('"%s" is segment %d of %d', (text, index, count) => {
    expect(parseSegment(text)).toEqual({ index, count });
  });

  it.each(['4/4', '5/4', '-1/4', '1/0', '0/0', 'a/b', '1', '', '/', '1/', '/4', '1.5/4', '1/4.0', '1/4/8', '0x1/4', '1 4', '0/100001'])(
    '"%s" is an INVALID_OPTION that quotes the text and says the count starts at 0',
    (text) => {
      const error = loaderErrorOf(() => parseSegment(text));
      expect(error.code).toBe('INVALID_OPTION');
      expect(error.message).toContain('--segment');
      expect(error.message).toContain(`"${text}"`);
      expect(error.message).toContain('0 <= i < N');
      expect(error.message).toContain('count from 0');
      expect(error.message).toContain('0/4 for the first of four');
    },
  );
});

/** Keys as partitionId writes them: type letter + value; string, number and binary keys of several shapes. */
function keys(count: number, seed: number): string[] {
  const random = mulberry32(seed);
  const out: string[] = [];
  for (let i = 0; i < count; i++) {
    switch (i % 4) {
      case 0:
        out.push(`Suser-${i}`);
        break;
      case 1:
        out.push(`N${i}`);
        break;
      case 2:
        out.push(`S${Math.floor(random() * 2 ** 32).toString(36)}-${i}`);
        break;
      default:
        out.push(`Sorder#2024-01-${String(i % 28).padStart(2, '0')}#${i}`);
    }
  }
  return out;
}

describe('segmentOfKey', () => {
  it('is deterministic and within 0..N-1, for any key including the empty one and non-ASCII text', () => {
    const odd = ['', 'S', 'Sé', 'S🙂', `S${'x'.repeat(2048)}`, 'N-0.5', 'BAAEC'];
    for (const count of [1, 2, 3, 4, 7, 16, 1000, 100_000]) {
      for (const key of [...odd, ...keys(500, count)]) {
        const segment = segmentOfKey(key, count);
        expect(Number.isInteger(segment) && segment >= 0 && segment < count, `${key.slice(0, 20)} of ${count}`).toBe(true);
        expect(segmentOfKey(key, count)).toBe(segment);
      }
    }
  });

  it('gives the segments of a pinned table (workers of different versions must agree)', () => {
    // A change of hash would split one key's writes over two workers of a mixed-version fleet.
    const table = ['Suser-1', 'Suser-2', 'N42', 'S', 'Sé'].map((key) => [2, 4, 7, 16, 1000].map((n) => segmentOfKey(key, n)));
    expect(table).toEqual([
      [0, 0, 2, 12, 404],
      [1, 1, 4, 1, 969],
      [1, 1, 6, 9, 617],
      [0, 0, 1, 0, 488],
      [1, 3, 0, 3, 963],
    ]);
    expect(segmentOfKey('anything', 1)).toBe(0);
  });

  it.each([2, 4, 7, 16])('spreads 100,000 keys over %d segments, each within 5%% of its share', (count) => {
    const counts = new Array<number>(count).fill(0);
    for (const key of keys(100_000, count)) counts[segmentOfKey(key, count)]!++;
    const share = 100_000 / count;
    for (const [segment, n] of counts.entries()) expect(Math.abs(n - share) / share, `segment ${segment}: ${n} of ${share}`).toBeLessThanOrEqual(0.05);
  });

  it.each([2, 4, 7, 16])('spreads 100,000 consecutive numeric keys over %d segments, each within 5%% of its share', (count) => {
    const counts = new Array<number>(count).fill(0);
    for (let i = 0; i < 100_000; i++) counts[segmentOfKey(`N${i}`, count)]!++;
    const share = 100_000 / count;
    for (const [segment, n] of counts.entries()) expect(Math.abs(n - share) / share, `segment ${segment}: ${n} of ${share}`).toBeLessThanOrEqual(0.05);
  });
});

describe('segmentOfWrite', () => {
  const COUNTS = [2, 4, 7, 16];

  it('uses the unsharded key: writes of one key with different shard suffixes land in one segment', () => {
    for (const count of COUNTS) {
      for (const key of keys(2000, 3)
        .filter((k) => k.startsWith('S'))
        .map((k) => k.slice(1))) {
        const segments = new Set(
          ['#0', '#1', '#7', '#2024-01-05', '|3'].map((suffix) => segmentOfWrite({ partitionId: `S${key}${suffix}`, unshardedKey: key }, count)),
        );
        expect(segments.size, `${key} of ${count}`).toBe(1);
      }
    }
  });

  it('an unsharded write with partitionId "Sx" and a sharded one with unshardedKey "x" agree', () => {
    for (const count of COUNTS) {
      for (const x of [
        ...keys(2000, 5)
          .filter((k) => k.startsWith('S'))
          .map((k) => k.slice(1)),
        '',
        'hot',
        'é🙂',
      ]) {
        const plain = segmentOfWrite({ partitionId: `S${x}` }, count);
        expect(segmentOfWrite({ partitionId: `S${x}#3`, unshardedKey: x }, count), `"${x}" of ${count}`).toBe(plain);
        expect(plain).toBe(segmentOfKey(`S${x}`, count));
      }
    }
  });

  it('an unsharded write is hashed by its partitionId as is (numbers and binaries keep their type letter)', () => {
    for (const count of COUNTS) {
      for (const id of ['N42', 'N-1.5', 'BAAEC', 'Sx']) expect(segmentOfWrite({ partitionId: id }, count)).toBe(segmentOfKey(id, count));
    }
  });
});

describe('segmentOfLine', () => {
  it.each([1, 2, 3, 4, 7, 16])('lines 1..n cover all %d segments evenly (counts differ by at most 1) and stay in range', (count) => {
    for (const lines of [1, count - 1, count, 1000, 10_007]) {
      const counts = new Array<number>(count).fill(0);
      for (let line = 1; line <= lines; line++) {
        const segment = segmentOfLine(line, count);
        expect(Number.isInteger(segment) && segment >= 0 && segment < count).toBe(true);
        counts[segment]!++;
      }
      if (lines >= count) expect(Math.max(...counts) - Math.min(...counts), `${lines} lines`).toBeLessThanOrEqual(1);
      expect(counts.reduce((a, b) => a + b, 0)).toBe(lines);
    }
  });

  it('each line belongs to exactly one of N workers', () => {
    for (const count of [2, 4, 7]) {
      for (let line = 1; line <= 100; line++) {
        const owners = Array.from({ length: count }, (_, index) => index).filter((index) => segmentOfLine(line, count) === index);
        expect(owners).toHaveLength(1);
      }
    }
  });
});
