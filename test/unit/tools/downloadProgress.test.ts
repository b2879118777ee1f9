import { describe, expect, it } from 'vitest';
import { downloadProgress } from '../../../tools/downloadProgress.js';
import { OWN_DYNAMODB_LOCAL, SIMULATOR_TARBALL_BYTES } from '../../../tools/dynamodbLocal.js';

const MB = 1024 * 1024;

/** A progress display over a fake clock and output. */
function harness(tty: boolean) {
  let t = 0;
  const written: string[] = [];
  const progress = downloadProgress('Downloading DynamoDB Local', 40 * MB, { tty, write: (text) => void written.push(text) }, () => t);
  return { progress, written, at: (ms: number) => (t = ms) };
}

describe("DynamoDB Local's download progress", () => {
  it('on a terminal: one line redrawn in place, at most every 250 ms, ended by done()', () => {
    const { progress, written, at } = harness(true);
    at(1000);
    progress.update(10 * MB);
    at(1100);
    progress.update(11 * MB);
    at(1300);
    progress.update(12 * MB);
    progress.update(12 * MB);
    at(3000);
    progress.update(40 * MB);
    progress.done();
    expect(written).toEqual([
      '\rDownloading DynamoDB Local: 10.0 of 40.0 MB (25%), 1 s\x1b[K',
      '\rDownloading DynamoDB Local: 12.0 of 40.0 MB (30%), 1 s\x1b[K',
      '\rDownloading DynamoDB Local: 40.0 of 40.0 MB (100%), 3 s\x1b[K',
      '\n',
    ]);
  });

  it('in a log (not a terminal): a line per quarter reached, whatever the number of polls', () => {
    const { progress, written, at } = harness(false);
    for (let mb = 1; mb <= 40; mb++) {
      at(mb * 100);
      progress.update(mb * MB);
    }
    progress.done();
    expect(written).toEqual([
      'Downloading DynamoDB Local: 10.0 of 40.0 MB (25%), 1 s\n',
      'Downloading DynamoDB Local: 20.0 of 40.0 MB (50%), 2 s\n',
      'Downloading DynamoDB Local: 30.0 of 40.0 MB (75%), 3 s\n',
      'Downloading DynamoDB Local: 40.0 of 40.0 MB (100%), 4 s\n',
    ]);
  });

  it('nothing received, nothing drawn; the pinned tarball size is what the total says', () => {
    const { progress, written } = harness(true);
    progress.done();
    expect(written).toEqual([]);
    expect(SIMULATOR_TARBALL_BYTES / MB).toBeCloseTo(54, 0);
  });

  it('the demo ends by saying how to run a DynamoDB Local of your own, with the real command', () => {
    expect(OWN_DYNAMODB_LOCAL.join('\n')).toContain('npx tsx tools/dynamodbLocal.ts start');
    expect(OWN_DYNAMODB_LOCAL.join('\n')).toContain('--endpoint-url <endpoint>');
  });
});
