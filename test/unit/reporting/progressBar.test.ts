/**
 * The progress bar's wiring of load events to the line: a checkpoint's resume (said before the load
 * starts) names the skipping phase, and a resize redraws the line at the new width.
 */
import { EventEmitter } from 'node:events';
import { describe, expect, it } from 'vitest';
import type { LoadCounters, LoadEvent } from '../../../src/reporting/events.js';
import { createProgressBar } from '../../../src/reporting/progressBar.js';

/** A terminal's stream as the bar uses it: its width, what was written, and its resize event. */
class FakeTerminal extends EventEmitter {
  columns = 100;
  written = '';
  write(text: string): boolean {
    this.written += text;
    return true;
  }
  /** The lines drawn, escape sequences removed. */
  lines(): string[] {
    return this.written
      .split('\r')
      .map((l) => l.replaceAll(/\u001b\[[0-9;?]*[A-Za-z]/g, ''))
      .filter((l) => l !== '');
  }
}

const counters = (over: Partial<LoadCounters>): LoadCounters => ({
  rowsRead: 0,
  written: 0,
  superseded: 0,
  rejected: 0,
  rejectedByReason: {},
  consumedWcu: 0,
  plannedWcu: 0,
  batches: 0,
  retries: 0,
  throttledItems: 0,
  bytesRead: 0,
  otherSegments: 0,
  writtenBeforeResume: 0,
  ...over,
});

const started = { type: 'started', table: 't', input: 'in.csv', keySchema: {}, totalBytes: 1000, snapshot: () => undefined } as unknown as LoadEvent;
const progress = (over: Partial<LoadCounters>, elapsedMs: number): LoadEvent => ({ type: 'progress', counters: counters(over), totalBytes: 1000, elapsedMs });

describe('progress bar', () => {
  it('a resume said before the start: the line says it skips what is done, then writes', () => {
    const terminal = new FakeTerminal();
    let clock = 0;
    const bar = createProgressBar(terminal as unknown as NodeJS.WriteStream, () => clock);
    bar.onEvent({ type: 'resumed', checkpoint: 'c.json', batchesDone: 40, written: 1000, rowsSkipped: 0 });
    bar.onEvent(started);
    bar.onEvent(progress({ rowsRead: 500, bytesRead: 250, written: 500, writtenBeforeResume: 500, batches: 20 }, 100));
    expect(terminal.lines().at(-1)).toMatch(/^resuming: skipping rows already written /);
    clock += 1000;
    bar.onEvent(progress({ rowsRead: 1500, bytesRead: 750, written: 1100, writtenBeforeResume: 1000, batches: 44 }, 1000));
    expect(terminal.lines().at(-1)).toMatch(/^writing /);
    bar.stop();
    expect(terminal.listenerCount('resize')).toBe(0);
  });

  it('a resize redraws the line at the new width', () => {
    const terminal = new FakeTerminal();
    const bar = createProgressBar(terminal as unknown as NodeJS.WriteStream);
    bar.onEvent(started);
    bar.onEvent(progress({ rowsRead: 500, bytesRead: 250, written: 300, batches: 12, throttledItems: 7 }, 1000));
    const before = terminal.lines().length;
    terminal.columns = 40;
    terminal.emit('resize');
    const lines = terminal.lines();
    expect(lines.length).toBe(before + 1);
    expect(lines.at(-1)!.length).toBeLessThanOrEqual(39);
    expect(lines.at(-1)).toContain('throttled 7');
    bar.stop();
  });
});
