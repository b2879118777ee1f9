import type { EstimateResult, HotKey, Simulation, VerifyEstimate } from './estimateTypes.js';
import type { TableReadCost } from './verifyCost.js';
import { UNNAMED_TABLE } from './offlineTable.js';
import {
  bar,
  bucketsPerColumn,
  displayWidth,
  HEAT_OVER,
  HEAT_SHADES,
  heatStrip,
  padEnd,
  padStart,
  palette,
  stripAnsi,
  truncate,
  wrap,
  type Palette,
} from '../reporting/charts.js';
import {
  escapeControl,
  formatBytes,
  formatCount,
  formatDuration,
  formatMoney,
  formatPercent,
  formatPrice,
  formatRate,
  HIDDEN,
  keyRedactor,
} from '../shared/format.js';

/**
 * The estimate report (`ddb-spread estimate`, `load --dry-run`): text for people and JSON for machines,
 * both pure functions of an EstimateResult. The JSON is documented field by field in docs/ESTIMATE.md.
 */

export interface EstimateFormatOptions {
  /** ANSI colour; the CLI passes true when stdout is a TTY and NO_COLOR is unset. */
  color: boolean;
  /** false (--no-excerpts): partition key values, which can be customer data, show as "(hidden)". */
  excerpts: boolean;
  /** Terminal columns; every line fits. @default 80 (at least 40) */
  width?: number;
}

export const DEFAULT_REPORT_WIDTH = 80;
/** Below this the tables cannot hold a number column and a label; narrower widths are raised to it. */
export const MIN_REPORT_WIDTH = 40;
/** Partitions drawn per simulation; more would bury the hot ones in a page of strips. */
export const HEAT_MAX_ROWS = 16;
/**
 * Columns a key value or an index name takes in a sentence: enough to tell keys apart, short enough that
 * a 2 KB key does not fill the screen (the JSON has them whole).
 */
const KEY_WIDTH = 40;
/** The label column after the two-space indent (fits "warm throughput"). */
const LABEL = 16;
const INDENT = '  ';
const VALUE_INDENT = ' '.repeat(INDENT.length + LABEL);

// ---------------------------------------------------------------------------------------------------
// Numbers and key values (the formats themselves are shared/format.ts's)

/** A size band's bound: whole KB without decimals ("400 KB"), the way DynamoDB's limits read. */
const band = (upTo: number) => (upTo % 1024 === 0 ? `${formatCount(upTo / 1024)} KB` : formatBytes(upTo));

/** Every partition key value the result names, for hiding them inside free text under --no-excerpts. */
function keyRedactorOf(result: EstimateResult): (text: string) => string {
  const keys = [...result.keys.hottest, ...result.keys.hottestWritten, ...result.keys.indexes.flatMap((i) => i.hottest), ...result.shardAdvice].map(
    (k) => k.key,
  );
  if (result.time.bottleneck.kind !== 'table') keys.push(result.time.bottleneck.key);
  return keyRedactor(keys);
}

interface Ctx {
  width: number;
  p: Palette;
  /** A key value as shown: quoted, escaped and cut to KEY_WIDTH, or "(hidden)". */
  key: (key: string) => string;
  /** Free text from the result: escaped, with key values hidden under --no-excerpts. */
  text: (text: string) => string;
}

// ---------------------------------------------------------------------------------------------------
// Layout

function heading(ctx: Ctx, title: string): string {
  return ctx.p.heading(title);
}

/** "  label           value", the value word-wrapped under itself. */
function row(ctx: Ctx, label: string, value: string): string[] {
  return wrap(value, ctx.width, INDENT + padEnd(truncate(label, LABEL - 1), LABEL), VALUE_INDENT);
}

/** Free text as a bullet with a hanging indent. */
function bullet(ctx: Ctx, text: string): string[] {
  return wrap(text, ctx.width, `${INDENT}- `, `${INDENT}  `);
}

/**
 * Shares as bars in a table: label, bar, share, then right-aligned number columns. The bar takes the
 * room the rest leaves (at most 40 columns); the label column shrinks to 8 before the bar goes; when even
 * that does not fit, the numbers move to a line of their own.
 */
