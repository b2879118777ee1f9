/**
 * Unattended runs (issue 6): progress lines without a terminal, as text or JSON lines, and --report.
 * The progress display is tested for content, not appearance.
 */
import type { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { spawn } from 'node:child_process';
import { mkdtemp, readFile, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { createTable, deleteTable, localClient } from '../support/ddb.js';
import { localEnv } from '../support/env.js';

const endpoint = inject('ddbEndpoint');
const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const BIN = join(ROOT, 'bin', 'ddb-spread.js');
const ORDERS = join(ROOT, 'samples', 'orders.csv');
const TYPES = ['--types', 'total:N,gift:BOOL,items:JSON'];
const KEYS = { partitionKey: { name: 'customerId', type: 'S' as const }, sortKey: { name: 'orderId', type: 'S' as const } };

let client: DynamoDBClient;
let dir: string;
const tables: string[] = [];

beforeAll(async () => {
  client = localClient(endpoint);
  dir = await mkdtemp(join(tmpdir(), 'ddb-spread-logs-'));
});

afterAll(async () => {
  for (const table of tables) await deleteTable(client, table).catch(() => undefined);
  client?.destroy();
  if (dir) await rm(dir, { recursive: true, force: true });
});

function cli(args: string[]): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [BIN, ...args], { cwd: dir, env: localEnv(endpoint), stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (s: string) => (stdout += s));
    child.stderr.setEncoding('utf8').on('data', (s: string) => (stderr += s));
    const guard = setTimeout(() => child.kill('SIGKILL'), 45_000);
    child.on('error', reject);
    child.on('close', (code) => {
      clearTimeout(guard);
      resolve({ code, stdout, stderr });
    });
  });
}

async function table(): Promise<string> {
  const name = await createTable(client, KEYS);
  tables.push(name);
  return name;
}

describe('logs without a terminal', () => {
  it('--log-format json: every stderr line is a JSON object; progress lines carry the counters, rate and ETA; the summary is the last', async () => {
    // 256 rows at 100 WCU/s: about 2.6 s, so a 1 s interval gives progress lines.
    const { code, stderr } = await cli(['load', ORDERS, '--table', await table(), ...TYPES, '--wcu', '100', '--log-interval', '1', '--log-format', 'json']);
    expect(code, stderr).toBe(0);
    const lines = stderr.split('\n').filter((l) => l.trim() !== '' && !/NodeVersion|versions published|node >=22|To continue|security updates|More information|trace-warnings/.test(l));
    const objects = lines.map((l) => JSON.parse(l) as Record<string, unknown>);
    for (const o of objects) expect(typeof o['time']).toBe('string');
    expect(objects[0]).toMatchObject({ type: 'rate', targetWcu: 100, keyWcu: 1000 });
    const progress = objects.filter((o) => o['type'] === 'progress');
    expect(progress.length).toBeGreaterThanOrEqual(1);
    expect(progress.length).toBeLessThanOrEqual(4);
    for (const p of progress) {
      expect(p).toMatchObject({ targetWcu: 100 });
      expect(p['rowsRead']).toBeGreaterThan(0);
      expect(p['written']).toBeGreaterThan(0);
      expect(p['written'] as number).toBeLessThan(256);
      expect(p['percent']).toBe(100);
      expect(typeof p['etaS']).toBe('number');
      expect(p['wcuPerSecond'] as number).toBeLessThanOrEqual(130);
    }
    expect(objects.at(-1)).toMatchObject({ type: 'summary', rowsRead: 256, written: 256, complete: true });
  });

  it('text progress lines every --log-interval; --quiet has none; --report writes the summary with the input fingerprint', async () => {
    const report = join(dir, 'run.json');
    const run = await cli(['load', ORDERS, '--table', await table(), ...TYPES, '--wcu', '100', '--log-interval', '1', '--report', report]);
    expect(run.code, run.stderr).toBe(0);
    expect(run.stderr).toMatch(/^ddb-spread: progress: 256 rows read \(100\.0%\), \d+ written, \d+ items\/s, \d+ \/ 100 WCU\/s, throttled 0, retries 0, rejected 0, elapsed \ds, ETA \ds$/m);
    const saved = JSON.parse(await readFile(report, 'utf8')) as Record<string, unknown>;
    const input = saved['inputFingerprint'] as Record<string, unknown>;
    expect(saved).toMatchObject({ reportVersion: 1, rowsRead: 256, written: 256, complete: true, rejectedByReason: {} });
    expect(input).toMatchObject({ path: ORDERS, size: (await stat(ORDERS)).size });
    expect(input['edgesSha256']).toMatch(/^[0-9a-f]{64}$/);
    expect(Date.parse(saved['finishedAt'] as string)).toBeGreaterThanOrEqual(Date.parse(saved['startedAt'] as string));
    expect(saved['rate']).toMatchObject({ targetWcu: 100 });

    const quiet = await cli(['load', ORDERS, '--table', await table(), ...TYPES, '--wcu', '100', '--log-interval', '1', '--quiet']);
    expect(quiet.code).toBe(0);
    expect(quiet.stderr).not.toContain('progress:');
    expect(quiet.stderr).toContain('rows read     256');
  });
});
