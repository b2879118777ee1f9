import { Readable } from 'node:stream';
import pLimit from 'p-limit';
import { delimiterOf, formatFromName, type InputFormat } from '../../reading/inputFormat.js';
import type { InputPart } from '../../reading/inputPart.js';
import type { InputSet } from '../../reading/inputSet.js';
import { mayBeCut } from '../../reading/magic.js';
import { eachRecord } from '../../reading/readCsv.js';
import { S3_MAX_SOCKETS } from '../../reading/s3Sockets.js';
import type { SourceRecord } from '../../typing/planRow.js';
import { cutFile, cutObject, readRange, type ByteRange, type RangeBytes, type RangeReader, type RangeSyntax } from './ranges.js';
import type { RecordStart } from './recordStarts.js';
import { isolateRunningKeys } from './stripeKeys.js';
import type { Piece, Stripe } from './stripeLayout.js';
import {
  cutHead,
  headByKeyCells,
  headByRows,
  headerOf,
  headIsMixed,
  headsAscending,
  MAX_STRIPES,
  MIN_STRIPE_BYTES,
  MIXED_HEAD_BYTES,
  bytesBefore,
  stripedChunks,
  stripesOf,
  type StripeRestart,
  type Head,
  type StripedRead,
} from './stripedRecords.js';

/**
 * The default order's striped read of an input set (a folder, a glob, an S3 prefix: Spark's output, each
 * part sorted by key, keys in ascending order from part to part), or of one S3 object: the parts are laid
 * end to end in listing order, as one input, and cut into stripes there. A large part is cut into ranges
 * where records start: a local one by one pass over its bytes (cutFile, as one file is), an S3 object by
 * ranged GETs of its segments side by side (cutObject), which find the same record starts and lines; a
 * small part is one range. Ranges are then grouped into at most MAX_STRIPES
 * stripes of about equal bytes: a range that starts a stripe gives the rows at its head that share the key
 * it starts in to the stripe before (as stripedRecords.ts does inside one file), so a key that runs on from
 * one part into the next stays in one stripe; a range that starts none joins the stripe before whole.
 * GroupingCheck then proves, write by write, that the stripes are grouped in that order, and stops the load
 * with ORDER_NOT_GROUPED before any write out of order.
 *
 * Every row keeps its own part's name and line (each range is read by its part's reader, a CSV part's
 * first range with its own header). Every byte written is read through the part's pin: a local file's
 * identity checked after each read and at each range's end, an S3 object's ETag asked for by each ranged
 * GET (If-Match), so a part changed during the load stops it.
 */

/** One part of a set as a striped read sees it. */
export interface StripePart {
  /** As shown in messages and rows' origins. */
  file: string;
  /** A local part's path: cut and probed by positional reads. Undefined for an S3 object: cut and read by ranged GETs only. */
  path: string | undefined;
  size: number;
  /** The part's bytes, checked against its pin or ETag. */
  bytes: RangeBytes;
  /** How its first range is read (a CSV part's header row, unless --columns names the columns). */
  first: RangeSyntax;
}

/** A part of the plan: how its ranges past the first are read (the columns of its header). */
interface PlannedPart extends StripePart {
  how: RangeSyntax;
}

export interface PartStripePlan {
  /** Each piece names its part (`part`). */
  stripes: Stripe[];
  parts: PlannedPart[];
}

/** Formats a striped read of a set can cut: text, one record a line. */
const CUTTABLE = new Set<InputFormat>(['csv', 'jsonl', 'ddb-json']);
/** Bytes read at the start of a part to see that it is not compressed or Parquet. */
const MAGIC_BYTES = 6;
/**
 * Parts of a set from which its S3 objects are each one range. Cutting an object (cutObject) reads all its
 * bytes, by GETs side by side, before the first write, since every range must know the line it starts on:
 * on a prefix of 16 parts of 4 MB through s3rver on a busy machine that put the first write 15 s later
 * (16 stripes to 48), while 16 parts already give the stripes enough keys apart. A prefix of a few large
 * objects (or one object) gets its stripes from the cut, and pays that read.
 */
const S3_PARTS_UNCUT = 16;
/** S3 heads read at once while the stripes are planned (no stripe holds a socket yet). */
const HEAD_GETS = 16;
/** Record starts the cut marks per range (as in stripedRecords.ts). */
const MARKS_PER_RANGE = 16;

/**
 * The parts of a set as a striped read sees them, or undefined when the set cannot be read so: a single
 * local file (stripedRecords.ts reads it), deletes, an export (key-mixed, read in its own order), a part of
 * unknown size or format, Parquet or Ion, a compressed part, a CSV delimiter of more than one byte, stdin.
 * One S3 object is read so (cut into ranges like a local file).
 */