function shareTable(
  ctx: Ctx,
  indent: string,
  header: { label: string; columns: string[]; show: boolean },
  rows: Array<{ label: string; share: number; columns: string[] }>,
  labelRange: { min: number; max: number },
): string[] {
  const colWidths = header.columns.map((h, i) => Math.max(displayWidth(h), ...rows.map((r) => displayWidth(r.columns[i] ?? ''))));
  const numbers = colWidths.reduce((sum, w) => sum + 2 + w, 0);
  const pctWidth = Math.max(6, ...rows.map((r) => formatPercent(r.share).length));
  // The header's label may run on over the bar's columns (blank in the header), so only rows size the column.
  const wanted = Math.max(0, ...rows.map((r) => displayWidth(r.label)));
  let labelWidth = Math.min(labelRange.max, Math.max(labelRange.min, wanted));
  const barRoom = (lw: number) => ctx.width - indent.length - lw - 2 - 1 - pctWidth - numbers;
  if (barRoom(labelWidth) < 4) labelWidth = Math.max(8, Math.min(labelWidth, ctx.width - indent.length - 2 - 4 - 1 - pctWidth - numbers));
  const barWidth = Math.min(40, barRoom(labelWidth));
  const cells = (columns: string[]) => columns.map((c, i) => `  ${padStart(c, colWidths[i]!)}`).join('');
  if (barWidth >= 4) {
    const lines = header.show
      ? [
          ctx.p.dim(
            `${indent}${padEnd(truncate(header.label, labelWidth + 2 + barWidth), labelWidth + 2 + barWidth)} ${padStart('share', pctWidth)}${cells(header.columns)}`,
          ),
        ]
      : [];
    for (const r of rows) {
      const drawn = bar(r.share, barWidth);
      lines.push(
        `${indent}${padEnd(truncate(r.label, labelWidth), labelWidth)}  ${ctx.p.bar(drawn)}${' '.repeat(barWidth - displayWidth(drawn))} ${padStart(formatPercent(r.share), pctWidth)}${cells(r.columns)}`,
      );
    }
    return lines;
  }
  // Too narrow for one line a row: label and share, then the numbers with their names.
  const lines = header.show ? [ctx.p.dim(`${indent}${truncate(header.label, ctx.width - indent.length)}`)] : [];
  const shareLabelWidth = ctx.width - indent.length - 1 - pctWidth;
  for (const r of rows) {
    lines.push(`${indent}${padEnd(truncate(r.label, shareLabelWidth), shareLabelWidth)} ${padStart(formatPercent(r.share), pctWidth)}`);
    lines.push(...wrap(r.columns.map((c, i) => `${header.columns[i] ?? ''} ${c}`).join(', '), ctx.width, `${indent}  `, `${indent}  `));
  }
  return lines;
}

// ---------------------------------------------------------------------------------------------------
// Sections

function inputSection(ctx: Ctx, r: EstimateResult): string[] {
  const input = r.input;
  const reasons = Object.entries(input.rejectedByReason).sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : 1));
  const lines = [
    heading(ctx, 'Input'),
    ...row(
      ctx,
      'file',
      `${ctx.text(input.file)} (${input.bytes === undefined ? 'size unknown' : `${formatBytes(input.bytes)}, ${formatCount(input.bytes)} bytes`})`,
    ),
    ...row(ctx, 'rows', `${formatCount(input.rows)}: ${formatCount(input.validRows)} valid, ${formatCount(input.superseded)} superseded by a later row`),
    ...(input.expired > 0
      ? row(ctx, 'expired', `${formatCount(input.expired)} (--skip-expired: TTL past at the estimate's load time; not written, not priced)`)
      : []),
    ...(input.transformOutputs !== undefined
      ? row(
          ctx,
          'transform',
          `${formatCount(input.transformOutputs)} items out, ${formatCount(input.skippedByTransform ?? 0)} rows skipped (neither written nor rejected); "valid" counts the items`,
        )
      : []),
    ...row(
      ctx,
      'rejected',
      `${input.rejected > 0 ? ctx.p.warn(formatCount(input.rejected)) : '0'}${reasons.length > 0 ? ` (${reasons.map(([code, n]) => `${ctx.text(code)} ${formatCount(n)}`).join(', ')})` : ''}`,
    ),
  ];
  if (input.rejectsPath !== undefined) lines.push(...row(ctx, 'reject file', ctx.text(input.rejectsPath)));
  return lines;
}

function itemsSection(ctx: Ctx, r: EstimateResult): string[] {
  const items = r.items;
  const lines = [
    heading(ctx, 'Items'),
    ...row(ctx, 'size', `average ${formatBytes(items.averageBytes)}, largest ${formatBytes(items.maxBytes)}, total ${formatBytes(items.totalBytes)}`),
  ];
  // Empty bands at either end say nothing; the ones between show where the sizes thin out.
  const first = items.histogram.findIndex((b) => b.items > 0);
  const last = items.histogram.length - 1 - [...items.histogram].reverse().findIndex((b) => b.items > 0);
  if (first < 0) return lines;
  const bands = items.histogram.slice(first, last + 1);
  const total = bands.reduce((sum, b) => sum + b.items, 0);
  lines.push(
    ...shareTable(
      ctx,
      INDENT,
      { label: 'size', columns: ['items'], show: false },
      bands.map((b) => ({ label: `up to ${band(b.upToBytes)}`, share: total > 0 ? b.items / total : 0, columns: [formatCount(b.items)] })),
      // As wide as the label column of the rows above, so the bars start where their values do.
      { min: LABEL - 2, max: LABEL - 2 },
    ),
  );
  return lines;
}

function writeUnitsSection(ctx: Ctx, r: EstimateResult): string[] {
  const wu = r.writeUnits;
  return [
    heading(ctx, 'Write units'),
    ...row(ctx, 'table', formatCount(wu.table)),
    ...Object.entries(wu.indexes).flatMap(([name, units]) => row(ctx, `GSI ${ctx.text(name)}`, formatCount(units))),
    ...row(ctx, 'total', formatCount(wu.total)),
  ];
}

function tableSection(ctx: Ctx, r: EstimateResult): string[] {
  const t = r.table;
  const billing =
    t.billingMode === 'PAY_PER_REQUEST'
      ? 'on-demand'
      : `provisioned, ${t.provisionedWcu === undefined ? 'WCU unknown' : `${formatRate(t.provisionedWcu)} WCU`}${t.provisionedRcu === undefined ? '' : `, ${formatRate(t.provisionedRcu)} RCU`}`;
  const source = t.source === 'describe-table' ? 'from DescribeTable' : 'from the flags, not DescribeTable';
  return [
    heading(ctx, 'Table'),
    ...row(ctx, 'name', `${ctx.text(t.name)} (${source})${t.itemCount === undefined ? '' : `, ${formatCount(t.itemCount)} items now`}`),
    ...row(ctx, 'billing', `${billing}${t.warmWriteUnits === undefined ? '' : `; warm throughput ${formatRate(t.warmWriteUnits)} write units/s`}`),
    ...row(ctx, 'GSIs', t.gsis.length === 0 ? 'none' : t.gsis.map((g) => `${truncate(ctx.text(g.name), KEY_WIDTH)} (${g.projection})`).join(', ')),
    ...row(ctx, 'partitions', `${formatCount(t.partitionsNow)} now, ${formatCount(t.partitionsAtTarget)} at the target rate`),
  ];
}

