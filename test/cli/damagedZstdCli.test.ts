/**
 * A damaged zstd input fails naming the file: a zstd CSV with one flipped byte loaded 10,841 of 20,000 rows and exited
 * 0: fzstd decoded the damaged block to other bytes and checked no checksum. The built CLI now ends with
 * 66, naming the file and saying it is corrupt.
 */
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { decompress as fzstdDecompress } from 'fzstd';
import { describe, expect, it } from 'vitest';
import { zstd } from '../support/formatFixtures.js';
import { localCli } from '../support/localCli.js';
import { useLocalAws } from '../support/localAws.js';

const aws = useLocalAws({ name: 'damaged-zstd', keys: { partitionKey: { name: 'pk', type: 'S' } } });
const cli = localCli(aws);

const ROWS = 20_000;
const text = `pk,qty,note\n${Array.from({ length: ROWS }, (_, i) => `k${i},${i},row ${i} of the damaged zstd file`).join('\n')}\n`;

/** The file with one byte flipped from the middle on, at the first place fzstd alone decodes to other text without an error. */
function silentlyDamaged(source: Buffer): Buffer {
  for (let offset = source.length >> 1; offset < source.length; offset++) {
    const bytes = Buffer.from(source);
    bytes[offset]! ^= 0x04;
    try {
      if (Buffer.from(fzstdDecompress(bytes)).toString() !== text) return bytes;
    } catch {
      // fzstd saw this one itself
    }
  }
  throw new Error('no flip that fzstd decodes silently');
}

describe('a damaged zstd input through the CLI', () => {
  it('one flipped byte that fzstd decodes without an error: exit 66, the file named as corrupt', async () => {
    const path = join(aws.dir(), 'flipped.csv.zst');
    await writeFile(path, silentlyDamaged(zstd(text)));
    const table = await aws.newTable();
    const run = await cli(['load', path, '--table', table, '--types', 'qty:N', '--log-format', 'json']);
    expect(run.code, run.stderr).toBe(66);
    expect(run.stderr).toContain(path);
    expect(run.stderr).toMatch(/zstd data is corrupt or truncated \(the content of frame 1 does not match its checksum\)/);
  });
});
