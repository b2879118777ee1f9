/**
 * The committed zstd files the tests read instead of compressing (test/support/formatFixtures.ts): each is
 * one frame with the content checksum, as the zstd command writes it, and decodes to an input whose
 * SHA-256 is the file's name, so a file edited, cut or left from an older input fails here first.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { decompress as fzstdDecompress } from 'fzstd';
import { describe, expect, it } from 'vitest';
import { ZstdFrameScanner, type ZstdFrameHeader } from '../../../src/reading/zstdFrames.js';
import { zstd, zstdFixtureName, zstdFixturesDir } from '../../support/formatFixtures.js';

const names = readdirSync(zstdFixturesDir()).sort();

describe('committed zstd fixtures', () => {
  it('there are some, and nothing else is in their folder', () => {
    expect(names.length).toBeGreaterThan(0);
    expect(names.filter((name) => !/^[0-9a-f]{16}\.zst$/.test(name))).toEqual([]);
  });

  it.each(names)('%s is one checksummed frame of the input its name is the hash of', (name) => {
    const bytes = readFileSync(join(zstdFixturesDir(), name));
    const headers: ZstdFrameHeader[] = [];
    new ZstdFrameScanner({ start: (h) => headers.push(h), bytes: () => undefined, end: () => undefined }).push(bytes);
    expect(headers).toHaveLength(1);
    expect(headers[0]!.checksum).toBe(true);
    const input = Buffer.from(fzstdDecompress(new Uint8Array(bytes)));
    expect(zstdFixtureName(input)).toBe(name);
    expect(zstd(input).equals(bytes)).toBe(true);
  });

  it('an input with no committed file fails, saying how to make one', () => {
    // Also when the fixtures are being remade (scripts/makeFormatFixtures.sh runs this file): no file for it.
    const writing = process.env['DDB_SPREAD_WRITE_FIXTURES'];
    delete process.env['DDB_SPREAD_WRITE_FIXTURES'];
    try {
      expect(() => zstd(`no fixture is made for this text ${'x'.repeat(40)}`)).toThrow(/DDB_SPREAD_WRITE_FIXTURES=1/);
    } finally {
      if (writing !== undefined) process.env['DDB_SPREAD_WRITE_FIXTURES'] = writing;
    }
  });
});