/** The hottest keys under a header naming the columns; the bar is the key's share of the write units. */
function hotKeyTable(ctx: Ctx, title: string, keys: HotKey[]): string[] {
  return shareTable(
    ctx,
    INDENT,
    { label: title, columns: ['rows', 'units'], show: true },
    keys.map((k) => ({ label: ctx.key(k.key), share: k.unitShare, columns: [formatCount(k.rows), formatCount(k.units)] })),
    { min: 8, max: 24 },
  );
}

function keysSection(ctx: Ctx, r: EstimateResult): string[] {
  const k = r.keys;
  const lines = [
    heading(ctx, 'Keys'),
    ...row(ctx, 'distinct', `${formatCount(k.distinct)} partition key values${k.distinct >= 5000 ? ' (estimate, ±2%)' : ''}`),
  ];
  if (k.hottest.length > 0) {
    lines.push(...hotKeyTable(ctx, 'hottest keys, share of write units', k.hottest));
  }
  if (k.sharded) {
    lines.push(...row(ctx, 'after --shard', `${formatCount(k.distinctWritten)} values as written`));
    if (k.hottestWritten.length > 0) lines.push(...hotKeyTable(ctx, 'hottest as written', k.hottestWritten));
  }
  // A GSI key is shown when it holds 1% of the load's units or more: below that it cannot bind.
  for (const index of k.indexes) {
    const shown = index.hottest.filter((h) => h.unitShare >= 0.01);
    if (shown.length > 0) lines.push(...hotKeyTable(ctx, `hottest keys of GSI ${truncate(ctx.text(index.index), KEY_WIDTH)}, share of write units`, shown));
  }
  return lines;
}

function timeSection(ctx: Ctx, r: EstimateResult): string[] {
  const { time, rate: rt } = r;
  const b = time.bottleneck;
  // The rate the load reaches: on-demand growth shows its average and peak.
  const reached =
    rt.peakWcu > rt.assumedWcu * 1.001
      ? `${formatRate(rt.assumedWcu)} WCU/s on average, growing to ${formatRate(rt.peakWcu)}`
      : `at ${formatRate(rt.assumedWcu)} WCU/s`;
  return [
    heading(ctx, 'Time'),
    ...row(
      ctx,
      'rate',
      `${rt.targetWcu === undefined ? `no target, assumed ${formatRate(rt.assumedWcu)} WCU/s` : `target ${formatRate(rt.targetWcu)} WCU/s`} (${ctx.text(rt.reason)}); --key-wcu ${formatRate(rt.keyWcu)} per key`,
    ),
    ...(rt.warning ? row(ctx, 'warning', ctx.p.warn(ctx.text(rt.warning))) : []),
    ...row(ctx, 'duration', `${formatDuration(time.estimatedSeconds)} estimated, ${formatDuration(time.idealSeconds)} ideal (${reached})`),
    ...row(
      ctx,
      'bottleneck',
      b.kind === 'table'
        ? `the table's rate, ${formatRate(b.wcu)} WCU/s`
        : b.kind === 'key'
          ? `key ${ctx.key(b.key)}: ${formatCount(b.units)} units at ${formatRate(rt.keyWcu)} WCU/s take ${formatDuration(b.seconds)}`
          : `GSI ${truncate(ctx.text(b.index), KEY_WIDTH)} key ${ctx.key(b.key)}: ${formatCount(b.units)} index units at ${formatRate(rt.keyWcu)} WCU/s take ${formatDuration(b.seconds)}`,
    ),
    ...row(ctx, 'throttle-free', `up to ${formatRate(rt.throttleFreeWcu)} WCU/s in the planned order`),
  ];
}

/** --workers N: how they divide the load and what they read; the time above is already the whole load's. */
function workersSection(ctx: Ctx, r: EstimateResult): string[] {
  const w = r.workers;
  if (!w) return [];
  const ratio = w.inputBytes > 0 ? ` (${(w.bytesReadByAll / w.inputBytes).toFixed(2)}x the input)` : '';
  return [
    heading(ctx, `Workers (${formatCount(w.count)}, --segment 0/${w.count} … ${w.count - 1}/${w.count})`),
    ...row(ctx, 'division', `by ${w.by === 'keys' ? 'key' : w.by === 'ranges' ? 'byte range' : 'part'}: ${ctx.text(w.why)}`),
    ...row(
      ctx,
      'reading',
      `${formatBytes(w.bytesReadByAll)} read by all of them together${ratio}; the largest share ${formatBytes(w.largestShareBytes)}, read in ${formatDuration(w.readSeconds)} on cores of its own`,
    ),
    ...row(
      ctx,
      'each worker',
      `--segment i/${w.count} with the same --listing <shared file or s3:// key>${r.rate.targetWcu === undefined ? '' : ` and --total-wcu ${formatRate(r.rate.targetWcu)}`}; \`ddb-spread status <listing>\` answers for all of them`,
    ),
  ];
}

