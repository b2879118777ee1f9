/**
 * The CSV framer jumps over bytes that are not a quote or a line break (indexOf), and readCsv counts a
 * record's line breaks by indexOf: both checked against plain byte-by-byte references on random CSV.
 */
import { Readable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { countBreaks, readCsv, trimBreak } from '../../../src/reading/readCsv.js';
import type { SourceRecord } from '../../../src/typing/planRow.js';
import { sized } from '../../support/testSize.js';

/** Record sizes (bytes, line break excluded) by the framer's documented rules, one byte at a time. */
function referenceSizes(data: Buffer, delimiter: Buffer): number[] {
  const sizes: number[] = [];
  let quoting = false;
  let fieldStarted = false;
  let start = 0;
  for (let i = 0; i < data.length; i++) {
    const c = data[i]!;
    if (quoting) {
      if (c === 0x22) {
        if (data[i + 1] === 0x22) i++;
        else quoting = false;
      }
      continue;
    }
    if (c === 10 || c === 13) {
      sizes.push(i - start);
      if (c === 13 && data[i + 1] === 10) i++;
      start = i + 1;
      fieldStarted = false;
    } else if (c === 0x22 && !fieldStarted) {
      quoting = true;
      fieldStarted = true;
    } else if (delimiter.every((b, k) => data[i + k] === b)) {
      fieldStarted = false;
      i += delimiter.length - 1;
    } else fieldStarted = true;
  }
  if (start < data.length) sizes.push(data.length - start);
  return sizes;
}

function random(seed: number) {
  return (n: number) => {
    seed = (seed * 1103515245 + 12345) & 0x7fffffff;
    return seed % n;
  };
}

async function read(chunks: Buffer[], delimiter: string, maxRecordBytes: number): Promise<SourceRecord[]> {
  const out: SourceRecord[] = [];
  for await (const r of readCsv(Readable.from(chunks), 'in.csv', { delimiter, columns: ['x', 'y'], maxRecordBytes })) out.push(r);
  return out;
}

describe('csvFramer: jumping over plain bytes', () => {
  // 100 files in the unit pass, 400 at full size (test/support/testSize.ts).
  const files = sized(100, 400);
  it(`flags exactly the records over the bound, whatever the chunking (${files} random files, 1- and 3-byte delimiters)`, async () => {
    const next = random(7);
    for (let round = 0; round < files; round++) {
      const delimiter = round % 2 === 0 ? ';' : '¦';
      const pieces = ['a', 'bcdefgh', delimiter, delimiter, '"', '""', '\n', '\r\n', '\r', 'é', ' '];
      const text = Array.from({ length: 5 + next(60) }, () => pieces[next(pieces.length)]).join('');
      const data = Buffer.from(text);
      const max = 2 + next(12);
      const oversized = referenceSizes(data, Buffer.from(delimiter)).filter((size) => size > max);
      const cut = next(data.length + 1);
      const ways = [[data], [data.subarray(0, cut), data.subarray(cut)], Array.from(data, (b) => Buffer.from([b]))];
      const results = await Promise.all(ways.map((chunks) => read(chunks, delimiter, max)));
      for (const records of results) {
        const tooLarge = records.filter((r) => r.kind === 'unparsable' && r.code === 'RECORD_TOO_LARGE');
        expect(tooLarge.length, JSON.stringify({ text, max })).toBe(oversized.length);
        expect(
          records.map((r) => [r.origin.line, r.kind]),
          JSON.stringify({ text, max }),
        ).toEqual(results[0]!.map((r) => [r.origin.line, r.kind]));
      }
    }
  });
});

describe('csvFramer: a quote left open to the end', () => {
  it('counts the lines of the run-on record whether or not text follows its last line break', async () => {
    for (const [tail, lines] of [
      ['more', 'lines 1-2 (2 lines)'],
      ['more\n', 'lines 1-2 (2 lines)'],
      ['\n', 'lines 1-2 (2 lines)'], // as before the jumps
    ] as const) {
      const data = Buffer.from(`a,"open a long field\n${tail}`);
      for (const chunks of [[data], Array.from(data, (b) => Buffer.from([b]))]) {
        const records = await read(chunks, ',', 5);
        expect(records.map((r) => (r.kind === 'unparsable' ? r.message.match(/lines? [^ ]+( \(\d+ lines\))?/)?.[0] : r.kind))).toEqual([lines]);
      }
    }
  });
});

describe('readCsv: line breaks of a record', () => {
  const slowCount = (raw: string) => {
    let n = 0;
    for (let i = 0; i < raw.length; i++) if (raw[i] === '\n' || (raw[i] === '\r' && raw[i + 1] !== '\n')) n++;
    return n;
  };
  it('countBreaks and trimBreak agree with a character loop and the old regex on random text', () => {
    const next = random(3);
    const pieces = ['a', '\n', '\r', '\r\n', '\n\r', 'xyz'];
    for (let round = 0; round < 2000; round++) {
      const raw = Array.from({ length: next(8) }, () => pieces[next(pieces.length)]).join('');
      expect(countBreaks(raw), JSON.stringify(raw)).toBe(slowCount(raw));
      expect(trimBreak(raw), JSON.stringify(raw)).toBe(raw.replace(/\r?\n?$|\r$/, ''));
    }
  });
});
