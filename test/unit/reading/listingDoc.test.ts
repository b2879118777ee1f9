import { describe, expect, it } from 'vitest';
import { mayBeOwnByContent, ownFileByContent } from '../../../src/reading/listing.js';
import { htmlReport } from '../../../src/reporting/htmlReport.js';
import { inputsMismatch, listingText, parseListing, segmentsMismatch, type ListingDoc } from '../../../src/reading/listingDoc.js';

const doc: ListingDoc = {
  format: 'ddb-spread-listing',
  version: 1,
  inputs: ['s3://b/in/', 'local/d'],
  listedAt: '2026-11-26T00:00:00.000Z',
  parts: [
    { name: 's3://b/in/a.csv', size: 10, etag: '"e1"' },
    { name: 'local/d/x_y.csv', size: 0, path: 'local/d/x_y.csv', mtimeMs: 1.5 },
    { name: 's3://b/exp/data/1.json.gz', size: 3, etag: '"e2"', format: 'export-full', expected: { items: 2, md5: 'ab' } },
  ],
  exports: [
    {
      name: 's3://b/exp',
      items: 2,
      parts: 1,
      manifest: { name: 's3://b/exp', type: 'FULL_EXPORT', tableArn: 'arn:aws:dynamodb:us-east-1:1:table/T', exportTime: 1, fromTime: 2, toTime: 3 },
    },
  ],
  notes: ['s3://b holds 1 DynamoDB export'],
  skipped: [{ name: 'local/d/_SUCCESS', reason: 'marker', detail: 'a marker' }],
};

describe('listing document', () => {
  it('round-trips through its text, one part a line', () => {
    const text = listingText(doc);
    expect(parseListing(text, 'l.json')).toEqual(doc);
    expect(text.split('\n').filter((l) => l.includes('"name":"')).length).toBe(3);
  });

  it.each([
    ['not JSON', '{'],
    ['another file', JSON.stringify({ format: 'x' })],
    ['a later version', JSON.stringify({ ...doc, version: 2 })],
    ['no parts', JSON.stringify({ ...doc, parts: [] })],
    ['an S3 part without ETag', JSON.stringify({ ...doc, parts: [{ name: 's3://b/k', size: 1 }] })],
    ['a local part without its time', JSON.stringify({ ...doc, parts: [{ name: 'a.csv', size: 1, path: 'a.csv' }] })],
    ['a negative size', JSON.stringify({ ...doc, parts: [{ name: 'a.csv', size: -1, path: 'a.csv', mtimeMs: 1 }] })],
    ['a count of workers that is not one', JSON.stringify({ ...doc, segments: 0 })],
    ['a division that is neither by part nor by key', JSON.stringify({ ...doc, division: 'rows' })],
  ])('refuses %s, naming the file and what to do', (_why, text) => {
    expect(() => parseListing(text, 'shared/l.json')).toThrow(/--listing shared\/l\.json is not a listing ddb-spread wrote .*remove it/);
  });

  it('refuses a listing changed since it was written (a part taken out, a size changed), and says to start over; spacing and a listing of before the digest are no change', () => {
    const text = listingText(doc);
    const dropped = text.replace(/\n {4}\{[^\n]*"local\/d\/x_y\.csv"[^\n]*,/, '');
    expect(dropped).not.toBe(text);
    expect(() => parseListing(dropped, 'shared/l.json')).toThrow(
      /--listing shared\/l\.json was changed since it was written .*remove it and every worker's checkpoint/,
    );
    const resized = text.replace('"size":10', '"size":11');
    expect(resized).not.toBe(text);
    expect(() => parseListing(resized, 'l.json')).toThrow(/was changed since it was written/);
    expect(parseListing(JSON.stringify(JSON.parse(text)), 'l.json')).toEqual(doc);
    expect(parseListing(JSON.stringify(doc), 'l.json')).toEqual(doc);
  });

  it('a listing serves only the inputs it was made for, in their order', () => {
    expect(inputsMismatch(['a', 'b'], ['a', 'b'])).toBeUndefined();
    expect(inputsMismatch(['a', 'b'], ['b', 'a'])).toContain('"b" "a"');
    expect(inputsMismatch(['a'], ['a', 'b'])).toBeDefined();
  });

  it('a listing made by workers of one count serves only workers of that count (unknown on either side: any)', () => {
    expect(parseListing(listingText({ ...doc, segments: 4 }), 'l.json').segments).toBe(4);
    expect(parseListing(listingText({ ...doc, segments: 4, division: 'parts' }), 'l.json').division).toBe('parts');
    expect(segmentsMismatch(4, { index: 3, count: 4 })).toBeUndefined();
    expect(segmentsMismatch(4, { index: 1, count: 2 })).toContain('--segment 1/2');
    expect(segmentsMismatch(undefined, { index: 1, count: 2 })).toBeUndefined();
    expect(segmentsMismatch(4, undefined)).toBeUndefined();
  });

  it("ddb-spread's own JSON files are known by their first bytes; a user's JSON is not", () => {
    expect(ownFileByContent(listingText(doc))).toContain('--listing');
    expect(ownFileByContent('{"version":4,"status":"running","createdAt":"2026-11-26T00:00:00.000Z","input":{}}')).toContain('checkpoint');
    expect(ownFileByContent('{\n  "reportVersion": 1,\n  "ddbSpreadVersion": "0.1.0"')).toContain('--report');
    expect(ownFileByContent('{"version":4,"status":"shipped","items":[]}')).toBeUndefined();
    expect(ownFileByContent('{"pk":"a","format":"ddb-spread-listing"}')).toBeUndefined();
  });

  it('an --html-report is known by its first bytes (a folder of data may hold the page of an earlier load); other HTML is not', () => {
    expect(mayBeOwnByContent('report.html')).toBe(true);
    expect(ownFileByContent(htmlReport({ table: 'T' }).slice(0, 256))).toContain('--html-report');
    expect(ownFileByContent('<!doctype html>\n<html lang="en">\n<head>\n<meta charset="utf-8">\n<title>pk,sk</title>')).toBeUndefined();
  });
});
