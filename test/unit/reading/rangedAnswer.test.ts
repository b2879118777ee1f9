import { describe, expect, it } from 'vitest';
import { bytesToSkip, parseContentRange } from '../../../src/reading/rangedAnswer.js';

describe('bytesToSkip: a GET answer checked against the offset asked and the pinned size', () => {
  const size = 1000;
  it.each([
    ['first GET, 200 with the whole object', { status: 200, contentRange: undefined, contentLength: 1000 }, 0, { skip: 0 }],
    ['resumed GET, 206 from the byte asked', { status: 206, contentRange: 'bytes 400-999/1000', contentLength: 600 }, 400, { skip: 0 }],
    [
      'resumed GET, 200 with the whole object: the bytes already delivered are dropped',
      { status: 200, contentRange: undefined, contentLength: 1000 },
      400,
      { skip: 400 },
    ],
    ['206 with an unknown total', { status: 206, contentRange: 'bytes 400-999/*', contentLength: 600 }, 400, { skip: 0 }],
  ])('%s', (_, answer, offset, expected) => {
    expect(bytesToSkip(answer, offset, size)).toEqual(expected);
  });

  it.each([
    [
      '206 from byte 0 to a read from 400',
      { status: 206, contentRange: 'bytes 0-999/1000', contentLength: 1000 },
      400,
      false,
      /from byte 400 with bytes 0-999/,
    ],
    ['206 past the byte asked (a gap)', { status: 206, contentRange: 'bytes 500-999/1000', contentLength: 500 }, 400, false, /bytes 500-999/],
    ['206 of another size', { status: 206, contentRange: 'bytes 400-1199/1200', contentLength: 800 }, 400, true, /1200 bytes now, 1000 when listed/],
    ['206 without Content-Range', { status: 206, contentRange: undefined, contentLength: 600 }, 400, false, /no Content-Range/],
    ['200 of another size', { status: 200, contentRange: undefined, contentLength: 900 }, 400, true, /900 bytes now/],
    ['first GET, 200 of another size', { status: 200, contentRange: undefined, contentLength: 1001 }, 0, true, /1001 bytes now/],
  ])('refused: %s', (_, answer, offset, changed, message) => {
    const checked = bytesToSkip(answer, offset, size);
    expect(checked).toMatchObject({ changed });
    expect('refused' in checked && checked.refused).toMatch(message);
  });

  it('parseContentRange reads bytes first-last/total, and nothing else', () => {
    expect(parseContentRange('bytes 5-9/10')).toEqual({ first: 5, last: 9, total: 10 });
    expect(parseContentRange('bytes 5-9/*')).toEqual({ first: 5, last: 9, total: undefined });
    expect(parseContentRange('bytes */10')).toBeUndefined();
    expect(parseContentRange('items 5-9/10')).toBeUndefined();
  });
});
