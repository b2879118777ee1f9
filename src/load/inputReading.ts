import { tmpdir } from 'node:os';
import type { WriteOrder } from '../ordering/order.js';
import { MIN_WINDOW_KEYS } from '../ordering/keyRuns.js';
import type { LoadEvent } from '../reporting/events.js';
import type { PlannedWrite } from '../shared/types.js';
import { formatBytes, formatCount } from '../shared/format.js';
import { detectFormat } from '../reading/detectFormat.js';
import type { InputSet } from '../reading/inputSet.js';
import { openInput } from '../reading/openInput.js';
import type { OpenedInputSet } from '../reading/readInputSet.js';
import { createRowPlanner, isRejected, type RowPlannerOptions, type SourceRecord } from '../typing/planRow.js';
import type { Disposer } from './disposer.js';
import type { LoadFacts } from './loadFacts.js';
import type { LoadMode } from './loadMode.js';
import { ObjectCaches } from './objectCache.js';
import type { NormalizedLoadOptions } from './options.js';
import { delimiterOf, formatFromName, type InputFormat } from '../reading/inputFormat.js';
import { planPartStripes, readPartStripes, stripeableParts, withColumns, type PartStripePlan, type StripePart } from '../ordering/stripes/partStripes.js';
import {
  headerOf,
  MIN_STRIPE_BYTES,
  planStripes,
  readStripes,
  recordGroup,
  stripeCount,
  type StripedRead,
  type StripeRestart,
} from '../ordering/stripes/stripedRecords.js';
import { groupOf } from '../ordering/stripes/grouping.js';
import { readRange, type RangeReader } from '../ordering/stripes/ranges.js';
import { planRecord, stripesOfRecord, type Stripe, type StripePlanRecord } from '../ordering/stripes/stripeLayout.js';
import { placedParts, resumeStripes, type ResumedStripe, type ResumeReading } from '../ordering/stripes/stripeResume.js';
import type { RestartPoint } from '../checkpointing/checkpointState.js';
import { bug, LoaderError } from '../shared/errors.js';

/** How the load's input is read: its records in the order they come, the write order in effect, and how to stop. */
export interface Reading {
  /** The input's records (a striped read's, in arrays; or the file's). */
  records: AsyncGenerator<SourceRecord | SourceRecord[]>;
  /** The write order in effect: --order, or what `auto` decided (stripes, else the window). */
  order: WriteOrder;
  /** The window may go over to round-robin if the keys turn out to come in runs (the auto order's window). */
  adaptive: boolean;
  /** The stripes read at once (0: the input is read whole). */
  parts: number;
  /** Stops reading the input. */
  closeInput: () => void;
  /** A striped read's restart points (with a checkpoint that makes them). */
  pointAt?: StripedRead['pointAt'];
  /** A striped read resumed at a restart point: where its stripes' grouping check stood. */
  grouping?: ResumedStripe['grouping'][];
}

export interface ReadingContext {
  opts: NormalizedLoadOptions;
  /** A striped read of this input found it not grouped: the auto order streams it without trying stripes again. */
  notGrouped?: boolean;
  onStripes: LoadMode['onStripes'];
  /** The smallest stripe, when a test shrinks it (LoadDependencies.testSeams). */
  stripeBytes: number | undefined;
  /** A striped read's close is deferred here. */
  disposer: Disposer;
  /** A striped read's bytes are recorded here. */
  facts: LoadFacts;
  /**
   * Restart points a checkpoint makes (every that many rows), and the one a resume starts from; the stripes
   * the checkpoint's load was planned in (`plan`), and where a new plan is kept (`keepPlan`).
   */
  restart?: { every: number; from: RestartPoint | undefined; plan?: StripePlanRecord | undefined; keepPlan?: (plan: StripePlanRecord) => void } | undefined;
  /** Said to the user (the copy of S3 bytes a striped read plans from could not be made). */
  warn?: (message: string) => void;
}

/**
 * How the input is read, decided from the data for the `auto` order (the default):
 * - in stripes where the input can be cut (a plain local file or S3 object, a set of them) and its heads show keys in runs
 *   (src/ordering/stripes/stripedRecords.ts): writing starts at once, whatever the file's size;
 * - otherwise as it comes, through the window interleaver: keys that are already mixed (a log or an
 *   export in time order, a DynamoDB export's hash order) need no global order, and writing starts once
 *   the window is full. If the keys turn out to come in runs longer than the window (stdin or a gzip of
 *   a sorted file, a set of sorted parts), the window goes over to round-robin for the rest of the input
 *   (WriteOrderer's adaptive window), without writing a key's rows out of order or reading a row twice.
 * `--order stripes` by name reads a file that cannot be striped whole, in round-robin order (a worker's byte range
 * streams through the window instead, as the auto order reads it); any other
 * order is read whole, as asked. A dry run that simulates the stripes (`onStripes`, the estimate) is
 * told how the file would be read, and reads it whole: in input order where it would be read in stripes
 * (still in the order `stripes`, so that GroupingCheck proves over the whole file, as one part, what the
 * load would prove stripe by stripe), and otherwise as the load would.
 */
