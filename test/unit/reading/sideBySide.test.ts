/**
 * Files read side by side (an export's data files): one record from each in turn, at most 64 open, a file
 * that ends giving its place to the next. A read that goes on from where it stood before any record gives
 * exactly the records the whole read gave from there, whatever the files' lengths (empty ones, more files
 * than are open at once); and skipLines finds the bytes after a line break again.
 */
import { fc, it } from '@fast-check/vitest';
import { Readable } from 'node:stream';
import { describe, expect } from 'vitest';
import { EXPORT_FILES_AT_ONCE, SideBySide, type SideBySidePosition } from '../../../src/reading/sideBySide.js';
import { skipLines } from '../../../src/reading/skipLines.js';
import type { SourceRecord } from '../../../src/typing/planRow.js';

/** File `part` holds `lengths[part]` records, each on its own line (every third line blank, as a reader skips those). */
function files(lengths: number[]) {
  const lineOf = (row: number) => row + 1 + Math.floor(row / 2);
  const opens: number[] = [];
  const open = (part: number, at: { row: number; line: number } | undefined): AsyncGenerator<SourceRecord> => {
    opens.push(part);
    return (async function* () {
      if (at && at.row > 0) expect(at.line).toBe(lineOf(at.row - 1));
      for (let row = at?.row ?? 0; row < lengths[part]!; row++) yield { kind: 'json', origin: { file: `f${part}`, line: lineOf(row), raw: `${part}:${row}` } };
    })();
  };
  return { open, opens };
}

async function readAll(group: number[], lengths: number[], from?: SideBySidePosition) {
  const { open, opens } = files(lengths);
  const side = new SideBySide(group, open, from);
  const out: { raw: string; before: SideBySidePosition }[] = [];
  for await (const record of side.records()) out.push({ raw: record.origin.raw, before: structuredClone(side.before()) });
  return { out, opens };
}

describe('SideBySide', () => {
  it.prop([fc.array(fc.nat({ max: 4 }), { minLength: 2, maxLength: 150 }), fc.array(fc.nat(), { minLength: 1, maxLength: 6 })], { numRuns: 60 })(
    'goes on from any record exactly as the whole read did, opening only the files not done',
    async (lengths, picks) => {
      const group = lengths.map((_, i) => i);
      const whole = await readAll(group, lengths);
      const total = lengths.reduce((a, b) => a + b, 0);
      expect(whole.out).toHaveLength(total);
      // Each file's records in its own order; at most 64 files at once.
      for (const b of whole.out) expect(b.before.files.length).toBeLessThanOrEqual(EXPORT_FILES_AT_ONCE);
      if (total === 0) return;
      for (const pick of picks) {
        const at = pick % total;
        const from = whole.out[at]!.before;
        const rest = await readAll(group, lengths, from);
        expect(rest.out.map((r) => r.raw)).toEqual(whole.out.slice(at).map((r) => r.raw));
        // Its own positions are the whole read's (so a later point is the same wherever the read began).
        expect(rest.out.map((r) => r.before)).toEqual(whole.out.slice(at).map((r) => r.before));
        // Files done before the point are not opened again.
        const doneBefore = group.slice(0, from.opened).filter((part) => !from.files.some((f) => f.part === part));
        for (const part of doneBefore) expect(rest.opens).not.toContain(part);
      }
    },
  );

  it('mixes the files: one record from each in turn', async () => {
    const { out } = await readAll([0, 1, 2], [2, 3, 1]);
    expect(out.map((r) => r.raw)).toEqual(['0:0', '1:0', '2:0', '0:1', '1:1', '1:2']);
  });
});

describe('skipLines', () => {
  const chunked = (text: string, size: number) =>
    Readable.from(Array.from({ length: Math.ceil(text.length / size) }, (_, i) => Buffer.from(text.slice(i * size, (i + 1) * size))));
  const text = async (stream: Readable) => {
    let all = '';
    for await (const chunk of stream) all += (chunk as Buffer).toString();
    return all;
  };

  it.prop([
    fc.array(fc.string({ unit: fc.constantFrom('a', '"', '\\', ' ', '{', 'é') }), { maxLength: 20 }),
    fc.nat({ max: 25 }),
    fc.integer({ min: 1, max: 9 }),
  ])('gives the bytes after the first n line breaks, in any chunking', async (lines, n, size) => {
    const all = lines.join('\n');
    const rest = await text(await skipLines(chunked(all, size), n));
    const expected = n === 0 ? all : n < lines.length ? lines.slice(n).join('\n') : '';
    expect(rest).toBe(expected);
  });
});
