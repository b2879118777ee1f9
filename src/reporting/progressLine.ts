import { formatCount, formatDuration, formatPercent } from '../shared/format.js';
import type { Gauge } from './progressGauge.js';

/** What the progress line shows besides the gauge's figures. */
export interface LineFields {
  gauge: Gauge;
  /** Whether the write order reads the whole input before its first write (the reading phase then shows how far). */
  globalOrder: boolean;
  rowsRead: number;
  written: number;
  elapsedS: number;
  /** The write rate as "812 / 1,000 WCU/s". */
  wcu: string;
  throttled: number;
  errors: number;
  rejected: number;
  retries: number;
}

/** One piece of the line; the lowest priority goes first when the terminal is too narrow. */
interface Segment {
  text: string;
  /** Put before the text when the segment is shown. */
  before: string;
  priority: number;
}

/** Never dropped: throttles, errors and rejects are what a person watching must not miss. */
const KEPT = Infinity;
/** Fields below this priority are the line's tail: shown in order while they fit. */
const TAIL = 50;
const BAR_MIN = 10;
const BAR_MAX = 20;

/**
 * The progress line, at most `width` columns: the phase, a bar, the percent of work done, rows written of
 * the rows the input holds ("~" while that is projected), the ETA, the rate, then throttles, errors and
 * rejects. The fields that fit are shown, most important first; throttles, errors and rejects stay whenever
 * they are not zero. Pure.
 */
export function progressLine(f: LineFields, width: number): string {
  const g = f.gauge;
  const columns = Math.max(1, Math.floor(width));
  const segments: Segment[] = [
    { text: phaseText(f), before: '', priority: 100 },
    { text: '', before: ' ', priority: 60 }, // the bar, drawn once the room for it is known
    ...(g.percent === undefined ? [] : [{ text: `${Math.floor(g.percent)}%`, before: ' ', priority: 90 }]),
    { text: writtenText(f.written, g), before: ' | ', priority: 80 },
    { text: `ETA ${g.etaS === undefined ? '--' : formatDuration(g.etaS)}`, before: ' | ', priority: 70 },
    { text: f.wcu, before: ' | ', priority: 55 },
    counted('throttled', f.throttled),
    counted('errors', f.errors),
    counted('rejected', f.rejected),
    { text: `retries ${formatCount(f.retries)}`, before: ' | ', priority: f.retries > 0 ? 30 : 10 },
    { text: `elapsed ${formatDuration(f.elapsedS)}`, before: ' | ', priority: 35 },
  ];
  const bar = segments[1]!;
  if (g.percent === undefined) bar.priority = -1;
  const shown = new Set<Segment>();
  const length = (barWidth: number) => [...shown].reduce((n, s) => n + s.before.length + (s === bar ? barWidth + 2 : s.text.length), 0);
  // The most important fields first, each taken if it still fits (with the narrowest bar): a long field
  // left out does not keep a shorter, more useful one out. The kept ones are taken whatever the width.
  let barWidth = BAR_MIN;
  const fits = () => length(barWidth) <= columns;
  const ranked = [...segments].filter((s) => s.priority >= 0).sort((a, b) => b.priority - a.priority);
  for (const segment of ranked.filter((s) => s.priority >= TAIL)) {
    shown.add(segment);
    if (segment.priority < KEPT && segment.priority !== 100 && !fits()) shown.delete(segment);
  }
  // The bar takes the room the main fields leave (up to BAR_MAX), so the tail's changing lengths do not
  // make it jump; the tail (elapsed, retries, zero counts) then goes in order while it fits, and stops at
  // the first that does not, so that it does not flicker as figures change length.
  if (shown.has(bar)) barWidth = Math.max(BAR_MIN, Math.min(BAR_MAX, BAR_MIN + columns - length(BAR_MIN)));
  for (const segment of ranked.filter((s) => s.priority < TAIL)) {
    shown.add(segment);
    if (!fits()) {
      shown.delete(segment);
      break;
    }
  }
  if (shown.has(bar)) bar.text = drawBar(g.percent ?? 0, barWidth);
  const line = segments
    .filter((s) => shown.has(s))
    .map((s) => s.before + s.text)
    .join('');
  // Only the kept fields left and still too wide: cut, so that the terminal never wraps the line.
  return line.length <= columns ? line : `${line.slice(0, columns - 1)}…`;
}

function counted(what: string, count: number): Segment {
  return { text: `${what} ${formatCount(count)}`, before: ' | ', priority: count > 0 ? KEPT : 20 };
}

function phaseText(f: LineFields): string {
  const g = f.gauge;
  // A global order writes nothing before the whole input is read: how far the reading is, is its progress.
  if (g.phase === 'reading' && f.globalOrder)
    return `reading (${formatCount(f.rowsRead, 'row')}${g.readShare === undefined ? '' : `, ${formatPercent(g.readShare)} of the input's bytes`})`;
  if (g.phase === 'planning') return 'planning the write order';
  if (g.phase === 'resuming') return 'resuming: skipping rows already written';
  return g.phase;
}

function writtenText(written: number, g: Gauge): string {
  if (g.total === undefined) return `written ${formatCount(written, 'row')}`;
  return `written ${formatCount(written)} of ${g.totalExact ? '' : '~'}${formatCount(g.total, 'row')}`;
}

function drawBar(percent: number, width: number): string {
  const filled = Math.min(width, Math.floor((percent / 100) * width));
  return `[${'█'.repeat(filled)}${'░'.repeat(width - filled)}]`;
}