/** The highest value, without spreading a long array into arguments (a long simulation has many buckets). */
const peakOf = (values: readonly number[]) => values.reduce((max, v) => (v > max ? v : max), 0);

/** Partitions to draw: all, or the HEAT_MAX_ROWS with the highest peak (then total), in partition order. */
function heatRows(sim: Simulation): number[] {
  const parts = sim.heat.partitions;
  const all = parts.map((_, i) => i);
  if (parts.length <= HEAT_MAX_ROWS) return all;
  const peak = (i: number) => peakOf(parts[i] ?? []);
  const sum = (i: number) => (parts[i] ?? []).reduce((s, v) => s + v, 0);
  return all
    .sort((a, b) => peak(b) - peak(a) || sum(b) - sum(a) || a - b)
    .slice(0, HEAT_MAX_ROWS)
    .sort((a, b) => a - b);
}

function partitionsSection(ctx: Ctx, r: EstimateResult): string[] {
  const sims: Array<[string, Simulation]> = [
    ['planned order', r.simulations.planned],
    ['input order', r.simulations.input],
  ];
  const indent = `${INDENT}  `;
  const labelWidth = Math.max(...sims.map(([, s]) => `p${Math.max(0, s.heat.partitions.length - 1)}`.length));
  const peakText = (values: readonly number[]) => `${Math.round(peakOf(values) * 100)}%`;
  const peakWidth = Math.max(4, ...sims.flatMap(([, s]) => s.heat.partitions.map((v) => peakText(v).length)));
  const columns = Math.max(8, ctx.width - indent.length - labelWidth - 2 - 2 - peakWidth);
  // One time scale for both: the input order's longer strip shows it takes longer.
  const span = Math.max(...sims.map(([, s]) => s.heat.bucketSeconds * Math.max(0, ...s.heat.partitions.map((p) => p.length))));
  const columnSeconds: number[] = [];
  const lines = [heading(ctx, 'Partitions')];
  for (const [name, sim] of sims) {
    const buckets = Math.max(0, ...sim.heat.partitions.map((p) => p.length));
    const perColumn = Math.max(bucketsPerColumn(buckets, columns), sim.heat.bucketSeconds > 0 ? Math.ceil(span / columns / sim.heat.bucketSeconds - 1e-9) : 1);
    columnSeconds.push(perColumn * sim.heat.bucketSeconds);
    const throttled = sim.throttledItems > 0 ? ctx.p.warn(`${formatCount(sim.throttledItems)} throttled writes`) : 'no throttled writes';
    lines.push(...row(ctx, name, `${sim.order}, ${sim.paced ? 'paced' : 'unpaced'}: ${formatDuration(sim.seconds)}, ${throttled}`));
    if (buckets === 0) {
      lines.push(`${indent}(no writes simulated)`);
      continue;
    }
    const shown = heatRows(sim);
    if (shown.length < sim.heat.partitions.length) {
      lines.push(
        ...wrap(
          `the ${shown.length} hottest of ${formatCount(sim.heat.partitions.length, 'partition')} (by peak), in partition order`,
          ctx.width,
          indent,
          indent,
        ).map(ctx.p.dim),
      );
    }
    for (const i of shown) {
      const values = sim.heat.partitions[i] ?? [];
      lines.push(`${indent}${padStart(`p${i}`, labelWidth)} │${heatStrip(values, perColumn, columns, ctx.p.over)}│ ${padStart(peakText(values), peakWidth)}`);
    }
  }
  const scale = columnSeconds.every((s) => s === columnSeconds[0])
    ? `one column = ${formatDuration(columnSeconds[0] ?? 0)}`
    : `one column = ${sims.map(([name], i) => `${formatDuration(columnSeconds[i] ?? 0)} (${name})`).join(', ')}`;
  lines.push(
    ...wrap(
      `${scale}; ${HEAT_SHADES[1]}<25% ${HEAT_SHADES[2]}<50% ${HEAT_SHADES[3]}<75% ${HEAT_SHADES[4]}≤100% ${ctx.p.over(HEAT_OVER)}>100% of sustained rate`,
      ctx.width,
      INDENT,
      INDENT,
    ),
  );
  return lines;
}

/** What adaptive capacity does and does not do for a hot key (DOMAIN.md; AWS burst-adaptive-capacity). */
export const ADAPTIVE_CAPACITY = 'Adaptive capacity may isolate a hot key, never above 1,000 WCU/s: shard it.';

function shardSection(ctx: Ctx, r: EstimateResult): string[] {
  const lines = [heading(ctx, 'Shard advice')];
  if (r.shardAdvice.length === 0) return [...lines, ...row(ctx, 'none', `no key needs more than --key-wcu ${formatRate(r.rate.keyWcu)}`)];
  for (const a of r.shardAdvice) {
    lines.push(
      ...wrap(
        `${a.index === undefined ? '' : `GSI ${ctx.text(a.index)} key `}${ctx.key(a.key)}: ${formatCount(a.units)} units, needs ${formatRate(a.requiredWcu)} WCU/s: ${formatCount(a.recommendedShards)} shards advised, at least ${formatCount(a.minShards)}`,
        ctx.width,
        INDENT,
        `${INDENT}  `,
      ),
      // Flags are to be copied whole, so they are not wrapped; one longer than the line is cut visibly.
      ...(a.index === undefined
        ? [`${INDENT}  ${truncate(ctx.text(a.flags), ctx.width - INDENT.length - 2)}`]
        : wrap(ctx.text(a.flags), ctx.width, `${INDENT}  `, `${INDENT}  `)),
      ...wrap(`reads: ${ctx.text(a.reads)}`, ctx.width, `${INDENT}  `, `${INDENT}  `),
    );
  }
  lines.push(...bullet(ctx, ADAPTIVE_CAPACITY));
  return lines;
}

