/**
 * An attack on the local copies of scanned segments (load/segmentCopy.ts) from the CLI: a dry run of a
 * worker over an S3 object, a worker stopped with SIGTERM mid-load and run again from its checkpoint (its
 * restart point inside the copied bytes), a worker killed with SIGKILL. The copies hold rows: private while
 * they are there, and gone from --temp-dir on every way out a process can act on.
 */
import { spawn } from 'node:child_process';
import { readdirSync, statSync } from 'node:fs';
import { mkdir, readdir } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { EXIT } from '../../src/cli/exitCodes.js';
import type { LoadResult } from '../../src/index.js';
import { batchesDone } from '../support/checkpoint.js';
import { BIN, runCli, type ProcessRun } from '../support/cli.js';
import { scanAll } from '../support/ddb.js';
import { localEnv } from '../support/env.js';
import { useLocalAws } from '../support/localAws.js';
import { newBucket, putObjects, s3Client, s3Endpoint } from '../support/s3.js';

const KEYS = { partitionKey: { name: 'pk', type: 'S' as const }, sortKey: { name: 'sk', type: 'N' as const } };
const { endpoint, client, dir, newTable } = useLocalAws({ name: 'copy-attack' });
const env = () => ({ ...localEnv(endpoint), DDB_SPREAD_TEST_RESTART_ROWS: '100', AWS_ENDPOINT_URL_S3: s3Endpoint() });
const resultOf = (r: ProcessRun) => JSON.parse(r.stdout) as LoadResult;

/** About 200 KB of CSV, CRLF, every third row with a quoted note over two lines. */
function csv(rows: number): string {
  const lines = ['pk,sk,v'];
  for (let i = 0; i < rows; i++) lines.push(i % 3 === 0 ? `p${i % 50},${i},"v ${i}\r\np${i},${i},not a row"` : `p${i % 50},${i},v ${i} ${'w'.repeat(i % 60)}`);
  return `${lines.join('\r\n')}\r\n`;
}

/** Every file and folder below `path`, with its permission bits, read while a worker runs. */
function modesBelow(path: string, seen: Map<string, number>): void {
  try {
    for (const entry of readdirSync(path, { recursive: true, encoding: 'utf8' })) {
      try {
        seen.set(entry, statSync(join(path, entry)).mode & 0o777);
      } catch {
        // Removed meanwhile.
      }
    }
  } catch {
    // Not there.
  }
}

