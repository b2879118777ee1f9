/**
 * A striped read cuts a range's head off at the byte where the first row past it starts (found by its
 * line, checked by RecordStartScanner), so each head is parsed once by the stripe that takes it; where no
 * record starts at that line, the range is read as before (the head's rows counted: take, skip).
 */
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { openStripedRead, stripesOf, type Head } from '../../../src/ordering/stripes/stripedRecords.js';
import { readCsv } from '../../../src/reading/readCsv.js';
import { recordStartAtLine } from '../../../src/ordering/stripes/ranges.js';
import type { SourceRecord } from '../../../src/typing/planRow.js';

const how = { syntax: 'csv', delimiter: ',', columns: undefined } as const;

function file(text: string): string {
  const path = join(mkdtempSync(join(tmpdir(), 'cut-')), 'in.csv');
  writeFileSync(path, text);
  return path;
}

describe('recordStartAtLine', () => {
  const text = 'k,v\na,"x\ny"\r\nb,2\rc,3\n';
  const path = file(text);
  const range = { start: 4, end: text.length, line: 2 };
  it('finds the line a record starts on, after LF, CRLF, a lone CR and a quoted line break', async () => {
    expect(await recordStartAtLine(path, range, 4, how)).toBe(text.indexOf('b,2'));
    expect(await recordStartAtLine(path, range, 5, how)).toBe(text.indexOf('c,3'));
  });
  it('is undefined for a line inside a quoted field, the range start, or past the range', async () => {
    expect(await recordStartAtLine(path, range, 3, how)).toBeUndefined();
    expect(await recordStartAtLine(path, range, 2, how)).toBeUndefined();
    expect(await recordStartAtLine(path, range, 6, how)).toBeUndefined();
    expect(await recordStartAtLine(path, { ...range, end: text.indexOf('c,3') }, 5, how)).toBeUndefined();
  });
});

describe('stripesOf', () => {
  const ranges = [
    { start: 0, end: 100, line: 1 },
    { start: 100, end: 200, line: 10 },
  ];
  const head = (over: Partial<Head>): Head => ({ rows: 0, bytes: 0, whole: false, keys: [], ...over });
  it('a cut head: the stripe before reads the bytes up to the cut, the next starts at it, nothing counted', () => {
    const stripes = stripesOf(ranges, [head({}), head({ rows: 3, bytes: 30, nextLine: 13, cut: { start: 130, end: 200, line: 13 } })]);
    expect(stripes).toEqual([
      {
        pieces: [
          { range: ranges[0], skip: 0, take: Infinity },
          { range: { start: 100, end: 130, line: 10 }, skip: 0, take: Infinity },
        ],
        size: 130,
        firstLine: 0,
      },
      { pieces: [{ range: { start: 130, end: 200, line: 13 }, skip: 0, take: Infinity }], size: 70, firstLine: 13 },
    ]);
  });
  it('a head not cut: both stripes read the range, counting its head rows', () => {
    const stripes = stripesOf(ranges, [head({}), head({ rows: 3, bytes: 30, nextLine: 13 })]);
    expect(stripes.map((s) => s.pieces)).toEqual([
      [
        { range: ranges[0], skip: 0, take: Infinity },
        { range: ranges[1], skip: 0, take: 3 },
      ],
      [{ range: ranges[1], skip: 3, take: Infinity }],
    ]);
    // The stripe after starts at the first row past the head, by its line, whether or not the head was cut.
    expect(stripes.map((s) => s.firstLine)).toEqual([0, 13]);
  });
});

describe('openStripedRead with cut heads', () => {
  it('reads every row once, with its line and cells, as the whole-file reader does', async () => {
    const rows: string[] = ['pk,sk,note'];
    for (let k = 0; k < 40; k++) {
      for (let i = 0; i < 3 + (k % 7); i++) rows.push(`k${String(k).padStart(3, '0')},${i},${i % 3 === 0 ? '"two\r\nlines, quoted"' : `plain ${k}`}`);
      if (k % 5 === 0) rows.push('');
    }
    // Line breaks vary by row: LF, CRLF, a lone CR.
    const text = rows.map((row, i) => row + ['\n', '\r\n', '\r'][i % 3]).join('');
    const path = file(text);
    const whole: SourceRecord[] = [];
    for await (const r of readCsv(Readable.from([Buffer.from(text)]), 'in.csv', { delimiter: ',', columns: undefined })) whole.push(r);
    const striped = await openStripedRead({
      path,
      file: 'in.csv',
      size: Buffer.byteLength(text),
      how,
      parts: 8,
      probe: (r) => (r.kind === 'csv' ? r.cells['pk'] : undefined),
    });
    expect(striped).toBeDefined();
    expect(striped!.parts).toBeGreaterThan(2);
    const read: SourceRecord[] = [];
    for await (const r of striped!.records) read.push(r);
    striped!.close();
    const view = (r: SourceRecord) => [r.origin.line, r.kind === 'csv' ? { ...r.cells } : r.kind];
    expect(read.map(view).sort((a, b) => (a[0] as number) - (b[0] as number))).toEqual(whole.map(view));
  });
});
