/**
 * The pure decision of listing: by name, whatever its spelling, an entry is
 * data or skipped with why; every entry found ends in exactly one of the two lists.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { nameDecision, ownFileOf, sortOut, type FoundEntry } from '../../../src/reading/listing.js';
import { globDepth } from '../../../src/reading/glob.js';

describe('nameDecision', () => {
  it.each([
    'a.csv',
    'x_y.csv',
    'part-00000.csv.gz',
    './a.csv',
    'a//b.csv',
    '../a.csv',
    'sub/./a.csv',
    '日本/データ.jsonl',
    'é.csv',
    'ck.json',
    'a.crc.csv',
    'data.lock.csv',
    'part.2024.csv',
    'x.tmp.csv',
  ])('%s is data', (name) => {
    expect(nameDecision(name)).toBeUndefined();
  });

  it.each([
    ['.a.csv', 'hidden'],
    ['.a.csv.crc', 'hidden'],
    ['sub/.git/x.csv', 'hidden'],
    ['_SUCCESS', 'marker'],
    ['_committed_123', 'marker'],
    ['_temporary/0/part-0.csv', 'marker'],
    ['a.csv.crc', 'checksum'],
    ['a.csv.md5', 'checksum'],
    ['manifest-summary.json', 'export-manifest'],
    ['x.csv.rejects.jsonl', 'loader-file'],
    ['x.csv.rejects.jsonl.lock', 'loader-file'],
    ['x.csv.rejects.jsonl.4242.tmp', 'loader-file'],
    ['x.csv.Orders.shards.json', 'loader-file'],
    ['ck.json.write-rejects', 'loader-file'],
    ['ck.json.write-rejects.77.tmp', 'loader-file'],
    ['sub/', 'folder-marker'],
    ['other-ck.json.lock', 'loader-file'],
    ['other-ck.json.12494.c9eb8c65.tmp', 'loader-file'],
    ['report.json.88.tmp', 'loader-file'],
  ])('%s is skipped: %s', (name, reason) => {
    expect(nameDecision(name)?.reason).toBe(reason);
  });
});

describe('ownFileOf', () => {
  const own = [
    { option: '--checkpoint d/ck.json', path: '/w/d/ck.json' },
    { option: '--report r.json', path: '/w/r.json' },
    { option: '--temp-dir /w/d', path: '/w/d/ddb-spread-', prefix: true },
  ];
  it.each([
    ['/w/d/ck.json', 'the file of --checkpoint d/ck.json'],
    ['/w/d/ck.json.lock', 'the lock file of --checkpoint d/ck.json'],
    ['/w/d/ck.json.123.tmp', 'a temporary file of --checkpoint d/ck.json'],
    ['/w/d/ck.json.123.0af3c9d1.tmp', 'a temporary file of --checkpoint d/ck.json'],
    ['/w/r.json.99.ab.tmp', 'a temporary file of --report r.json'],
    ['/w/d/ck.jsonl', undefined],
    ['/w/d/ck.json.lockx', undefined],
    ['/w/d/ck.json.x.tmp', undefined],
    ['/w/other/ck.json', undefined],
    ['/w/d/ddb-spread-Ab12Z9', 'a temporary folder of --temp-dir /w/d'],
    ['/w/d/ddb-spread-data.csv', undefined],
  ])('%s: %s', (path, expected) => {
    expect(ownFileOf(path, own)).toBe(expected);
  });
});

describe('sortOut', () => {
  const file = (relative: string, extra: Partial<FoundEntry> = {}): FoundEntry => ({
    name: `d/${relative}`,
    relative,
    kind: 'file',
    identity: relative,
    ...extra,
  });

  it('sorts parts in UTF-8 byte order, as S3 lists keys and docs/REFERENCE.md says (not UTF-16 code units)', () => {
    // U+FF46 is EF BD A6 in UTF-8, before the astral U+1F600 (F0 9F 98 80); in UTF-16 it comes after
    // (FF46 > D83D). Found by test/adversarial/migration.test.ts: two parts writing one key ended with the
    // other part's item.
    const out = sortOut([file('p😀a.csv'), file('pｆ.csv'), file('pz.csv')]);
    expect(out.data.map((e) => e.relative)).toEqual(['pz.csv', 'pｆ.csv', 'p😀a.csv']);
  });

  it('reads one file under two names once: the name without a link, else the first', () => {
    const out = sortOut([
      file('a-link.csv', { identity: 'X', viaLink: true }),
      file('z.csv', { identity: 'X' }),
      file('b.csv', { identity: 'Y', viaLink: true }),
      file('c.csv', { identity: 'Y', viaLink: true }),
    ]);
    expect(out.data.map((e) => e.name)).toEqual(['d/b.csv', 'd/z.csv']);
    expect(out.skipped).toEqual([
      { name: 'd/a-link.csv', reason: 'same-file', detail: 'the same file as d/z.csv, which is read (once)' },
      { name: 'd/c.csv', reason: 'same-file', detail: 'the same file as d/b.csv, which is read (once)' },
    ]);
  });

  it("names broken links, loops, pipes and the load's own files with why, before any name rule", () => {
    const out = sortOut([
      file('gone.csv', { kind: 'broken-link', target: '../nowhere.csv' }),
      file('up', { kind: 'link-loop', target: '/w/d' }),
      file('fifo.csv', { kind: 'not-a-file' }),
      file('ck.json.lock', { own: 'the lock file of --checkpoint d/ck.json' }),
      file('_ok.csv', { own: 'the file of --rejects' }),
    ]);
    expect(out.data).toEqual([]);
    expect(Object.fromEntries(out.skipped.map((s) => [s.name, s.reason]))).toEqual({
      'd/gone.csv': 'broken-link',
      'd/up': 'link-loop',
      'd/fifo.csv': 'not-a-file',
      'd/ck.json.lock': 'own-file',
      'd/_ok.csv': 'own-file',
    });
    expect(out.skipped.find((s) => s.name === 'd/gone.csv')!.detail).toMatch(/\.\.\/nowhere\.csv/);
  });

  // Names made of what breaks listings: dots, underscores, separators, unicode, checksum and loader suffixes.
  const piece = fc.constantFrom(
    '.',
    '..',
    '_',
    '/',
    '//',
    './',
    '../',
    'a',
    'x_y',
    'é',
    '日本',
    '.crc',
    '.csv',
    '.rejects.jsonl',
    '.lock',
    '-',
    ' ',
    'SUCCESS',
  );
  const entry = fc.record({
    relative: fc.array(piece, { minLength: 1, maxLength: 8 }).map((p) => p.join('')),
    kind: fc.constantFrom<FoundEntry['kind']>('file', 'file', 'file', 'file', 'folder', 'broken-link', 'link-loop', 'not-a-file'),
    identity: fc.option(fc.integer({ min: 0, max: 5 }).map(String), { nil: undefined }),
    viaLink: fc.boolean(),
    own: fc.option(fc.constant('the lock file of --checkpoint ck.json'), { nil: undefined, freq: 8 }),
  });

  it('every entry ends once in data or skipped; data are files with a data name, one per identity, sorted', () => {
    fc.assert(
      fc.property(fc.array(entry, { maxLength: 40 }), (raw) => {
        // Names are unique (as paths and keys are); relatives may repeat in spelling.
        const entries: FoundEntry[] = raw.map((e, i) => ({ ...e, name: `n${i}:${e.relative}` }));
        const { data, skipped } = sortOut(entries);
        const names = [...data.map((e) => e.name), ...skipped.map((s) => s.name)].sort();
        expect(names).toEqual(entries.map((e) => e.name).sort());
        for (const e of data) {
          expect(e.kind).toBe('file');
          expect(e.own).toBeUndefined();
          expect(nameDecision(e.relative)).toBeUndefined();
        }
        const identities = data.map((e) => e.identity).filter((i) => i !== undefined);
        expect(new Set(identities).size).toBe(identities.length);
        // Every identity that has a readable name is read under one of them.
        for (const e of entries)
          if (e.kind === 'file' && e.own === undefined && nameDecision(e.relative) === undefined && e.identity !== undefined)
            expect(identities).toContain(e.identity);
        const relatives = data.map((e) => e.relative);
        expect(relatives).toEqual([...relatives].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0)));
        for (const s of skipped) expect(s.detail.length).toBeGreaterThan(0);
      }),
      { numRuns: 500 },
    );
  });
});

describe('S3 keys', () => {
  it('keys under a prefix are taken verbatim: //, ./ and ../ segments are data, each object once under its own key', () => {
    const keys = ['a.csv', '/b.csv', './c.csv', '../d.csv', 'sub//e.csv', 'sub/./f.csv', '_SUCCESS', 'sub/', '.x.csv', 'g.csv.crc'];
    const { data, skipped } = sortOut(keys.map((k) => ({ name: `s3://b/p/${k}`, relative: k, kind: 'file' as const, identity: `s3://b/p/${k}` })));
    expect(data.map((e) => e.relative).sort()).toEqual(['../d.csv', './c.csv', '/b.csv', 'a.csv', 'sub//e.csv', 'sub/./f.csv'].sort());
    expect(skipped.map((s) => [s.name, s.reason])).toEqual([
      ['s3://b/p/.x.csv', 'hidden'],
      ['s3://b/p/_SUCCESS', 'marker'],
      ['s3://b/p/g.csv.crc', 'checksum'],
      ['s3://b/p/sub/', 'folder-marker'],
    ]);
  });
});

describe('globDepth', () => {
  it.each([
    ['d/*.csv', 1],
    ['./d//*.csv', 1],
    ['/abs/d/*/x-?.csv', 2],
    ['*.csv', 1],
    ['d/**/*.csv', Infinity],
  ])('%s reaches %d below its base', (pattern, depth) => {
    expect(globDepth(pattern)).toBe(depth);
  });
});
