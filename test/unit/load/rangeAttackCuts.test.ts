/**
 * Attack on a part cut into byte ranges (rangeCuts.ts): small awkward files cut for 2 to 40 workers, so
 * that the cuts land on nearly every byte: the LF of a CRLF, a lone CR, inside a multi-byte UTF-8
 * character, inside a "" escaped quote, inside a BOM's bytes' neighbourhood, in a record longer than many
 * segments, in trailing blank lines, at a file's missing final line break. Read range by range, the
 * workers must hand on exactly the records (text and line) a read of the whole file does, and the ranges
 * must tile the file. Also: --delimiter ';', .tsv, --columns (no header row), --input-format jsonl on a
 * .txt name. Real files, every worker in this process.
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { rangeShare } from '../../../src/load/rangeCuts.js';
import { divisionOf, type Share } from '../../../src/load/shares.js';
import type { InputFormat } from '../../../src/reading/inputFormat.js';
import { listInputs, type InputSet } from '../../../src/reading/inputSet.js';
import { readInputSet } from '../../../src/reading/readInputSet.js';

let dir = '';
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'range-attack-'));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

const noS3 = () => Promise.reject(new Error('no S3 here'));

interface ReadOpts {
  delimiter?: string;
  columns?: string[];
  inputFormat?: InputFormat;
}

async function records(set: InputSet, o: ReadOpts): Promise<string[]> {
  const input = readInputSet(set, { format: o.inputFormat, csv: { delimiter: o.delimiter, columns: o.columns } });
  const out: string[] = [];
  try {
    // The record as parsed too (a CSV row's cells by column name, a JSON line's value): the columns a range gets are its header's.
    for await (const r of input.records) out.push(`${r.origin.line}:${r.origin.raw}:${JSON.stringify({ ...r, origin: undefined })}`);
  } finally {
    input.close();
  }
  return out;
}

async function cut(set: InputSet, workers: number, listing: string, o: ReadOpts, listedAt = '2026-11-28T12:00:00.000Z'): Promise<Share[]> {
  const division = divisionOf(set, { segment: { index: 0, count: workers }, partsDisjoint: true, inputFormat: o.inputFormat });
  expect(division?.by).toBe('ranges');
  return Promise.all(
    Array.from({ length: workers }, (_, index) =>
      rangeShare(set, division!, {
        listing,
        listedAt,
        segment: { index, count: workers },
        s3: noS3,
        delimiter: o.delimiter,
        inputFormat: o.inputFormat,
        minRangeBytes: 1,
        pollMs: 2,
        waitMs: 10_000,
        warn: () => undefined,
        stopping: () => false,
      }),
    ),
  );
}

const multi = 'é€😀';
const cases: [string, string, ReadOpts][] = [
  ['crlf-bom.csv', `\ufeffpk,sk,note\r\na,1,"x""y""\r\nz"\r\nb,2,${multi}\r\n\r\nc,3,"${multi}""${multi}"\r\nd,4,e`, {}],
  ['lone-cr.csv', `pk,sk,note\ra,1,"one\rtwo"\rb,2,${multi}\r\rc,3,"""q"""\rd,4,last\r`, {}],
  ['blank-tail.csv', `pk,sk,note\na,1,x\nb,2,"y\n\nz"\nc,3,${multi}\n\n\n\n`, {}],
  ['semi.csv', `pk;sk;note\na;1;"x;y\nz"\nb;2;a,b\nc;3;"${multi};"\nd;4;e\n`, { delimiter: ';' }],
  ['tabs.tsv', `pk\tsk\tnote\na\t1\t"x\ty\nz"\nb\t2\t${multi}\nc\t3\t""\nd\t4\te\n`, {}],
  ['nohead.csv', `a,1,"x\r\ny"\r\nb,2,${multi}\r\nc,3,"q""\nq"\r\nd,4,e`, { columns: ['pk', 'sk', 'note'] }],
  ['nohead-bom.csv', `\ufeffa,1,"x\ny"\nb,2,${multi}\n\nc,3,z\n`, { columns: ['pk', 'sk', 'note'] }],
  ['loose-quotes.csv', `pk,sk,note\na,1,x"y\nb,2,"x"y,z\nc,3,"p""q"r\n"\nd,4,""\ne,5,"\r\n"x\r\nf,6,z`, {}],
  ['odd-header.csv', `pk,sk,__proto__,constructor, sp ,"q""h"\na,1,x,y,z,w\nb,2,"p\nq",,,\nc,3,${multi},1,2,3\n`, {}],
  ['blank-head.csv', `\n\r\n\n\n\n\n\npk,sk,note\na,1,x\nb,2,"y\nz"\nc,3,w\n`, {}],
  ['blank-head-bom.csv', `\ufeff\r\n\r\n\r\n"p\nk",sk,note\r\na,1,x\r\n\r\nb,2,"y\r\nz"\r\nc,3,w`, {}],
  ['blank-nohead.csv', `\n\n\n\n\n\na,1,x\nb,2,"y\nz"\nc,3,w\n`, { columns: ['pk', 'sk', 'note'] }],
  ['header-quoted.csv', `"p\nk",sk,note\na,1,x\nb,2,"${multi}\n"\nc,3,z\n`, {}],
  ['header-only.csv', `\ufeffpk,sk,"note\r\nmore"\r\n`, {}],
  ['rows.jsonl', `{"pk":"a","n":"${multi}"}\r\n\r\n{"pk":"b",\r"n":"x\\ny"}\r\n{"pk":"c"}\n\n{"pk":"d","n":"${multi}${multi}"}`, {}],
  ['rows.txt', `\ufeff{"pk":"a"}\n{"pk":"b","n":"${multi}"}\r\n{"pk":"c"}\n\n\n`, { inputFormat: 'jsonl' }],
];

describe('cuts on awkward bytes', () => {
  it.each(cases)('%s: every record once, in order, with its line, for 2 to 40 workers', async (name, text, o) => {
    const path = join(dir, name);
    await writeFile(path, text);
    const set = await listInputs([path], { stdin: Readable.from([]), s3: noS3, outputs: [] });
    const whole = await records(set, o);
    const size = set.parts[0]!.part.size!;
    for (let workers = 2; workers <= 40; workers++) {
      const listing = join(dir, `${name}-${workers}.listing.json`);
      const shares = await cut(set, workers, listing, o);
      const parts = shares.flatMap((s) => s.parts);
      expect(parts[0]!.range!.start).toBe(0);
      for (let i = 1; i < parts.length; i++) expect(parts[i]!.range!.start, `${workers} workers`).toBe(parts[i - 1]!.range!.end);
      expect(parts.at(-1)!.range!.end).toBe(size);
      const read: string[] = [];
      for (const share of shares) read.push(...(await records({ ...set, parts: share.parts, totalBytes: share.bytes }, o)));
      expect(read, `${workers} workers`).toEqual(whole);
    }
  });

  it('a quoted field longer than many segments: the segments inside it have no range, the one before reads it whole', async () => {
    const path = join(dir, 'long.csv');
    const long = `"${'ab""\r\n,'.repeat(700)}"`;
    await writeFile(path, `pk,sk,note\na,1,x\nb,2,${long}\nc,3,y\nd,4,${long}\ne,5,z\n`);
    const set = await listInputs([path], { stdin: Readable.from([]), s3: noS3, outputs: [] });
    const whole = await records(set, {});
    expect(whole).toHaveLength(5);
    for (const workers of [2, 3, 5, 8, 13, 21]) {
      const shares = await cut(set, workers, join(dir, `long-${workers}.listing.json`), {});
      const read: string[] = [];
      for (const share of shares) read.push(...(await records({ ...set, parts: share.parts, totalBytes: share.bytes }, {})));
      expect(read).toEqual(whole);
      expect(shares.reduce((n, s) => n + s.bytes, 0)).toBe(set.parts[0]!.part.size);
    }
  });
});

describe('a worker with two ranges of one file, resumed in the second', () => {
  it('counts the first range as read, not the whole file: its bytes read never pass its share', async () => {
    const path = join(dir, 'two.csv');
    let text = 'pk,sk,note\n';
    for (let i = 0; i < 400; i++) text += `k${i},${i},"note\n${i}"\n`;
    await writeFile(path, text);
    const set = await listInputs([path], { stdin: Readable.from([]), s3: noS3, outputs: [] });
    const shares = await cut(set, 2, join(dir, 'two.listing.json'), {});
    // One worker's share as dealt when it holds both ranges of the file (several files for more workers).
    const both = { ...set, parts: shares.flatMap((s) => s.parts), totalBytes: set.parts[0]!.part.size! };
    const second = both.parts[1]!.range!;
    // A resume at the second range's start: the first is not opened again, and counts as its own bytes.
    const from = { at: { part: 1, row: 0, line: second.line, offset: second.start }, skipToLine: () => Promise.reject(new Error('not skipped to')) };
    const resumed = readInputSet(both, { format: undefined, csv: { delimiter: undefined, columns: undefined }, from });
    let n = 0;
    for await (const _ of resumed.records) n++;
    expect(n).toBeGreaterThan(100);
    expect(resumed.bytesRead()).toBe(both.totalBytes);
  });
});

describe('scan documents left by an earlier load at the same --listing path', () => {
  it('a file rewritten at the same size and listed anew is cut from its own bytes, not from the old scans', async () => {
    const path = join(dir, 'again.csv');
    let quoted = 'pk,sk,note\n';
    for (let i = 0; i < 300; i++) quoted += `k${i},${i},${i % 2 === 0 ? `"two\nlines ${i}"` : `plain ${i}`}\n`;
    // The same size, no quotes: every line break ends a record there, not in the file as rewritten.
    const plain = quoted.replaceAll('"', "'");
    const listing = join(dir, 'again.listing.json');
    await writeFile(path, plain);
    const first = await listInputs([path], { stdin: Readable.from([]), s3: noS3, outputs: [] });
    await cut(first, 4, listing, {}, '2026-11-28T10:00:00.000Z');
    // The user starts over as told: listing and checkpoints removed (the scans beside the listing stay).
    await writeFile(path, quoted);
    const set = await listInputs([path], { stdin: Readable.from([]), s3: noS3, outputs: [] });
    expect(set.parts[0]!.part.size).toBe(first.parts[0]!.part.size);
    const whole = await records(set, {});
    const shares = await cut(set, 4, listing, {}, '2026-11-28T11:00:00.000Z');
    const read: string[] = [];
    for (const share of shares) read.push(...(await records({ ...set, parts: share.parts, totalBytes: share.bytes }, {})));
    expect(read).toEqual(whole);
  });
});

describe('several files for more workers: ranges dealt by size', () => {
  it('every record of every file once, with its file and line, whichever worker holds which ranges', async () => {
    const names = ['m1.csv', 'm2.csv', 'm3.jsonl'];
    const text = (name: string) => cases.find((c) => c[0] === name)![1];
    const texts = [text('crlf-bom.csv').repeat(3), text('lone-cr.csv'), text('rows.jsonl').repeat(2)];
    const paths = names.map((n) => join(dir, n));
    await Promise.all(paths.map((p, i) => writeFile(p, texts[i]!)));
    const set = await listInputs(paths, { stdin: Readable.from([]), s3: noS3, outputs: [] });
    const key = (r: string, file: string) => `${file}|${r}`;
    const whole: string[] = [];
    for (const listed of set.parts) whole.push(...(await records({ ...set, parts: [listed] }, {})).map((r) => key(r, listed.part.name)));
    for (let workers = 4; workers <= 16; workers++) {
      const shares = await cut(set, workers, join(dir, `multi-${workers}.listing.json`), {});
      const ranges = shares
        .flatMap((s) => s.parts)
        .sort(
          (a, b) =>
            set.parts.indexOf(set.parts.find((p) => p.part.name === a.part.name)!) - set.parts.indexOf(set.parts.find((p) => p.part.name === b.part.name)!) ||
            a.range!.start - b.range!.start,
        );
      const read: string[] = [];
      for (const listed of ranges) read.push(...(await records({ ...set, parts: [listed] }, {})).map((r) => key(r, listed.part.name)));
      expect(read, `${workers} workers`).toEqual(whole);
      // And each worker's share read as one input (its ranges in its order) hands on the same records.
      const byShare: string[] = [];
      for (const share of shares) {
        const input = readInputSet(
          { ...set, parts: share.parts, totalBytes: share.bytes },
          { format: undefined, csv: { delimiter: undefined, columns: undefined } },
        );
        for await (const r of input.records)
          byShare.push(key(`${r.origin.line}:${r.origin.raw}:${JSON.stringify({ ...r, origin: undefined })}`, r.origin.file));
        input.close();
      }
      expect(byShare.sort(), `${workers} workers`).toEqual([...whole].sort());
    }
  });
});