export async function stripeableParts(
  set: InputSet,
  opts: { inputFormat: InputFormat | undefined; delimiter: string | undefined; columns: string[] | undefined; deletes?: unknown },
  /** The parts were striped before (a checkpoint's plan, of this very input): their first bytes are not read again. */
  striped = false,
): Promise<StripePart[] | undefined> {
  const one = set.parts.length === 1 ? set.parts[0]!.part : undefined;
  if (set.parts.length === 0 || (one !== undefined && one.etag === undefined) || opts.deletes) return undefined;
  // A worker's range of a part cut by range (load/rangeCuts.ts) is read as it is: the stripes would cut the whole part.
  if (set.parts.some((listed) => listed.range !== undefined)) return undefined;
  const parts: StripePart[] = [];
  for (const listed of set.parts) {
    const { part } = listed;
    const format = opts.inputFormat ?? formatFromName(part.name);
    if (listed.format !== undefined || format === undefined || !CUTTABLE.has(format) || part.size === undefined) return undefined;
    if (part.path === undefined && part.etag === undefined) return undefined;
    const delimiter = delimiterOf(part.name, opts.delimiter);
    if (format === 'csv' && Buffer.byteLength(delimiter, 'utf8') !== 1) return undefined;
    const syntax = format === 'csv' ? 'csv' : 'jsonl';
    parts.push({ file: part.name, path: part.path, size: part.size, bytes: pinnedBytes(part), first: { syntax, delimiter, columns: opts.columns } });
  }
  if (striped) return parts;
  // A few at a time: an S3 object's first bytes are a GET each.
  const limit = pLimit(8);
  const plain = await Promise.all(parts.map((p) => limit(() => (p.size === 0 ? true : firstBytes(p.bytes, Math.min(MAGIC_BYTES, p.size)).then(mayBeCut)))));
  return plain.every(Boolean) ? parts : undefined;
}

/** A part's bytes as a striped read opens them: a local file's pin, or the part's own reads (S3: ranged GETs with If-Match). */
function pinnedBytes(part: InputPart): RangeBytes {
  if (part.pin) return part.pin;
  return {
    open: (start, end) =>
      Readable.from(
        (async function* bytes(): AsyncGenerator<Buffer> {
          for await (const chunk of await part.open(start, end)) yield chunk as Buffer;
        })(),
        { objectMode: false },
      ),
  };
}

async function firstBytes(bytes: RangeBytes, count: number): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of bytes.open(0, count, count)) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).subarray(0, count);
}

/**
 * How many ranges each part is cut into: a part that can be cut, of at least two minimum stripes, into
 * about its share of `maxStripes` by bytes; any other part is one range. Pure.
 */
export function rangesPerPart(sizes: readonly number[], cuttable: readonly boolean[], maxStripes: number, minBytes: number): number[] {
  const total = sizes.reduce((sum, s) => sum + s, 0);
  return sizes.map((size, i) =>
    !cuttable[i] || size < 2 * minBytes ? 1 : Math.max(1, Math.min(Math.floor(size / minBytes), Math.round((size * maxStripes) / total), maxStripes)),
  );
}

/**
 * Which ranges (their bytes, in order) start a stripe: the first, and each whose middle is in a later one
 * of `maxStripes` equal shares of the bytes than the stripe's start, so stripes are of about equal bytes
 * and at most `maxStripes`; small parts run on in one stripe. (By the middle: ranges cut at record starts
 * begin a little before or after a share's edge.) Pure.
 */
export function stripeStarts(bytes: readonly number[], maxStripes: number): boolean[] {
  const total = bytes.reduce((sum, b) => sum + b, 0);
  let at = 0;
  let share = -1;
  let count = 0;
  return bytes.map((b) => {
    const here = total === 0 ? 0 : Math.floor((maxStripes * (at + b / 2)) / total);
    const starts = count === 0 || (here > share && count < maxStripes);
    if (starts) {
      share = here;
      count++;
    }
    at += b;
    return starts;
  });
}

/**
 * Cuts the set into stripes; undefined when the heads of the stripes show that it is not grouped by
 * partition key in listing order, or when it would make one stripe (it is then read whole).
 */