function capacitySection(ctx: Ctx, r: EstimateResult): string[] {
  const c = r.capacity;
  const lines = [heading(ctx, 'Capacity')];
  if (c.loadWcu !== undefined || c.perPartitionWcuAfterLoad !== undefined) {
    const during =
      c.loadWcu === undefined
        ? []
        : [`${formatRate(c.loadWcu)} WCU${c.partitionsAfterRaise === undefined ? '' : ` (${formatCount(c.partitionsAfterRaise, 'partition')})`}`];
    // Partitions never merge: what each sustains once the table is set back is the lasting cost of a raise.
    const after = c.perPartitionWcuAfterLoad === undefined ? [] : [`afterwards ${formatRate(c.perPartitionWcuAfterLoad)} WCU/s per partition`];
    lines.push(...row(ctx, 'for the load', [...during, ...after].join('; ')));
  }
  if (c.noSplitWcu !== undefined) {
    lines.push(
      ...row(ctx, 'without a split', `${formatRate(c.noSplitWcu)} WCU${c.noSplitSeconds === undefined ? '' : `, ${formatDuration(c.noSplitSeconds)}`}`),
    );
  }
  for (const sentence of c.advice) lines.push(...bullet(ctx, ctx.text(sentence)));
  return lines;
}

function costSection(ctx: Ctx, r: EstimateResult): string[] {
  const c = r.cost;
  const lines = [
    heading(ctx, 'Cost'),
    ...row(ctx, 'on-demand', `${formatMoney(c.onDemandUsd)} (${formatPrice(c.prices.onDemandPerMillionWrites)} per million write request units)`),
    ...row(
      ctx,
      'provisioned',
      `${c.provisionedWcuHours.toLocaleString('en-US', { maximumFractionDigits: 2 })} WCU-hours, ${formatMoney(c.provisionedUsd)} (${formatPrice(c.prices.provisionedPerWcuHour)} per WCU-hour)`,
    ),
    ...row(ctx, 'prices', `${ctx.text(c.prices.region)}, as of ${ctx.text(c.prices.date)}`),
  ];
  if (c.importFromS3 !== undefined) lines.push(...row(ctx, 'Import from S3', ctx.text(c.importFromS3)));
  const guard = r.costGuard;
  if (guard)
    lines.push(
      ...row(
        ctx,
        '--max-cost',
        guard.over
          ? ctx.p.warn(
              `${formatPrice(guard.maxUsd)}: the load's ${formatPrice(guard.usd)} of write units passes it; the load would be refused or stopped by its cost guard (exit 3 or 4)`,
            )
          : `${formatPrice(guard.maxUsd)}: the load's ${formatPrice(guard.usd)} of write units is within it`,
      ),
    );
  const conditional = r.conditional;
  if (conditional)
    lines.push(
      ...row(
        ctx,
        'conditional',
        `${ctx.text(conditional.condition)}: conditional writes: ${formatCount(conditional.calls)} PutItem/DeleteItem calls, one row each, up to 25 at a time in each of the --concurrency slots a batch would hold (the time above assumes so); each is charged as the write above whether its condition holds or fails (a put over a larger stored item: the larger), so the units and cost are for every row; the estimate cannot know how many conditions will fail, which the load counts as conditionFailed${conditional.conditionFailuresPath !== undefined ? ` and would list in ${ctx.text(conditional.conditionFailuresPath)} (--condition-failures; not written by an estimate or a dry run)` : ''}`,
      ),
    );
  return lines;
}

/** --prewarm, given or worth giving: what is raised, the command, the time it saves, its price. */
function prewarmSection(ctx: Ctx, r: EstimateResult): string[] {
  const p = r.prewarm;
  if (!p) return [];
  const lines = [heading(ctx, 'Pre-warming')];
  const raises = p.raises.map(
    (w) =>
      `${w.index === undefined ? 'table' : `GSI ${ctx.text(w.index)}`} ${w.from === undefined ? '(not reported)' : formatCount(w.from)} → ${formatCount(w.to)} write units/s`,
  );
  if (p.given) {
    lines.push(
      ...row(ctx, '--prewarm', raises.length > 0 ? `raises before the first write: ${raises.join('; ')}; the figures above assume it` : 'nothing to raise'),
    );
  } else {
    lines.push(
      ...row(
        ctx,
        'warm throughput',
        `below the load's ${formatCount(p.targetWcu)} write units/s: the rate starts lower and at most doubles every 30 minutes; raise it with --prewarm, or run: ${ctx.text(p.command ?? '')}`,
      ),
    );
  }
  if (p.savedSeconds > 0)
    lines.push(
      ...row(
        ctx,
        'time saved',
        `${formatDuration(p.savedSeconds)} of writing (${formatDuration(p.secondsWithout)} growing from the warm throughput, ${formatDuration(p.secondsWith)} warm)`,
      ),
    );
  for (const note of p.notes) lines.push(...row(ctx, 'note', ctx.text(note)));
  lines.push(...row(ctx, 'cost', p.cost));
  return lines;
}

