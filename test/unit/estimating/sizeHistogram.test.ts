import { describe, expect, it } from 'vitest';
import { MAX_ITEM_BYTES, writeUnits } from '../../../src/typing/itemSize.js';
import { SIZE_BANDS, SizeHistogram } from '../../../src/estimating/sizeHistogram.js';

const KB = 1024;

describe('SizeHistogram', () => {
  it('lists every band, 1 KB to 400 KB, empty ones included', () => {
    const json = new SizeHistogram().toJSON();
    expect(json.histogram.map((b) => b.upToBytes / KB)).toEqual([1, 2, 4, 8, 16, 32, 64, 128, 256, 400]);
    expect(json.histogram.every((b) => b.items === 0)).toBe(true);
    expect(json).toMatchObject({ totalBytes: 0, averageBytes: 0, maxBytes: 0 });
    expect(SIZE_BANDS.at(-1)).toBe(MAX_ITEM_BYTES);
  });

  it('puts an item in the first band whose bound it does not exceed', () => {
    const cases: Array<[number, number]> = [
      [0, 1],
      [1, 1],
      [1024, 1],
      [1025, 2],
      [2048, 2],
      [2049, 4],
      [3000, 4],
      [4097, 8],
      [200 * KB, 256],
      [256 * KB, 256],
      [256 * KB + 1, 400],
      [MAX_ITEM_BYTES, 400],
    ];
    for (const [bytes, bandKb] of cases) {
      const h = new SizeHistogram();
      h.add(bytes);
      const band = h.toJSON().histogram.find((b) => b.items === 1);
      expect(band?.upToBytes, `${bytes} bytes`).toBe(bandKb * KB);
    }
  });

  it('keeps the 1 KB band equal to the items that cost one write unit', () => {
    const h = new SizeHistogram();
    const sizes = [10, 500, 1023, 1024, 1025, 1500, 2048, 5000];
    for (const s of sizes) h.add(s);
    expect(h.toJSON().histogram[0]!.items).toBe(sizes.filter((s) => writeUnits(s) === 1).length);
  });

  it('totals, averages and keeps the largest', () => {
    const h = new SizeHistogram();
    for (const s of [100, 300, 2000, 600]) h.add(s);
    const json = h.toJSON();
    expect(json.totalBytes).toBe(3000);
    expect(json.averageBytes).toBe(750);
    expect(json.maxBytes).toBe(2000);
    expect(h.items).toBe(4);
    expect(json.histogram.reduce((sum, b) => sum + b.items, 0)).toBe(4);
    expect(json.histogram.slice(0, 2).map((b) => b.items)).toEqual([3, 1]);
  });

  it('refuses sizes no valid item has', () => {
    const h = new SizeHistogram();
    expect(() => h.add(-1)).toThrow(RangeError);
    expect(() => h.add(Number.NaN)).toThrow(RangeError);
    expect(() => h.add(Infinity)).toThrow(RangeError);
    expect(() => h.add(MAX_ITEM_BYTES + 1)).toThrow(RangeError);
    expect(h.items).toBe(0);
  });

  it('serialises as ItemSizes through JSON.stringify', () => {
    const h = new SizeHistogram();
    h.add(1500);
    expect(JSON.parse(JSON.stringify(h))).toEqual(h.toJSON());
  });
});