export async function planPartStripes(args: {
  parts: StripePart[];
  probe: (record: SourceRecord) => string | undefined;
  /** CSV with a string partition key: its column (planStripes's keyColumn). */
  keyColumn?: string;
  minBytes?: number;
}): Promise<PartStripePlan | undefined> {
  const { probe, keyColumn } = args;
  const minBytes = args.minBytes ?? MIN_STRIPE_BYTES;
  // Empty parts hold no rows (a CSV part's header alone is read as one range, with none either).
  const live = args.parts.filter((p) => p.size > 0);
  if (live.length === 0) return undefined;
  // Each S3 stripe holds a GET open while the others are written (S3_MAX_SOCKETS); some sockets are left for the rest.
  const maxStripes = live.some((p) => p.path === undefined) ? Math.min(MAX_STRIPES, S3_MAX_SOCKETS - 16) : MAX_STRIPES;
  // An S3 object is cut only in a set of few parts: its cut reads it whole once before the first write.
  const cutS3 = live.length < S3_PARTS_UNCUT;
  const counts = rangesPerPart(
    live.map((p) => p.size),
    live.map((p) => p.path !== undefined || cutS3),
    maxStripes,
    minBytes,
  );
  // An S3 object's cut reads all its bytes (cutObject): an object whose first rows already show keys out of
  // order is not worth it (a log, an export in time order), and the set streams through the window at once.
  const headLimit = pLimit(8);
  const mixed = await Promise.all(
    live.map((part, i) =>
      part.path !== undefined || counts[i]! < 2
        ? false
        : headLimit(async () =>
            headIsMixed(
              readRange(part.file, part.file, { start: 0, end: Math.min(part.size, MIXED_HEAD_BYTES), line: 1 }, part.first, undefined, part.bytes),
              probe,
            ),
          ),
    ),
  );
  if (mixed.some(Boolean)) return undefined;
  // The objects' cuts side by side, their GETs shared out while no stripe holds a socket yet.
  const scanLimit = pLimit(S3_MAX_SOCKETS / 2);
  const objectRanges = await Promise.all(
    live.map((part, i) => (part.path === undefined && counts[i]! >= 2 ? cutObject(part.bytes, part.size, part.first, counts[i]!, scanLimit) : undefined)),
  );
  const ranges: ByteRange[] = [];
  const partOf: number[] = [];
  const marks: (readonly RecordStart[])[] = [];
  const parts: PlannedPart[] = [];
  for (const [i, part] of live.entries()) {
    const whole = { start: 0, end: part.size, line: 1 };
    const cut =
      counts[i]! < 2
        ? { ranges: [whole], marks: [] }
        : part.path !== undefined
          ? await cutFile(part.path, part.size, part.first, counts[i]!, MARKS_PER_RANGE)
          : { ranges: objectRanges[i] ?? [whole], marks: [] };
    for (const range of cut.ranges) {
      ranges.push(range);
      partOf.push(i);
    }
    marks.push(cut.marks);
    // A CSV part's ranges past its start are read with its header's columns (read through its pin: an S3 object's by a GET).
    const columns =
      part.first.syntax === 'csv' && (part.path !== undefined || cut.ranges.length > 1)
        ? (part.first.columns ?? (await headerOf(part.path ?? part.file, part.file, whole, part.first, part.path === undefined ? part.bytes : undefined)))
        : part.first.columns;
    parts.push({ ...part, how: { ...part.first, columns } });
  }
  // As for one file: stripes of at least minBytes each, two at the least. A set of small parts is read
  // whole, through the window, where a striped read's proof (keys ascending in every stripe) would be
  // asked of parts too small to gain from it.
  const total = ranges.reduce((sum, r) => sum + (r.end - r.start), 0);
  // (A test that raises minBytes only to keep parts whole still gets its stripes: the floor is MIN_STRIPE_BYTES.)
  const stripesAtMost = Math.min(maxStripes, Math.floor(total / Math.min(minBytes, MIN_STRIPE_BYTES)));
  if (stripesAtMost < 2) return undefined;
  const starts = stripeStarts(
    ranges.map((r) => r.end - r.start),
    stripesAtMost,
  );
  const probeReader = (k: number): RangeReader => {
    const part = parts[partOf[k]!]!;
    const range = ranges[k]!;
    return readRange(
      part.path ?? part.file,
      part.file,
      range,
      range.start === 0 ? part.first : part.how,
      undefined,
      part.path === undefined ? part.bytes : undefined,
    );
  };
  const headOf = async (k: number): Promise<Head> => {
    const part = parts[partOf[k]!]!;
    const byCells = keyColumn !== undefined && part.path !== undefined ? await headByKeyCells(part.path, ranges[k]!, part.how, keyColumn) : undefined;
    return byCells ?? (await headByRows(probeReader(k), probe));
  };
  // Range 0 is read from its first row on: its head is only sampled for the verdict. A range that starts no stripe joins the one before whole.
  // A local head is read from disk, a few at a time; an S3 head is a GET, mostly waiting (an object cut in
  // 64 ranges took 3 s for its heads at 4 at a time on s3rver).
  const limit = pLimit(parts.some((p) => p.path === undefined) ? HEAD_GETS : 4);
  const heads: Head[] = await Promise.all(
    ranges.map((_, k) =>
      k === 0
        ? limit(async () => ({ ...(await headByRows(probeReader(0), probe)), rows: 0, bytes: 0, whole: false }))
        : starts[k]
          ? limit(() => headOf(k))
          : { rows: 0, bytes: 0, whole: true, keys: [] },
    ),
  );
  if (!headsAscending(heads)) return undefined;
  // Heads of local parts are cut at their bytes; an S3 object's head is counted in rows (read by both stripes).
  await Promise.all(
    heads.map((head, k) => {
      const part = parts[partOf[k]!]!;
      return k === 0 || !starts[k] || part.path === undefined ? undefined : limit(() => cutHead(part.path!, part.file, ranges[k]!, head, part.how));
    }),
  );
  const stripes: Stripe[] = [];
  for (const stripe of stripesOf(ranges, heads, partOf)) stripes.push(...(await isolateInPart(stripe, parts, marks, probe, keyColumn)));
  // One stripe would be input order held to a proof it does not need.
  if (stripes.length < 2) return undefined;
  // Pieces name their part by its index in the set (empty parts included), as rows' places do everywhere else.
  const setIndex = args.parts.flatMap((p, i) => (p.size > 0 ? [i] : []));
  const planned = new Map(parts.map((p, i) => [setIndex[i]!, p]));
  return {
    stripes: stripes.map((stripe) => ({ ...stripe, pieces: stripe.pieces.map((piece) => ({ ...piece, part: setIndex[piece.part!]! })) })),
    parts: args.parts.map((part, i) => planned.get(i) ?? { ...part, how: part.first }),
  };
}

