import { describe, expect, it } from 'vitest';
import { LastWrites, type WriteFate } from '../../../src/verifying/lastWrites.js';

/** Two passes over the same writes: [keyId, refused] in order; returns each write's verdict. */
function verdicts(writes: Array<[string, boolean]>): string[] {
  const last = new LastWrites();
  writes.forEach(([key, refused], seq) => last.note(key, seq, refused ? 'refused' : 'landed'));
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
    last.note('a', 0, 'landed');
    last.note('b', 1, 'refused');
    last.note('a', 2, 'landed');
    expect(() => last.verdict('a', 2)).toThrow(/before seal/);
    last.seal();
    expect(last.keys).toBe(2);
    expect(() => last.note('c', 3, 'landed')).toThrow(/after seal/);
  });

  it("a write whose condition was false kept the table's item: the key is not compared, unless a later write of it landed", () => {
    const fates = (writes: Array<[string, WriteFate]>) => {
      const last = new LastWrites();
      writes.forEach(([key, fate], seq) => last.note(key, seq, fate));
      last.seal();
      return { verdicts: writes.map(([key], seq) => last.verdict(key, seq)), keys: last.keys };
    };
    // --if-newer: the first row landed, the second found a newer item (another writer's): not compared against the first.
    expect(
      fates([
        ['a', 'landed'],
        ['a', 'kept'],
      ]).verdicts,
    ).toEqual(['superseded', 'kept']);
    // A row that landed after a failed one decides again; a refused row after a kept one leaves the kept item.
    expect(
      fates([
        ['a', 'kept'],
        ['a', 'landed'],
        ['b', 'kept'],
        ['b', 'refused'],
        ['c', 'refused'],
        ['c', 'kept'],
      ]),
    ).toEqual({ verdicts: ['superseded', 'final', 'kept', 'superseded', 'superseded', 'kept'], keys: 3 });
  });
});
