/**
 * Text building blocks for the estimate report: terminal column widths, truncation, word wrap,
 * horizontal bars and the per-partition heat strip. Pure; no colour is decided here beyond the
 * optional `Paint` the caller passes, so the same code serves a TTY and a pipe.
 */

/** Wraps text in ANSI codes, or returns it unchanged (no colour). */
export type Paint = (text: string) => string;
export const plain: Paint = (text) => text;

export interface Palette {
  heading: Paint;
  bar: Paint;
  over: Paint;
  warn: Paint;
  dim: Paint;
}

const sgr =
  (open: string): Paint =>
  (text) =>
    text === '' ? text : `\u001b[${open}m${text}\u001b[0m`;

export function palette(color: boolean): Palette {
  if (!color) return { heading: plain, bar: plain, over: plain, warn: plain, dim: plain };
  return { heading: sgr('1'), bar: sgr('36'), over: sgr('1;31'), warn: sgr('33'), dim: sgr('2') };
}

const ANSI = /\u001b\[[0-9;]*m/g;

export function stripAnsi(text: string): string {
  return text.replace(ANSI, '');
}

/**
 * Columns a code point takes in a terminal: 0 for combining marks and zero-width characters, 2 for East
 * Asian wide and emoji ranges, 1 otherwise. An approximation of wcwidth, enough to keep key values in
 * CJK or with emoji from pushing a line past the width.
 */
function codePointWidth(cp: number): number {
  if ((cp >= 0x300 && cp <= 0x36f) || (cp >= 0x200b && cp <= 0x200f) || (cp >= 0xfe00 && cp <= 0xfe0f) || cp === 0xfeff) return 0;
  if (
    (cp >= 0x1100 && cp <= 0x115f) ||
    (cp >= 0x2e80 && cp <= 0xa4cf && cp !== 0x303f) ||
    (cp >= 0xac00 && cp <= 0xd7a3) ||
    (cp >= 0xf900 && cp <= 0xfaff) ||
    (cp >= 0xfe30 && cp <= 0xfe4f) ||
    (cp >= 0xff00 && cp <= 0xff60) ||
    (cp >= 0xffe0 && cp <= 0xffe6) ||
    (cp >= 0x1f300 && cp <= 0x1f64f) ||
    (cp >= 0x1f900 && cp <= 0x1f9ff) ||
    (cp >= 0x20000 && cp <= 0x3fffd)
  ) {
    return 2;
  }
  return 1;
}

/** Visible columns of a string (ANSI codes take none). */
export function displayWidth(text: string): number {
  let width = 0;
  for (const ch of stripAnsi(text)) width += codePointWidth(ch.codePointAt(0)!);
  return width;
}

/** Cuts plain text to `width` columns, ending in '…' when something was cut. */
export function truncate(text: string, width: number): string {
  if (displayWidth(text) <= width) return text;
  if (width <= 0) return '';
  let out = '';
  let used = 0;
  for (const ch of text) {
    const w = codePointWidth(ch.codePointAt(0)!);
    if (used + w > width - 1) break;
    out += ch;
    used += w;
  }
  return `${out}…`;
}

export function padEnd(text: string, width: number): string {
  return text + ' '.repeat(Math.max(0, width - displayWidth(text)));
}

export function padStart(text: string, width: number): string {
  return ' '.repeat(Math.max(0, width - displayWidth(text))) + text;
}

/**
 * Word-wraps plain text: the first line starts with `first`, the others with `rest` (both counted in
 * the width). A word longer than a line is cut hard, so no line ever exceeds the width.
 */
export function wrap(text: string, width: number, first: string, rest: string): string[] {
  const lines: string[] = [];
  let line = first;
  let empty = true;
  const room = () => width - displayWidth(line);
  for (const word of text.split(/\s+/).filter((w) => w !== '')) {
    const need = displayWidth(word) + (empty ? 0 : 1);
    if (need <= room()) {
      line += (empty ? '' : ' ') + word;
      empty = false;
      continue;
    }
    if (!empty) {
      lines.push(line);
      line = rest;
    }
    // A word longer than a whole line (a path, a URL): cut it into line-sized pieces.
    let remaining = word;
    while (displayWidth(remaining) > room() && room() > 0) {
      let piece = '';
      let used = 0;
      const chars = [...remaining];
      let i = 0;
      for (; i < chars.length; i++) {
        const w = codePointWidth(chars[i]!.codePointAt(0)!);
        if (used + w > room()) break;
        piece += chars[i]!;
        used += w;
      }
      if (i === 0) break;
      lines.push(line + piece);
      line = rest;
      remaining = chars.slice(i).join('');
    }
    line += remaining;
    empty = remaining === '';
  }
  if (!empty || lines.length === 0) lines.push(line);
  return lines;
}

/** Eighths of a cell, so short bars still differ (a share of 1% and of 3% are not both empty). */
const EIGHTHS = ['', '▏', '▎', '▍', '▌', '▋', '▊', '▉'];

/**
 * A horizontal bar of `fraction` (0..1) of `width` columns, in eighths of a column. A fraction above
 * zero always shows at least '▏', so a key that does write is never drawn as nothing.
 */
export function bar(fraction: number, width: number): string {
  if (!(fraction > 0) || width <= 0) return '';
  const eighths = Math.max(1, Math.round(Math.min(1, fraction) * width * 8));
  return '█'.repeat(Math.floor(eighths / 8)) + EIGHTHS[eighths % 8]!;
}

/** Shades of utilisation, lowest first; OVER marks more than the partition's sustained rate. */
export const HEAT_SHADES = [' ', '░', '▒', '▓', '█'] as const;
export const HEAT_OVER = '!';
/** Utilisation a hair above 1 is float noise from the simulation, not over capacity. */
const OVER_EPSILON = 1e-6;

/** One character for one utilisation value (share of the partition's sustained rate). */
export function heatChar(utilisation: number): string {
  if (!(utilisation > 0)) return HEAT_SHADES[0];
  if (utilisation > 1 + OVER_EPSILON) return HEAT_OVER;
  if (utilisation < 0.25) return HEAT_SHADES[1];
  if (utilisation < 0.5) return HEAT_SHADES[2];
  if (utilisation < 0.75) return HEAT_SHADES[3];
  return HEAT_SHADES[4];
}

/**
 * Buckets per column so that `buckets` fit in `columns`: whole buckets, never stretched (a short
 * simulation takes fewer columns rather than repeating characters).
 */
export function bucketsPerColumn(buckets: number, columns: number): number {
  return Math.max(1, Math.ceil(buckets / Math.max(1, columns)));
}

/**
 * Merges `perColumn` consecutive buckets into one value each. The peak of the merged buckets, not
 * their mean: a second over capacity is what throttles, and averaging would hide it.
 */
export function compress(values: readonly number[], perColumn: number): number[] {
  const out: number[] = [];
  for (let i = 0; i < values.length; i += perColumn) {
    let peak = 0;
    for (let j = i; j < Math.min(values.length, i + perColumn); j++) peak = Math.max(peak, values[j] ?? 0);
    out.push(peak);
  }
  return out;
}

/** The strip of one partition: one character per column, '!' painted with `over`. */
export function heatStrip(values: readonly number[], perColumn: number, columns: number, over: Paint): string {
  const cells = compress(values, perColumn).map(heatChar);
  while (cells.length < columns) cells.push(HEAT_SHADES[0]);
  // Paint runs of '!' at once, so a coloured strip holds one escape pair per run, not per character.
  return cells
    .slice(0, columns)
    .join('')
    .replace(/!+/g, (run) => over(run));
}

/** Eight heights of a sparkline, lowest first. */
export const SPARK_LEVELS = ['▁', '▂', '▃', '▄', '▅', '▆', '▇', '█'] as const;

/**
 * `values` in at most `width` columns: whole groups of equal count (the last may be shorter), each
 * column their mean, so the line's area stays the values' sum over time.
 */
export function columnMeans(values: readonly number[], width: number): number[] {
  const perColumn = bucketsPerColumn(values.length, width);
  const columns: number[] = [];
  for (let i = 0; i < values.length; i += perColumn) {
    const group = values.slice(i, i + perColumn);
    columns.push(group.reduce((sum, v) => sum + Math.max(0, v), 0) / group.length);
  }
  return columns;
}

/**
 * A sparkline of `values` in at most `width` columns (columnMeans), each column one of eight heights of
 * the highest. Zero is a space, not the lowest block: a stall in the load shows as a gap.
 */
export function sparkline(values: readonly number[], width: number): string {
  if (values.length === 0 || width <= 0) return '';
  const columns = columnMeans(values, width);
  const top = Math.max(...columns);
  return columns
    .map((v) => {
      if (!(v > 0) || !(top > 0)) return ' ';
      const level = Math.min(SPARK_LEVELS.length - 1, Math.max(0, Math.ceil((v / top) * SPARK_LEVELS.length) - 1));
      return SPARK_LEVELS[level];
    })
    .join('');
}