/** AWS's managed loaders: which would serve this load, what each would not do, and its price. */
function managedSection(ctx: Ctx, r: EstimateResult): string[] {
  const lines = [heading(ctx, 'Managed paths')];
  for (const m of r.managedPaths) {
    const name = m.name === 'import-from-s3' ? 'Import from S3' : 'bulk put items';
    // One that would not serve says why, no more: --json has the rest.
    lines.push(...row(ctx, name, m.serves ? `would serve: ${m.why}; it would not ${m.wouldNot}; ${m.cost}` : `would not serve: ${m.why}`));
  }
  return lines;
}

/** The table in the title: its name, or, offline without --table, the flags that describe it ("into estimate" read as a table). */
function tableTitle(ctx: Ctx, table: EstimateResult['table']): string {
  return table.source === 'flags' && table.name === UNNAMED_TABLE ? 'a table described by --partition-key' : ctx.text(table.name);
}

/**
 * The estimate for people: short sections of aligned rows, bars for shares and a heat strip per
 * partition. Pure. Every line fits `width` columns; ANSI colour only with `color`; key values hidden
 * without `excerpts`.
 */
export function formatEstimate(result: EstimateResult, options: EstimateFormatOptions): string {
  const requested = options.width ?? DEFAULT_REPORT_WIDTH;
  const width = Number.isFinite(requested) ? Math.max(MIN_REPORT_WIDTH, Math.floor(requested)) : DEFAULT_REPORT_WIDTH;
  const redact = options.excerpts ? (text: string) => text : keyRedactorOf(result);
  const ctx: Ctx = {
    width,
    p: palette(options.color),
    key: (key) => (options.excerpts ? truncate(escapeControl(JSON.stringify(key)), KEY_WIDTH) : HIDDEN),
    text: (text) => escapeControl(redact(text)),
  };
  const sections = [
    [...wrap(`ddb-spread estimate: ${ctx.text(result.input.file)} into ${tableTitle(ctx, result.table)} (nothing written)`, width, '', INDENT), ''],
    inputSection(ctx, result),
    itemsSection(ctx, result),
    writeUnitsSection(ctx, result),
    tableSection(ctx, result),
    keysSection(ctx, result),
    timeSection(ctx, result),
    workersSection(ctx, result),
    partitionsSection(ctx, result),
    shardSection(ctx, result),
    capacitySection(ctx, result),
    costSection(ctx, result),
    prewarmSection(ctx, result),
    managedSection(ctx, result),
    verifySection(ctx, result),
  ];
  // The layout keeps within the width by construction; this is the guarantee should a row not.
  const fit = (line: string) => (displayWidth(line) <= width ? line : truncate(stripAnsi(line), width));
  // No blank line between sections: headings stand at the margin, and the report stays one screen taller at most.
  return `${sections.flat().map(fit).join('\n')}\n`;
}

const RCU_SOURCES: Record<VerifyEstimate['rcuSource'], (percent: number) => string> = {
  given: () => '--rcu',
  provisioned: (percent) => `${percent}% of the table's provisioned RCU`,
  'warm-throughput': (percent) => `${percent}% of the table's warm read throughput`,
  'on-demand-default': (percent) => `${percent}% of a new on-demand table's 12,000 reads/s`,
  'on-demand-max': (percent) => `${percent}% of the table's MaxReadRequestUnits`,
};

/** The price of `ddb-spread verify` after the load, both ways to read the table (the reason for the choice is in the JSON). */
function verifySection(ctx: Ctx, r: EstimateResult): string[] {
  const v = r.verify;
  const way = (cost: TableReadCost, what: string, cheaper: boolean) =>
    `${formatRate(cost.readUnits)} read units, ${what}, ${formatDuration(cost.seconds)}, ${formatCost(cost.usd)}${cheaper ? ' (cheaper)' : ''}`;
  const sampled = v.sample < 1 ? ` (${formatPercent(v.sample)} sample)` : '';
  const consistency = v.consistentRead ? 'strongly consistent' : 'eventually consistent';
  const source = v.table.source === 'describe-table' ? 'DescribeTable now, plus the load' : 'what the load leaves';
  const offline = r.table.source === 'flags' ? ' (not the offline table flags)' : '';
  return [
    heading(ctx, 'Verify'),
    ...row(
      ctx,
      'keys',
      `${formatCount(Math.round(v.keys))}${sampled}, ${consistency}, at ${formatRate(v.rcu)} read units/s (${RCU_SOURCES[v.rcuSource](v.rcuPercent)})`,
    ),
    ...row(ctx, 'BatchGetItem', way(v.batchGet, `${formatCount(v.batchGet.calls)} calls`, v.cheaper === 'batch-get')),
    ...row(ctx, 'Scan', way(v.scan, `${formatCount(v.scan.segments)} segment${v.scan.segments === 1 ? '' : 's'}`, v.cheaper === 'scan')),
    ...row(ctx, 'table', `${formatBytes(v.table.bytes)}, ${formatCount(Math.round(v.table.items))} items (${source})`),
    // verify reads the keys by default; --scan N reads the table by a Scan instead, --scan auto takes the cheaper.
    ...row(
      ctx,
      'run',
      `ddb-spread verify with this estimate's inputs and options${offline}${v.flags ? ` and ${v.flags}` : ''}: it reads by BatchGetItem; --scan auto the cheaper`,
    ),
  ];
}

/** A verify of a small load costs fractions of a cent: shown to the 1/10,000 of a dollar. */
const formatCost = (usd: number) => (usd > 0 && usd < 0.005 ? (usd < 0.00005 ? '< $0.0001' : `$${usd.toFixed(4)}`) : formatMoney(usd));

// ---------------------------------------------------------------------------------------------------
// JSON

