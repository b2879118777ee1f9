import { describe, expect, it } from 'vitest';
import { LastWrites } from '../../../src/verifying/lastWrites.js';

/** Two passes over the same writes: [keyId, refused] in order; returns each write's verdict. */
function verdicts(writes: Array<[string, boolean]>): string[] {
  const last = new LastWrites();
  writes.forEach(([key, refused], seq) => last.note(key, seq, refused));
  last.seal();
  return writes.map(([key], seq) => last.verdict(key, seq));
}

describe('each key compared against its last write that landed', () => {
  it('a key written twice, however far apart, is compared only against its later write', () => {
    const writes: Array<[string, boolean]> = [['a', false], ...Array.from({ length: 1000 }, (_, i): [string, boolean] => [`k${i}`, false]), ['a', false]];
    const v = verdicts(writes);
    expect(v[0]).toBe('superseded');
    expect(v[v.length - 1]).toBe('final');
    expect(v.filter((x) => x === 'final')).toHaveLength(1001);
  });

  it('a refused write did not land: the write before it decides; a key refused throughout is expected absent at its last write', () => {
    expect(
      verdicts([
        ['a', false],
        ['a', false],
        ['a', true],
      ]),
    ).toEqual(['superseded', 'final', 'superseded']);
    expect(
      verdicts([
        ['a', true],
        ['a', false],
        ['a', true],
      ]),
    ).toEqual(['superseded', 'final', 'superseded']);
    expect(
      verdicts([
        ['c', true],
        ['c', true],
      ]),
    ).toEqual(['superseded', 'refused']);
  });

  it('counts distinct keys, and refuses to be used out of order', () => {
    const last = new LastWrites();
    last.note('a', 0, false);
    last.note('b', 1, true);
    last.note('a', 2, false);
    expect(() => last.verdict('a', 2)).toThrow(/before seal/);
    last.seal();
    expect(last.keys).toBe(2);
    expect(() => last.note('c', 3, false)).toThrow(/after seal/);
  });
});
