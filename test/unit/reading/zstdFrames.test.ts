/**
 * A damaged zstd frame must fail, not decode to other rows: fzstd checks neither a frame's content checksum nor its content size, so
 * a flipped byte decoded to other rows without an error. ZstdFrameScanner finds each frame in the
 * compressed bytes; fzstdTransform decodes it and checks both at its end. Frames here are made by hand
 * (raw and RLE blocks, RFC 8878) so each header field can be set; real encoder output is in formats.test.ts
 * and corruptCompressed.test.ts.
 */
import { Readable } from 'node:stream';
import xxhash from 'xxhash-wasm';
import { describe, expect, it } from 'vitest';
import { fzstdTransform } from '../../../src/reading/decompress.js';
import { ZstdFrameScanner, type ZstdFrameHeader } from '../../../src/reading/zstdFrames.js';
import { zstd } from '../../support/formatFixtures.js';

const { h64Raw } = await xxhash();

interface FrameOptions {
  checksum?: boolean | number;
  contentSize?: number;
  dictionaryId?: number;
}

/** A zstd frame of raw blocks (at most 1000 bytes each) holding `content`. */
function frame(content: string, options: FrameOptions = {}): Buffer {
  const body = Buffer.from(content);
  const fcsFlag = options.contentSize === undefined ? 0 : 2;
  const dictFlag = options.dictionaryId === undefined ? 0 : 1;
  const header = [0x28, 0xb5, 0x2f, 0xfd, (fcsFlag << 6) | (options.checksum !== undefined && options.checksum !== false ? 4 : 0) | dictFlag, 0x00];
  if (dictFlag) header.push(options.dictionaryId!);
  const parts: Buffer[] = [Buffer.from(header)];
  if (fcsFlag) {
    const fcs = Buffer.alloc(4);
    fcs.writeUInt32LE(options.contentSize!);
    parts.push(fcs);
  }
  for (let at = 0; at === 0 || at < body.length; at += 1000) {
    const block = body.subarray(at, at + 1000);
    const last = at + 1000 >= body.length ? 1 : 0;
    const value = (block.length << 3) | last;
    parts.push(Buffer.from([value & 0xff, (value >> 8) & 0xff, (value >> 16) & 0xff]), block);
  }
  if (options.checksum !== undefined && options.checksum !== false) {
    const sum = Buffer.alloc(4);
    sum.writeUInt32LE(typeof options.checksum === 'number' ? options.checksum : Number(h64Raw(new Uint8Array(body)) & 0xffffffffn));
    parts.push(sum);
  }
  return Buffer.concat(parts);
}

function skippable(payload: Buffer): Buffer {
  const head = Buffer.alloc(8);
  head.writeUInt32LE(0x184d2a53, 0);
  head.writeUInt32LE(payload.length, 4);
  return Buffer.concat([head, payload]);
}

/** The bytes fzstdTransform gives for `input` fed in chunks of `chunk` bytes, or the error it ends with. */
async function decode(input: Buffer, chunk = 64 * 1024): Promise<string | Error> {
  const pieces: Buffer[] = [];
  for (let at = 0; at < input.length; at += chunk) pieces.push(input.subarray(at, at + chunk));
  const out: Buffer[] = [];
  try {
    for await (const part of Readable.from(pieces).pipe(fzstdTransform())) out.push(part as Buffer);
    return Buffer.concat(out).toString();
  } catch (error) {
    return error as Error;
  }
}

const text = Array.from({ length: 300 }, (_, i) => `r${i},${i}\n`).join('');

describe('zstd frames are checked as a whole', () => {
  it('frames with a checksum, a content size, both or neither, and skippable frames between them, decode in order whatever the chunking', async () => {
    const input = Buffer.concat([
      skippable(Buffer.from('meta')),
      frame(text, { checksum: true }),
      frame('b,1\n', { contentSize: 4 }),
      skippable(Buffer.alloc(0)),
      frame('c,2\n', { checksum: true, contentSize: 4 }),
      frame('d,3\n'),
      frame(''),
    ]);
    for (const chunk of [1, 2, 3, 7, 1000, input.length]) expect(await decode(input, chunk), `chunks of ${chunk}`).toBe(`${text}b,1\nc,2\nd,3\n`);
  });

  it('a frame whose content does not hash to its checksum fails, though fzstd decodes it without an error', async () => {
    const good = frame(text, { checksum: true });
    const bad = Buffer.from(good);
    bad[500]! ^= 0x01; // inside the first raw block: the content changes, the structure does not
    const error = await decode(bad);
    expect(error).toBeInstanceOf(Error);
    expect((error as Error).message).toBe('zstd data is corrupt or truncated (the content of frame 1 does not match its checksum)');
    const wrongSum = Buffer.concat([frame('a,1\n'), frame('b,2\n', { checksum: 0x12345678 })]);
    expect(((await decode(wrongSum, 3)) as Error).message).toMatch(/frame 2 does not match its checksum/);
  });

  it('a frame that decodes to more or fewer bytes than its header says fails', async () => {
    expect(((await decode(frame('abcd', { contentSize: 5 }))) as Error).message).toMatch(/frame 1 decodes to 4 bytes, its header says 5/);
    expect(((await decode(frame('abcd', { contentSize: 3, checksum: true }))) as Error).message).toMatch(/frame 1 decodes to 4 bytes, its header says 3/);
  });

  it('a frame that needs a dictionary is refused (fzstd would decode it without one)', async () => {
    expect(((await decode(frame('abcd', { dictionaryId: 7 }))) as Error).message).toMatch(/frame 1 needs zstd dictionary 7/);
  });

  it('bytes after the last frame that are not a frame, or a frame cut short, fail', async () => {
    const whole = frame(text, { checksum: true });
    expect(((await decode(Buffer.concat([whole, Buffer.from('xyzw')]))) as Error).message).toMatch(/frame 2 does not start with zstd's magic number/);
    expect(((await decode(Buffer.concat([whole, Buffer.from([0x28, 0xb5])]))) as Error).message).toMatch(/ends after the last frame/);
    for (const cut of [5, 6, 9, 600, whole.length - 4, whole.length - 1])
      expect(((await decode(whole.subarray(0, cut))) as Error).message, `cut at ${cut}`).toMatch(/corrupt or truncated \(the input ends inside frame 1\)/);
    expect(((await decode(skippable(Buffer.alloc(10)).subarray(0, 12))) as Error).message).toMatch(/inside a skippable frame/);
  });

  it('an encoder-made file (content checksum on, as the zstd command writes) decodes, and its checksum is seen', async () => {
    const headers: ZstdFrameHeader[] = [];
    const sums: (number | undefined)[] = [];
    const made = zstd(text);
    new ZstdFrameScanner({ start: (h) => headers.push(h), bytes: () => undefined, end: (sum) => sums.push(sum) }).push(made);
    expect(headers).toHaveLength(1);
    expect(headers[0]!.checksum).toBe(true);
    expect(sums[0]).toBe(Number(h64Raw(new Uint8Array(Buffer.from(text))) & 0xffffffffn));
    expect(await decode(made, 5)).toBe(text);
  });
});