export async function readingOf(
  { inputSet, input, format }: { inputSet: InputSet; input: OpenedInputSet; format: InputFormat | undefined },
  plannerOptions: RowPlannerOptions,
  ctx: ReadingContext,
): Promise<Reading> {
  const { opts, notGrouped, onStripes, stripeBytes, disposer, facts } = ctx;
  const whole = (order: WriteOrder, adaptive = false): Reading => {
    if (ctx.restart?.from?.stripes) throw bug('a checkpoint resumes at a restart point of a striped read, but the input is not read in stripes now');
    return { records: input.records, order, adaptive, parts: 0, closeInput: () => input.close() };
  };
  const asked = opts.order;
  if (asked !== 'stripes' && asked !== 'auto') return whole(asked);
  // A worker's byte range of a part (load/rangeCuts.ts) is not cut into stripes (they would cut the whole
  // part), and streams through the window without going over to round-robin: that reads the rest whole and
  // holds it, half a range of a sorted dump on disk; a key's run longer than the window is then written at
  // its own pace (--key-wcu) as it comes. So for `--order stripes` by name too: the stripes' promise (writing
  // at once, nothing held) is what the window keeps for a range, and round-robin would break it.
  const ranged = inputSet.parts.some((p) => p.range !== undefined);
  const notStriped = () => {
    const streams = asked === 'auto' || ranged;
    onStripes?.(streams ? 'own' : undefined);
    if (streams) return whole('window', !ranged);
    return whole(onStripes ? 'input' : 'round-robin');
  };
  // Stripes are cut by the input's keys; a transform may write other keys than it reads (--order stripes is refused with one).
  if (notGrouped || opts.transform !== undefined) return notStriped();
  // A conditional load is never started over: its second pass would find the first pass's own items and count those
  // rows conditionFailed (and list them in --condition-failures), not written. The auto order reads it through the
  // window from the start, unless a checkpoint resumed here was planned in stripes (its batches must be made again).
  if (asked === 'auto' && opts.condition !== undefined && ctx.restart?.plan === undefined) return notStriped();
  // A set of plain parts (local files, S3 objects), or one S3 object, is striped across its parts. A dry run reads it so too:
  // the estimate then takes the batches as they come ('own'), as for the window.
  const set = await stripeableParts(inputSet, opts, ctx.restart?.plan !== undefined && !onStripes);
  if (set) {
    // The S3 objects' bytes the plan reads are kept on local disk, for the stripes to read (objectCache.ts);
    // not in a dry run, which reads the input whole after its plan.
    const caches = onStripes
      ? undefined
      : new ObjectCaches({ parent: opts.tempDir ?? tmpdir(), keep: (release) => disposer.defer(release), warn: ctx.warn ?? (() => undefined) });
    const parts = caches ? set.map((p, i) => (p.path === undefined ? { ...p, bytes: caches.cached(p.file, i, p.bytes) } : p)) : set;
    const striped = await partStripedReading(parts, input, plannerOptions, ctx, caches);
    if (!striped) return notStriped();
    onStripes?.('own');
    return striped;
  }
  // Stripes cut one plain local file; stdin, an export or deletes are read whole.
  const path = plainLocalFile(inputSet, opts);
  if (path === undefined || format === undefined) return notStriped();
  const syntax = format === 'csv' ? 'csv' : 'jsonl';
  const file = inputSet.parts[0]!.part.name;
  const how = { syntax, delimiter: delimiterOf(file, opts.delimiter), columns: opts.columns } as const;
  // The tests cut small files into many stripes; users never need to.
  const minBytes = stripeBytes ?? MIN_STRIPE_BYTES;
  const stored = onStripes ? undefined : storedStripes(ctx.restart, [input.totalBytes ?? 0]);
  const parts = stored || !INPUT_SYNTAX.has(format) ? 0 : await stripeCount(path, input.totalBytes, how, minBytes);
  const plan = stored
    ? {
        stripes: stored,
        how: {
          ...how,
          columns: syntax === 'csv' ? (how.columns ?? (await headerOf(path, file, { start: 0, end: input.totalBytes!, line: 1 }, how))) : undefined,
        },
        layout: { sizes: stored.map((s) => s.size), firstLines: stored.map((s) => s.firstLine), firstRaws: stored.map(() => undefined) },
      }
    : parts >= 2
      ? await planStripes({
          path,
          file,
          size: input.totalBytes!,
          how,
          parts,
          probe: recordGroup(createRowPlanner({ ...plannerOptions, shard: undefined }), plannerOptions.keySchema.partitionKey),
          // recordGroup's key for a CSV string key is the cell as it is: the heads are read by that column alone.
          ...(syntax === 'csv' && plannerOptions.keySchema.partitionKey.type === 'S' ? { keyColumn: plannerOptions.keySchema.partitionKey.name } : {}),
        })
      : undefined;
  if (!plan) return notStriped();
  if (onStripes) {
    onStripes(plan.layout);
    return { ...whole('stripes'), parts: 1 };
  }
  if (!stored) ctx.restart?.keepPlan?.(planRecord(plan.stripes));
  const pin = inputSet.parts[0]!.part.pin;
  const restart = await stripeRestart(ctx.restart, plan.stripes, plannerOptions, {
    bytes: () => pin ?? path,
    file: () => file,
    syntax: () => how,
    firstRecord: (_, range) => firstRecord(readRange(path, file, range, range.start === 0 ? how : plan.how, undefined, pin)),
  });
  const striped = readStripes(path, file, input.totalBytes!, how, plan, pin, restart?.restart);
  disposer.defer(() => striped.close());
  input.close();
  facts.input = { totalBytes: input.totalBytes, bytesRead: striped.bytesRead };
  return stripedReading(striped, restart?.grouping);
}