/** A stripe within one local part, with a key running across whole ranges made a stripe of its own (stripeKeys.ts); any other stripe as it is. */
async function isolateInPart(
  stripe: Stripe,
  parts: readonly PlannedPart[],
  marks: readonly (readonly RecordStart[])[],
  probe: (record: SourceRecord) => string | undefined,
  keyColumn: string | undefined,
): Promise<Stripe[]> {
  const p = stripe.pieces[0]!.part!;
  const part = parts[p]!;
  if (part.path === undefined || stripe.pieces.some((piece) => piece.part !== p)) return [stripe];
  const reading = {
    path: part.path,
    file: part.file,
    first: part.first,
    how: part.how,
    probe,
    marks: marks[p]!,
    ...(keyColumn !== undefined ? { keyColumn } : {}),
  };
  const split = await isolateRunningKeys([stripe], reading);
  // The stripes cut out of it are in the same part.
  return split.map((s) => ({ ...s, pieces: s.pieces.map((piece): Piece => ({ ...piece, part: p })) }));
}

/**
 * Reads the header row of each CSV part named that the plan left without its columns (an S3 object read
 * as one range never needed them), so its records can be read from a byte past its start: where a resume
 * reopens a stripe.
 */
export async function withColumns(plan: PartStripePlan, partIndexes: Iterable<number>): Promise<void> {
  await Promise.all(
    [...new Set(partIndexes)].map(async (i) => {
      const part = plan.parts[i]!;
      if (part.how.syntax !== 'csv' || part.how.columns !== undefined) return;
      const columns = await headerOf(
        part.path ?? part.file,
        part.file,
        { start: 0, end: part.size, line: 1 },
        part.first,
        part.path === undefined ? part.bytes : undefined,
      );
      plan.parts[i] = { ...part, how: { ...part.how, columns } };
    }),
  );
}

/** Opens the reading of a set's planned stripes: each piece by its part's pinned bytes. */
export function readPartStripes(plan: PartStripePlan, restart?: StripeRestart): StripedRead {
  const { stripes, parts } = plan;
  const total = parts.reduce((sum, p) => sum + p.size, 0);
  const open = new Set<RangeReader>();
  let closedBytes = 0;
  const openRange = (range: ByteRange, piece: Piece): RangeReader => {
    const part = parts[piece.part!]!;
    const reader = readRange(part.path ?? part.file, part.file, range, range.start === 0 ? part.first : part.how, undefined, part.bytes);
    open.add(reader);
    // A set may have thousands of parts: a reader's count moves to the total when it is closed, and the reader is let go.
    return {
      ...reader,
      close: () => {
        reader.close();
        if (open.delete(reader)) closedBytes += reader.bytesRead();
      },
    };
  };
  const partIndex = new Map(parts.map((p, i) => [p.file, i]));
  const { chunks, pointAt } = stripedChunks(stripes, openRange, restart, (file) => partIndex.get(file) ?? -1);
  const before = bytesBefore(restart);
  return {
    chunks,
    records: eachRecord(chunks),
    parts: stripes.length,
    ...(pointAt ? { pointAt } : {}),
    // A head counted in rows is read twice (and each reader reads a little ahead): progress stops at the set's size.
    bytesRead: () =>
      Math.min(
        total,
        [...open].reduce((sum, r) => sum + r.bytesRead(), closedBytes + before),
      ),
    close: () => {
      for (const r of [...open]) {
        r.close();
        open.delete(r);
      }
    },
  };
}
