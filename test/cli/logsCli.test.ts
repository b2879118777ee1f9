/**
 * Unattended runs: progress lines without a terminal, as text or JSON lines, and --report.
 * The progress display is tested for content, not appearance.
 */
import { readFile, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { localCli } from '../support/localCli.js';
import { useLocalAws } from '../support/localAws.js';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const ORDERS = join(ROOT, 'samples', 'orders.csv');
const TYPES = ['--types', 'total:N,gift:BOOL,items:JSON'];
const KEYS = { partitionKey: { name: 'customerId', type: 'S' as const }, sortKey: { name: 'orderId', type: 'S' as const } };

const aws = useLocalAws({ name: 'logs' });
const { dir, newTable } = aws;

/** Runs `node bin/ddb-spread.js ...args` in the temp dir; a run that hangs is killed after 45 s (code null). */
const cli = localCli(aws);

const table = (): Promise<string> => newTable(KEYS);

describe('logs without a terminal', () => {
  it('--log-format json: every stderr line is a JSON object; progress lines carry the counters, rate and ETA; the summary is the last', async () => {
    // 256 rows at 100 WCU/s: about 2.6 s, so a 1 s interval gives progress lines.
    const { code, stderr } = await cli(['load', ORDERS, '--table', await table(), ...TYPES, '--wcu', '100', '--log-interval', '1', '--log-format', 'json']);
    expect(code, stderr).toBe(0);
    // No line is the SDK's multi-line Node notice any more; ours is one JSON warning on Node < 22.
    const lines = stderr.split('\n').filter((l) => l.trim() !== '');
    const all = lines.map((l) => JSON.parse(l) as Record<string, unknown>);
    for (const o of all) expect(typeof o['time']).toBe('string');
    const runtime = all.filter((o) => o['type'] === 'warning' && /Node\.js \d+ is past end of life/.test(String(o['message'])));
    expect(runtime.length).toBe(Number(process.versions.node.split('.')[0]) < 22 ? 1 : 0);
    const objects = all.filter((o) => !runtime.includes(o));
    expect(objects[0]).toMatchObject({ type: 'rate', targetWcu: 100, keyWcu: 1000 });
    const progress = objects.filter((o) => o['type'] === 'progress');
    // What each line holds does not depend on the machine's speed; when the lines fall does. A line can
    // come before the first write (a slow start) or after the last (a progress event after it, 1 s after
    // the line before), and a slow run has more of them: so no bound on each line's written count nor on
    // the number of lines, but the interval between lines and one line in the middle of the writing.
    expect(progress.length).toBeGreaterThanOrEqual(1);
    for (const p of progress) {
      expect(p).toMatchObject({ targetWcu: 100, percent: 100 });
      expect(p['rowsRead']).toBeGreaterThan(0);
      expect(p['written'] as number).toBeLessThanOrEqual(256);
      expect(typeof p['etaS']).toBe('number');
      // The rate of the two seconds before the line; 256 WCU in all can never average over 128 in two seconds.
      expect(p['wcuPerSecond'] as number).toBeLessThanOrEqual(130);
    }
    // --log-interval 1: lines a second apart by the monotonic clock; the time field is the wall clock, to
    // the millisecond (truncated), and may be slewed: 10 ms of slack.
    const times = progress.map((p) => Date.parse(p['time'] as string));
    for (let i = 1; i < times.length; i++) expect(times[i]! - times[i - 1]!).toBeGreaterThanOrEqual(990);
    // The writing lasts over 2.3 s at 100 WCU/s and a batch completes every 0.25 s, so a line falls while
    // it goes on: after the first batch completed and before the last.
    expect(progress.some((p) => (p['written'] as number) > 0 && (p['written'] as number) < 256)).toBe(true);
    expect(objects.at(-1)).toMatchObject({ type: 'summary', rowsRead: 256, written: 256, complete: true });
  });

  it('text progress lines every --log-interval; --quiet has none; --report writes the summary with the input fingerprint', async () => {
    const report = join(dir(), 'run.json');
    const run = await cli(['load', ORDERS, '--table', await table(), ...TYPES, '--wcu', '100', '--log-interval', '1', '--report', report]);
    expect(run.code, run.stderr).toBe(0);
    expect(run.stderr).toMatch(
      /^ddb-spread: progress: 256 rows read \(100\.0%\), \d+ written, \d+ items\/s, \d+ \/ 100 WCU\/s, throttled 0, errors 0, retries 0, rejected 0, elapsed \d+\.\d s, ETA \d+\.\d s$/m,
    );
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