describe('segment copies from the CLI', () => {
  it('a dry run over an S3 object, then a worker stopped by SIGTERM inside its copied bytes and run again: every row once, the copies private and gone', async () => {
    const rows = 3000;
    const s3 = s3Client();
    const bucket = await newBucket(s3);
    await putObjects(s3, bucket, { 'dump/big.csv': csv(rows) });
    const table = await newTable(KEYS);
    const temp = join(dir(), 'temp');
    await mkdir(temp);
    const args = (i: number, listing: string, more: string[] = []) => [
      'load',
      `s3://${bucket}/dump/big.csv`,
      '--table',
      table,
      '--types',
      'sk:N,v:S',
      '--segment',
      `${i}/2`,
      '--listing',
      join(dir(), listing),
      '--parts-disjoint',
      '--temp-dir',
      temp,
      '--rejects',
      join(dir(), `w${i}.rejects.jsonl`),
      '--json',
      ...more,
    ];
    // A dry run with its own listing (its scan would otherwise spare the real worker its own, and its copy).
    const dry = await runCli(args(0, 'dry.listing.json', ['--dry-run']), { cwd: dir(), env: env() });
    expect(dry.code, dry.stderr).toBe(EXIT.OK);
    expect(await readdir(temp)).toEqual([]);
    expect((await scanAll(client(), table)).length).toBe(0);
    // The estimate for 2 workers counts the object fetched once (the scanned segment copied, not fetched again).
    const estimate = await runCli(
      ['estimate', `s3://${bucket}/dump/big.csv`, '--table', table, '--types', 'sk:N,v:S', '--workers', '2', '--parts-disjoint', '--json'],
      {
        cwd: dir(),
        env: env(),
      },
    );
    expect(estimate.code, estimate.stderr).toBe(EXIT.OK);
    const plan = (JSON.parse(estimate.stdout) as { workers: { by: string; inputBytes: number; bytesReadByAll: number } }).workers;
    expect(plan.by).toBe('ranges');
    expect(plan.bytesReadByAll).toBeLessThan(plan.inputBytes * 1.05);
    expect(await readdir(temp)).toEqual([]);

    // Worker 0, paced slowly, stopped by SIGTERM after a few batches: its range is read from its copy then.
    const checkpoint = join(dir(), 'w0.checkpoint.json');
    const seen = new Map<string, number>();
    const stopped = await runCli(args(0, 'real.listing.json', ['--wcu', '100', '--checkpoint', checkpoint]), {
      cwd: dir(),
      env: env(),
      timeoutMs: 60_000,
      kill: {
        signal: 'SIGTERM',
        when: () => {
          modesBelow(temp, seen);
          return batchesDone(checkpoint) >= 3;
        },
      },
    });
    expect(stopped.code, stopped.stderr).toBe(EXIT.SIGTERM);
    // The copy was there while it ran, private, and is gone.
    const copies = [...seen.keys()].filter((name) => name.endsWith('.bytes'));
    expect(copies.length).toBeGreaterThan(0);
    for (const [name, mode] of seen) expect(mode, name).toBe(name.endsWith('.bytes') ? 0o600 : 0o700);
    expect(await readdir(temp)).toEqual([]);

    const resumed = await runCli(args(0, 'real.listing.json', ['--checkpoint', checkpoint]), { cwd: dir(), env: env(), timeoutMs: 60_000 });
    expect(resumed.code, resumed.stderr).toBe(EXIT.OK);
    expect(resumed.stderr).toMatch(/reading on from a restart point/);
    const other = await runCli(args(1, 'real.listing.json'), { cwd: dir(), env: env(), timeoutMs: 60_000 });
    expect(other.code, other.stderr).toBe(EXIT.OK);
    const worker0 = resultOf(resumed);
    // The resumed worker reads its range again from S3 (its pass is beside the listing: no scan, no copy).
    expect(worker0.division!.copiedBytes ?? 0).toBe(0);
    expect((JSON.parse(dry.stdout) as { input: { rows: number } }).input.rows).toBe(rows - resultOf(other).rowsRead);
    expect(worker0.rowsRead + resultOf(other).rowsRead).toBe(rows);
    const items = await scanAll(client(), table);
    expect(items.length).toBe(rows);
    for (const item of items) {
      const i = Number(item['sk']!.N);
      expect(item['v']!.S).toBe(i % 3 === 0 ? `v ${i}\r\np${i},${i},not a row` : `v ${i} ${'w'.repeat(i % 60)}`);
    }
    expect(await readdir(temp)).toEqual([]);
  });

  it('a second SIGTERM (quit at once) while a worker reads its range from its copy: the copy is removed all the same', async () => {
    const s3 = s3Client();
    const bucket = await newBucket(s3);
    await putObjects(s3, bucket, { 'quit.csv': csv(3000) });
    const table = await newTable(KEYS);
    const temp = join(dir(), 'quit-temp');
    await mkdir(temp);
    const checkpoint = join(dir(), 'quit.checkpoint.json');
    const child = spawn(
      process.execPath,
      [
        BIN,
        'load',
        `s3://${bucket}/quit.csv`,
        '--table',
        table,
        '--types',
        'sk:N,v:S',
        '--segment',
        '0/2',
        '--listing',
        join(dir(), 'quit.listing.json'),
        '--parts-disjoint',
        '--temp-dir',
        temp,
        '--wcu',
        '100',
        '--checkpoint',
        checkpoint,
        '--rejects',
        join(dir(), 'quit.rejects.jsonl'),
      ],
      { cwd: dir(), env: env(), stdio: ['ignore', 'ignore', 'pipe'] },
    );
    let stderr = '';
    child.stderr.setEncoding('utf8').on('data', (text: string) => (stderr += text));
    const seen = new Map<string, number>();
    const code = await new Promise<number | null>((resolve) => {
      const poll = setInterval(() => {
        modesBelow(temp, seen);
        if (batchesDone(checkpoint) < 2) return;
        clearInterval(poll);
        // Both at once: the second quits without waiting for the batches in flight.
        child.kill('SIGTERM');
        setTimeout(() => child.kill('SIGTERM'), 15);
      }, 25);
      child.on('close', (c) => {
        clearInterval(poll);
        resolve(c);
      });
    });
    expect(code, stderr).toBe(EXIT.SIGTERM);
    // It quit at once: no summary, which a graceful stop prints.
    expect(stderr).not.toMatch(/rows read/i);
    expect([...seen.keys()].some((name) => name.endsWith('.bytes'))).toBe(true);
    expect(await readdir(temp)).toEqual([]);
  });
});