/** The Reading of a striped read. */
function stripedReading(striped: StripedRead, grouping: ResumedStripe['grouping'][] | undefined): Reading {
  return {
    records: striped.chunks,
    order: 'stripes',
    adaptive: false,
    parts: striped.parts,
    closeInput: striped.close,
    ...(striped.pointAt ? { pointAt: striped.pointAt } : {}),
    ...(grouping ? { grouping } : {}),
  };
}

/**
 * A striped read's restart points, with a checkpoint that makes them: from a resumed point, its stripes
 * reopened where they stood (resumeStripes), keys read again with the planner (no shard suffix: a sharded
 * load makes no restart points).
 */
async function stripeRestart(
  restart: ReadingContext['restart'],
  stripes: readonly Stripe[],
  plannerOptions: RowPlannerOptions,
  reading: Omit<ResumeReading, 'keyOf'>,
): Promise<{ restart: StripeRestart; grouping?: ResumedStripe['grouping'][] } | undefined> {
  if (!restart || restart.every <= 0) return undefined;
  const from = restart.from;
  if (!from) return { restart: { every: restart.every } };
  if (!from.stripes) throw bug('a checkpoint resumes at a restart point of a read from the start, but the input is read in stripes now');
  const planner = createRowPlanner({ ...plannerOptions, shard: undefined });
  const keyOf = (record: SourceRecord) => {
    const planned = planner.plan(record);
    return isRejected(planned) ? undefined : groupOf(planned);
  };
  const resumed = await resumeStripes(stripes, from.stripes, { ...reading, keyOf });
  return {
    restart: { every: restart.every, from: { row: from.row, cursors: from.stripes, pieces: resumed.map((r) => r.pieces) } },
    grouping: resumed.map((r) => r.grouping),
  };
}

/** The first record a range reader gives, or undefined when it gives none. */
async function firstRecord(reader: RangeReader): Promise<SourceRecord | undefined> {
  try {
    const first = await reader.records.next();
    return first.done ? undefined : first.value;
  } finally {
    await reader.records.return(undefined);
    reader.close();
  }
}

/** A set's striped reading, or undefined when its heads show it is not grouped (partStripes.ts). */
async function partStripedReading(
  parts: StripePart[],
  input: OpenedInputSet,
  plannerOptions: RowPlannerOptions,
  ctx: ReadingContext,
  caches: ObjectCaches | undefined,
): Promise<Reading | undefined> {
  const { stripeBytes, disposer, facts } = ctx;
  const { partitionKey } = plannerOptions.keySchema;
  const stored = ctx.onStripes
    ? undefined
    : storedStripes(
        ctx.restart,
        parts.map((p) => p.size),
      );
  const plan = stored
    ? await storedPartPlan(stored, parts)
    : await planPartStripes({
        parts,
        probe: recordGroup(createRowPlanner({ ...plannerOptions, shard: undefined }), partitionKey),
        ...(partitionKey.type === 'S' ? { keyColumn: partitionKey.name } : {}),
        ...(stripeBytes !== undefined ? { minBytes: stripeBytes } : {}),
      });
  // Planned: the stripes read what the plan read from the copies, and the rest from S3, not copied.
  caches?.freeze();
  if (!plan) return undefined;
  if (!stored && !ctx.onStripes) ctx.restart?.keepPlan?.(planRecord(plan.stripes));
  // A resumed stripe reads its part from a byte past the part's start: a CSV part's columns are needed.
  const from = ctx.restart?.from?.stripes;
  if (from) await withColumns(plan, placedParts(from));
  const part = (i: number) => plan.parts[i]!;
  const restart = await stripeRestart(ctx.restart, plan.stripes, plannerOptions, {
    bytes: (i) => part(i).bytes,
    file: (i) => part(i).file,
    syntax: (i) => part(i).how,
    firstRecord: (i, range) =>
      firstRecord(readRange(part(i).path ?? part(i).file, part(i).file, range, range.start === 0 ? part(i).first : part(i).how, undefined, part(i).bytes)),
  });
  const striped = readPartStripes(plan, restart?.restart);
  disposer.defer(() => striped.close());
  input.close();
  facts.input = { totalBytes: input.totalBytes, bytesRead: striped.bytesRead };
  return stripedReading(striped, restart?.grouping);
}