/** The JSON shape of T: undefined becomes null, so every field is present and in place. */
type Json<T> = T extends undefined ? null : T extends Array<infer U> ? Array<Json<U>> : T extends object ? { [K in keyof T]: Json<T[K]> } : T;

/** Rounds to `decimals`; non-finite numbers pass through (JSON.stringify writes them as null). */
const round = (value: number, decimals: number) => {
  if (!Number.isFinite(value)) return value;
  const f = 10 ** decimals;
  return Math.round(value * f) / f + 0; // + 0 turns -0 into 0
};
const orNull = <T>(value: T | undefined): T | null => (value === undefined ? null : value);
const roundOrNull = (value: number | undefined, decimals: number) => (value === undefined ? null : round(value, decimals));
/** Record keys sorted, so the same result prints the same bytes whatever order the producer filled it in. */
const sortedRecord = (record: Record<string, number>, decimals: number): Record<string, number> =>
  Object.fromEntries(
    Object.entries(record)
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
      .map(([k, v]) => [k, round(v, decimals)]),
  );

/** Precision of the JSON: seconds to 0.1, shares to 4 decimals, utilisation to 0.1%, dollars to the cent. */
const SECONDS = 1;
const SHARE = 4;
const UTILISATION = 3;
const UNITS = 1;
const USD = 2;

/**
 * The estimate for machines (--json): one object on one line, fields in the order of EstimateResult
 * (built field by field, not spread, so the producer's construction order cannot change it), absent
 * values as null. With `excerpts: false` key values are "(hidden)" here too. Over 100 lines because it is
 * the documented JSON shape (docs/ESTIMATE.md) written out field by field; splitting it would hide the order.
 */
