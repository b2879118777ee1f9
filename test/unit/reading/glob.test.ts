import { describe, expect, it } from 'vitest';
import { globBase, globMatcher, hasGlob } from '../../../src/reading/glob.js';
import { isDataName } from '../../../src/reading/listing.js';

describe('globs of local inputs', () => {
  it('the folder to walk is the part before the first wildcard', () => {
    expect(globBase('out/part-*.csv')).toBe('out');
    expect(globBase('./a/b/**/*.jsonl')).toBe('a/b');
    expect(globBase('*.csv')).toBe('.');
    expect(globBase('/data/x?.csv')).toBe('/data');
    expect(hasGlob('a/b.csv')).toBe(false);
  });

  it('* and ? stay in one segment; ** crosses segments', () => {
    const one = globMatcher('out/part-*.csv');
    expect(one('out/part-00001.csv')).toBe(true);
    expect(one('out/sub/part-1.csv')).toBe(false);
    expect(one('out/part-1.csv.gz')).toBe(false);
    const deep = globMatcher('a/**/*.jsonl');
    expect(deep('a/x.jsonl')).toBe(true);
    expect(deep('a/b/c/x.jsonl')).toBe(true);
    expect(globMatcher('x?.csv')('x1.csv')).toBe(true);
    expect(globMatcher('x?.csv')('x12.csv')).toBe(false);
    // Regex characters in names are literal.
    expect(globMatcher('a+b/(1)*.csv')('a+b/(1)x.csv')).toBe(true);
  });

  it("a folder's data files: no hidden files, Spark's _SUCCESS and .crc, manifests or the loader's own outputs", () => {
    expect(['part-0.csv', 'x.jsonl.gz'].every(isDataName)).toBe(true);
    expect(['_SUCCESS', '.part-0.csv.crc', 'a.csv.rejects.jsonl', 'manifest-summary.json', '_started', 'x.shards.json'].some(isDataName)).toBe(false);
  });
});