/**
 * The stripes the checkpoint's load was planned in, for a resume to read by (StripePlanRecord); undefined
 * without them (a new load, or a checkpoint of a ddb-spread before they were kept: the input is cut again).
 * A plan whose pieces lie outside the input's parts is not this input's: the checkpoint is refused.
 */
function storedStripes(restart: ReadingContext['restart'], sizes: readonly number[]): Stripe[] | undefined {
  if (!restart?.plan) return undefined;
  const stripes = stripesOfRecord(restart.plan, sizes);
  if (!stripes)
    throw new LoaderError('CHECKPOINT_INVALID', "the checkpoint's stripes lie outside the input's parts: it is not this input's; delete it to start over");
  return stripes;
}

/** A set's plan from the stripes a checkpoint kept: each CSV part read from a byte past its start gets its header's columns. */
async function storedPartPlan(stripes: Stripe[], parts: StripePart[]): Promise<PartStripePlan> {
  const plan: PartStripePlan = { stripes, parts: parts.map((part) => ({ ...part, how: part.first })) };
  await withColumns(
    plan,
    stripes.flatMap((stripe) => stripe.pieces.flatMap((piece) => (piece.range.start > 0 ? [piece.part!] : []))),
  );
  return plan;
}

/** The path of the load's one input when it is a plain local file (not an export, no deletes): what stripes can cut. */
function plainLocalFile(inputSet: InputSet, opts: NormalizedLoadOptions): string | undefined {
  const parts = inputSet.parts;
  const only = parts.length === 1 ? parts[0]! : undefined;
  if (!only || only.format !== undefined || only.range !== undefined || opts.deletes) return undefined;
  return only.part.path;
}

/**
 * The format of the load as a whole: --input-format, else a single plain file's, by its name or its
 * first bytes (opened and closed again here). Undefined for a set: each part is read by its own.
 */
export async function loadFormatOf(inputSet: InputSet, opts: NormalizedLoadOptions): Promise<InputFormat | undefined> {
  if (opts.inputFormat !== undefined) return opts.inputFormat;
  const path = plainLocalFile(inputSet, opts);
  if (path === undefined) return undefined;
  const named = formatFromName(path);
  if (named !== undefined) return named;
  const opened = await openInput(path);
  try {
    return await detectFormat(opened);
  } finally {
    opened.stream.destroy();
  }
}

/** Formats a striped read can cut: text with one record per line (CSV's quoted line breaks included). */
const INPUT_SYNTAX = new Set(['csv', 'jsonl', 'ddb-json']);

/**
 * What the load says when the auto order's window goes over to round-robin: where, why, what it costs
 * (the rest is read whole before writing goes on, through temporary files past --memory) and what
 * would avoid it. Said when it happens: for keys in runs from the first row, before the first write.
 */
export function groupedWarning(at: PlannedWrite, opts: Pick<NormalizedLoadOptions, 'windowRows' | 'memoryBytes'>, inputBytes: number | undefined): LoadEvent {
  const where = `line ${at.origin.line} of ${at.origin.file}`;
  const disk =
    inputBytes !== undefined && inputBytes / 2 <= opts.memoryBytes
      ? 'in memory (--memory)'
      : `in temporary files past --memory (about half the input's size${inputBytes === undefined ? '' : `, up to ${formatBytes(inputBytes / 2)} for ${formatBytes(inputBytes)} read`}; --temp-dir chooses where)`;
  return {
    type: 'warning',
    message: `partition keys come in runs longer than the window up to ${where} (the last ${formatCount(opts.windowRows)} rows held fewer than ${MIN_WINDOW_KEYS} keys): the rest of the input is written in round-robin order, read whole first and held ${disk}; rows written so far stay written. To stream it instead: give the file uncompressed (a sorted plain file is read in stripes, writing at once), or pass --order window to keep streaming (consecutive writes may then hit one partition key)`,
  };
}