export function estimateJson(result: EstimateResult, options: { excerpts?: boolean } = {}): string {
  const r = result;
  const hide = options.excerpts === false;
  const redact = hide ? keyRedactorOf(r) : (text: string) => text;
  const key = (k: string) => (hide ? HIDDEN : k);
  const hot = (k: HotKey): Json<HotKey> => ({
    key: key(k.key),
    rows: k.rows,
    rowShare: round(k.rowShare, SHARE),
    units: round(k.units, UNITS),
    unitShare: round(k.unitShare, SHARE),
  });
  const sim = (s: Simulation): Json<Simulation> => ({
    order: s.order,
    paced: s.paced,
    seconds: round(s.seconds, SECONDS),
    throttledItems: s.throttledItems,
    // Bucket length keeps milliseconds: a 0.25 s bucket rounded to 0.1 would misplace every bucket after it.
    heat: { bucketSeconds: round(s.heat.bucketSeconds, 3), partitions: s.heat.partitions.map((p) => p.map((v) => round(v, UTILISATION))) },
  });
  const b = r.time.bottleneck;
  const json: Json<EstimateResult> = {
    version: r.version,
    input: {
      file: r.input.file,
      bytes: orNull(r.input.bytes),
      rows: r.input.rows,
      validRows: r.input.validRows,
      expired: r.input.expired,
      ...(r.input.transformOutputs !== undefined ? { skippedByTransform: r.input.skippedByTransform ?? 0, transformOutputs: r.input.transformOutputs } : {}),
      superseded: r.input.superseded,
      rejected: r.input.rejected,
      rejectedByReason: sortedRecord(r.input.rejectedByReason, 0),
      rejectsPath: orNull(r.input.rejectsPath),
    },
    items: {
      totalBytes: r.items.totalBytes,
      averageBytes: round(r.items.averageBytes, 1),
      maxBytes: r.items.maxBytes,
      histogram: r.items.histogram.map((h) => ({ upToBytes: h.upToBytes, items: h.items })),
    },
    writeUnits: { table: round(r.writeUnits.table, UNITS), indexes: sortedRecord(r.writeUnits.indexes, UNITS), total: round(r.writeUnits.total, UNITS) },
    table: {
      name: r.table.name,
      source: r.table.source,
      billingMode: r.table.billingMode,
      provisionedWcu: roundOrNull(r.table.provisionedWcu, UNITS),
      provisionedRcu: roundOrNull(r.table.provisionedRcu, UNITS),
      warmWriteUnits: roundOrNull(r.table.warmWriteUnits, UNITS),
      itemCount: orNull(r.table.itemCount),
      gsis: r.table.gsis.map((g) => ({ name: g.name, projection: g.projection })),
      partitionsNow: r.table.partitionsNow,
      partitionsAtTarget: r.table.partitionsAtTarget,
    },
    keys: {
      distinct: Math.round(r.keys.distinct),
      distinctWritten: Math.round(r.keys.distinctWritten),
      hottest: r.keys.hottest.map(hot),
      hottestWritten: r.keys.hottestWritten.map(hot),
      sharded: r.keys.sharded,
      indexes: r.keys.indexes.map((i) => ({ index: i.index, hottest: i.hottest.map(hot) })),
    },
    rate: {
      targetWcu: roundOrNull(r.rate.targetWcu, UNITS),
      assumedWcu: round(r.rate.assumedWcu, UNITS),
      peakWcu: round(r.rate.peakWcu, UNITS),
      reason: redact(r.rate.reason),
      warning: r.rate.warning === undefined ? null : redact(r.rate.warning),
      keyWcu: round(r.rate.keyWcu, UNITS),
      throttleFreeWcu: round(r.rate.throttleFreeWcu, UNITS),
    },
    time: {
      idealSeconds: round(r.time.idealSeconds, SECONDS),
      estimatedSeconds: round(r.time.estimatedSeconds, SECONDS),
      startupSeconds: round(r.time.startupSeconds, SECONDS),
      readSeconds: round(r.time.readSeconds, SECONDS),
      writeSeconds: round(r.time.writeSeconds, SECONDS),
      bottleneck:
        b.kind === 'table'
          ? { kind: 'table', wcu: round(b.wcu, UNITS) }
          : b.kind === 'key'
            ? { kind: 'key', key: key(b.key), units: round(b.units, UNITS), seconds: round(b.seconds, SECONDS) }
            : { kind: 'index-key', index: b.index, key: key(b.key), units: round(b.units, UNITS), seconds: round(b.seconds, SECONDS) },
    },
    simulations: { planned: sim(r.simulations.planned), input: sim(r.simulations.input) },
    shardAdvice: r.shardAdvice.map((a) => ({
      key: key(a.key),
      units: round(a.units, UNITS),
      requiredWcu: round(a.requiredWcu, UNITS),
      minShards: a.minShards,
      recommendedShards: a.recommendedShards,
      flags: redact(a.flags),
      index: orNull(a.index),
      reads: a.reads,
    })),
    capacity: {
      loadWcu: roundOrNull(r.capacity.loadWcu, UNITS),
      partitionsAfterRaise: orNull(r.capacity.partitionsAfterRaise),
      perPartitionWcuAfterLoad: roundOrNull(r.capacity.perPartitionWcuAfterLoad, UNITS),
      noSplitWcu: roundOrNull(r.capacity.noSplitWcu, UNITS),
      noSplitSeconds: roundOrNull(r.capacity.noSplitSeconds, SECONDS),
      advice: r.capacity.advice.map(redact),
    },
    cost: {
      // Unit prices stay as given: $0.00065 per WCU-hour rounded to the cent would be $0.
      prices: {
        region: r.cost.prices.region,
        date: r.cost.prices.date,
        onDemandPerMillionWrites: r.cost.prices.onDemandPerMillionWrites,
        provisionedPerWcuHour: r.cost.prices.provisionedPerWcuHour,
      },
      onDemandUsd: round(r.cost.onDemandUsd, USD),
      provisionedWcuHours: round(r.cost.provisionedWcuHours, 2),
      provisionedUsd: round(r.cost.provisionedUsd, USD),
      importFromS3: orNull(r.cost.importFromS3),
    },
    workers: r.workers
      ? {
          count: r.workers.count,
          by: r.workers.by,
          why: redact(r.workers.why),
          inputBytes: r.workers.inputBytes,
          largestShareBytes: r.workers.largestShareBytes,
          bytesReadByAll: r.workers.bytesReadByAll,
          readSeconds: round(r.workers.readSeconds, SECONDS),
        }
      : null,
    prewarm: r.prewarm
      ? {
          given: r.prewarm.given,
          targetWcu: r.prewarm.targetWcu,
          raises: r.prewarm.raises.map((w) => ({ index: orNull(w.index), from: orNull(w.from), to: w.to })),
          command: orNull(r.prewarm.command),
          secondsWithout: round(r.prewarm.secondsWithout, SECONDS),
          secondsWith: round(r.prewarm.secondsWith, SECONDS),
          savedSeconds: round(r.prewarm.savedSeconds, SECONDS),
          cost: r.prewarm.cost,
          notes: r.prewarm.notes,
        }
      : null,
    managedPaths: r.managedPaths.map((m) => ({ name: m.name, serves: m.serves, why: m.why, wouldNot: m.wouldNot, cost: m.cost })),
    // Unrounded: a guard of a few cents on a small load is still read exactly.
    costGuard: r.costGuard ? { maxUsd: r.costGuard.maxUsd, usd: r.costGuard.usd, over: r.costGuard.over } : null,
    verify: verifyJson(r.verify),
    ...(r.conditional
      ? {
          conditional: {
            condition: r.conditional.condition,
            calls: r.conditional.calls,
            ...(r.conditional.conditionFailuresPath !== undefined ? { conditionFailuresPath: r.conditional.conditionFailuresPath } : {}),
          },
        }
      : {}),
  };
  return `${JSON.stringify(json)}\n`;
}

/** The verify section for machines: read units to 0.1, dollars unrounded (a small verify costs fractions of a cent). */
function verifyJson(v: VerifyEstimate): Json<VerifyEstimate> {
  const way = (c: TableReadCost): Json<TableReadCost> => ({
    readUnits: round(c.readUnits, UNITS),
    calls: c.calls,
    seconds: round(c.seconds, SECONDS),
    onDemandUsd: c.onDemandUsd,
    provisionedRcuHours: c.provisionedRcuHours,
    provisionedUsd: c.provisionedUsd,
    usd: c.usd,
  });
  return {
    keys: Math.round(v.keys),
    sample: v.sample,
    consistentRead: v.consistentRead,
    rcu: v.rcu,
    rcuSource: v.rcuSource,
    rcuPercent: v.rcuPercent,
    table: { bytes: Math.round(v.table.bytes), items: Math.round(v.table.items), source: v.table.source },
    batchGet: way(v.batchGet),
    scan: { ...way(v.scan), segments: v.scan.segments },
    cheaper: v.cheaper,
    why: v.why,
    prices: {
      region: v.prices.region,
      date: v.prices.date,
      onDemandPerMillionReads: v.prices.onDemandPerMillionReads,
      provisionedPerRcuHour: v.prices.provisionedPerRcuHour,
    },
    flags: v.flags,
  };
}
