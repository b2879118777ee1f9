/**
 * Attacks on the throttled calls counted by kind (ThrottlingReasons' reason strings, as the endpoint sends
 * them) without DynamoDB: the kinds are the server's words, so they are data, not names the loader chose.
 * Each test is named after the hole it shows.
 */
import { PassThrough } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { createEventRenderer } from '../../../src/cli/renderEvents.js';
import { Terminal } from '../../../src/cli/terminal.js';
import { LoadTally } from '../../../src/load/loadTally.js';
import type { LoadResult } from '../../../src/reporting/result.js';
import { formatSummary } from '../../../src/reporting/summary.js';

/** A whole result for the summary, throttled by these kinds. */
function throttledResult(throttlesByReason: Record<string, number>): LoadResult {
  return {
    table: 'T',
    rowsRead: 10,
    written: 10,
    superseded: 0,
    rejected: 0,
    rejectedByReason: {},
    consumedWcu: 10,
    plannedWcu: 10,
    batches: 1,
    retries: 1,
    throttledItems: 10,
    throttlesByReason,
    elapsedMs: 1000,
    itemsPerSecond: 10,
    rate: { reason: 'x', keyWcu: 1000, peakWcu: 0, averageWcu: 0, costRatio: 1, tableThrottles: 1, keyThrottles: 0, decreases: 0, errors: 0, restores: 0 },
    hotKeys: [],
    order: 'input',
    orderTempBytes: 0,
    skipped: [],
    complete: true,
  } as unknown as LoadResult;
}

describe("the summary's 'throttled by' line", () => {
  it('a reason holding terminal control characters (an endpoint or proxy that is not DynamoDB) is not written raw to the terminal', () => {
    // ESC [2J clears the screen, ESC ]0; sets the window title: a reason string is the server's, like a header value.
    const summary = formatSummary(throttledResult({ 'Table\u001b[2JWrite\u001b]0;owned\u0007': 1, '\rforged line': 1 }));
    const line = summary.split('\n').find((l) => l.startsWith('  throttled by'));
    expect(line).toBeDefined();
    expect(line).not.toMatch(/[\u0000-\u001f\u007f]/);
  });
});

describe('the terminal line of a key slowed for a key-range reason (--verbose)', () => {
  it("a reason holding terminal control characters is not written raw after 'DynamoDB:'", () => {
    let text = '';
    const stderr = new PassThrough();
    stderr.on('data', (chunk: Buffer) => (text += chunk.toString()));
    const terminal = new Terminal({ stdout: new PassThrough(), stderr, stdin: new PassThrough() }, { jsonLog: false });
    const renderer = createEventRenderer(terminal, { quiet: false, logInterval: 10, excerpts: true, verbose: true }, false, undefined);
    // classifyThrottle names a key for any reason that includes 'KeyRange'.
    renderer.onEvent({
      type: 'rateChanged',
      change: { kind: 'decreased', scope: 'key', key: 'k', toWcu: 100, reason: 'TableWriteKeyRange\u001b[2J\u001b]0;owned\u0007' },
    });
    expect(text).toMatch(/DynamoDB: /);
    expect(text.trimEnd()).not.toMatch(/[\u0000-\u001f\u007f]/);
  });
});

describe('LoadTally: throttled calls by kind', () => {
  it('a reason named like a member of Object.prototype (constructor, __proto__) is counted as a number like any other', () => {
    const tally = new LoadTally();
    const throttles = JSON.parse('{"constructor": 1, "__proto__": 2, "toString": 3}') as Record<string, number>;
    for (let call = 0; call < 2; call++)
      tally.batchWritten({ written: [], rejected: [], consumedWcu: 0, throttledItems: 1, retries: 0, revived: 0, throttles }, () => 1, false);
    const byReason = tally.counters.throttlesByReason ?? {};
    expect(Object.entries(byReason).sort()).toEqual([
      ['__proto__', 4],
      ['constructor', 2],
      ['toString', 6],
    ]);
  });
});
