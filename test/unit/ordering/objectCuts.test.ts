import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { composeCuts, entryStates, SegmentScan, stateKey } from '../../../src/ordering/stripes/objectCuts.js';
import type { ByteRange } from '../../../src/ordering/stripes/ranges.js';
import { RecordStartScanner, type RecordSyntax, type ScanState } from '../../../src/ordering/stripes/recordStarts.js';
import { sized } from '../../support/testSize.js';

/**
 * An S3 object's cut, scanned segment by segment from every state a segment may start in, must find the very
 * record starts and lines one pass from the first byte finds (cutFile's): a cut inside a quoted field, or a
 * line one off, would parse rows wrong or name them wrong in the reject file.
 */

/** The object's segments scanned apart, in chunks of `chunk` bytes, the last only to its first record starts (as cutObject does). */
function segmentCut(bytes: Buffer, syntax: RecordSyntax, count: number, chunk: number): ByteRange[] | undefined {
  const starts = Array.from({ length: count }, (_, k) => Math.floor((bytes.length * k) / count));
  const summaries = starts.map((start, k) => {
    const last = k + 1 === count;
    const end = last ? bytes.length : starts[k + 1]!;
    const scan = new SegmentScan(syntax, 0x2c, k === 0);
    for (let at = start; at < end; at += chunk) {
      scan.feed(bytes.subarray(at, Math.min(end, at + chunk)));
      if (last && scan.started) break;
    }
    return scan.summary();
  });
  return composeCuts(starts, bytes.length, summaries);
}

/** cutFile's ranges: one scan from the first byte, the first record start at or after each target. */
function fileCut(bytes: Buffer, syntax: RecordSyntax, count: number): ByteRange[] {
  const targets = Array.from({ length: count - 1 }, (_, k) => Math.floor((bytes.length * (k + 1)) / count));
  const scanner = new RecordStartScanner(syntax, targets);
  scanner.feed(bytes);
  scanner.end();
  const starts = [{ offset: 0, line: 1 }, ...scanner.starts];
  const ranges: ByteRange[] = [];
  starts.forEach((s, i) => {
    const end = i + 1 < starts.length ? starts[i + 1]!.offset : bytes.length;
    if (end > s.offset) ranges.push({ start: s.offset, end, line: s.line });
  });
  return ranges;
}

const csvPiece = fc.constantFrom(
  'a',
  'b',
  ',',
  '"',
  '""',
  '\n',
  '\r',
  '\r\n',
  'x y',
  'é',
  '"q,\n"',
  ',"',
  '"\r\n"',
  '"line\nbreak\r\nin quotes"',
  'plain,row\n',
);
const csvBody = fc.array(csvPiece, { maxLength: 80 }).map((p) => p.join(''));
const jsonPiece = fc.constantFrom('{"a":1}', '\n', '\r', '\r\n', '"x\\n"', ' ', 'é');
const jsonBody = fc.array(jsonPiece, { maxLength: 80 }).map((p) => p.join(''));

describe('cutting an object segment by segment', () => {
  it('CSV: the same record starts and lines as one pass from the first byte, wherever the segments fall', () => {
    fc.assert(
      fc.property(csvBody, fc.boolean(), fc.integer({ min: 2, max: 9 }), fc.integer({ min: 1, max: 17 }), (body, bom, count, chunk) => {
        const bytes = Buffer.concat([bom ? Buffer.from([0xef, 0xbb, 0xbf]) : Buffer.alloc(0), Buffer.from(`c1,c2\n${body}`)]);
        // A segment holds a BOM whole (cutObject's are a minimum stripe at least).
        fc.pre(bytes.length >= 3 * count);
        expect(segmentCut(bytes, 'csv', count, chunk)).toEqual(fileCut(bytes, 'csv', count));
      }),
      { numRuns: sized(300, 2000) },
    );
  });

  it('JSON Lines: the same record starts and lines (a lone CR is no line break)', () => {
    fc.assert(
      fc.property(jsonBody, fc.integer({ min: 2, max: 9 }), fc.integer({ min: 1, max: 17 }), (body, count, chunk) => {
        const bytes = Buffer.from(body);
        fc.pre(bytes.length >= count);
        expect(segmentCut(bytes, 'jsonl', count, chunk)).toEqual(fileCut(bytes, 'jsonl', count));
      }),
      { numRuns: sized(200, 1000) },
    );
  });

  it('a quoted field whose line breaks straddle a segment start, with CRLF: the cut is past the field, its line counted through it', () => {
    const rows = ['pk,note', 'a,plain', `b,"one\r\ntwo\r\nthree\r\nfour"`, 'c,after', 'd,last'];
    const bytes = Buffer.from(`${rows.join('\r\n')}\r\n`);
    // The second segment starts inside b's quoted field, after a line break that is text.
    const inside = bytes.indexOf('two');
    const ranges = segmentCut(bytes, 'csv', 2, 3);
    expect(Math.floor(bytes.length / 2)).toBeGreaterThan(bytes.indexOf('"one'));
    expect(Math.floor(bytes.length / 2)).toBeLessThan(bytes.indexOf('c,after'));
    expect(inside).toBeGreaterThan(0);
    expect(ranges).toEqual([
      { start: 0, end: bytes.indexOf('c,after'), line: 1 },
      { start: bytes.indexOf('c,after'), end: bytes.length, line: 7 },
    ]);
  });

  it('text without quotes after a segment start keeps both readings apart, and the segment before decides which holds', () => {
    const bytes = Buffer.from('pk,note\n"a long field\nx,1\ny,2\nz,3"\nb,2\nc,3\n');
    // Segment 2 starts at "x,1": inside quotes, though its own bytes read like rows.
    const ranges = segmentCut(bytes, 'csv', 3, 64)!;
    expect(ranges.map((r) => bytes.subarray(r.start, r.end).toString())).toEqual(['pk,note\n"a long field\nx,1\ny,2\nz,3"\n', 'b,2\nc,3\n']);
    expect(ranges[1]!.line).toBe(6);
  });

  it('the entry states are every state a CSV scan reaches between two bytes', () => {
    const seen = new Map<string, ScanState>();
    const start = entryStates('csv')[0]!;
    const queue = [start];
    seen.set(stateKey(start), start);
    for (let s = queue.shift(); s !== undefined; s = queue.shift()) {
      for (const byte of [0x22, 0x0d, 0x0a, 0x2c, 0x61]) {
        const scanner = new RecordStartScanner('csv', [], 0x2c, { from: s, toEnd: true, atFileStart: false });
        scanner.feed(Uint8Array.of(byte));
        const next = scanner.state;
        if (!seen.has(stateKey(next))) {
          seen.set(stateKey(next), next);
          queue.push(next);
        }
      }
    }
    expect(new Set(seen.keys())).toEqual(new Set(entryStates('csv').map(stateKey)));
  });

  it('a segment whose entry state has no pass is not cut (never guessed)', () => {
    expect(composeCuts([0, 5], 10, [new Map(), new Map()])).toBeUndefined();
  });

  it('text without quotes is read in two tracks at most, one inside quotes, one outside', () => {
    const scan = new SegmentScan('csv', 0x2c, false);
    scan.feed(Buffer.from('1,ab\n2,cd\n3,ef\n'));
    expect(scan.tracks).toBe(2);
  });
});
