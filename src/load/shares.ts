import type { ListedPart } from '../reading/inputPart.js';
import { formatFromName, nameBeforeCompression, type InputFormat } from '../reading/inputFormat.js';
import type { InputSet } from '../reading/inputSet.js';
import type { OrderMode } from '../ordering/order.js';
import type { CopyTally } from './segmentCopy.js';
import type { Segment } from './segment.js';

/**
 * How the workers of one load (`--segment i/N`) divide the work, pure.
 *
 * By part, where no primary key is in two parts: each worker reads only its share of the parts, so the
 * input is read once by all workers together. That holds for one DynamoDB export, full or incremental
 * (DynamoDB writes one record per item into one of its data files), and for a set the user vouches for
 * with --parts-disjoint. Writes to one primary key then all come from one part, read by one worker in
 * order, so dividing the parts keeps every key's order.
 *
 * An export chain (a full export, then incrementals) by part too, each export's data files dealt apart, with
 * a barrier between exports (exportBarrier.ts): an item's record in export k+1 is in a part another worker
 * may read, so no worker hands on a row of export k+1 before every worker has settled its rows of exports
 * up to k. That needs a checkpoint (a worker run again without one would write export k again over the
 * others' later exports) and an order that can empty itself at the boundary (input, window, auto).
 *
 * By byte range, where there are fewer parts than workers and the user vouches that no primary key is in
 * two places (--parts-disjoint: a table's dump, a file sorted by key): each part is cut into ranges of
 * about equal bytes at record starts, every range read by one worker (rangeCuts.ts finds the exact cuts
 * with the other workers). Plain CSV and JSON Lines only: a compressed part or a JSON document cannot be
 * read from the middle.
 *
 * By key hash otherwise: every worker reads every part and writes the partition keys of its segment
 * (segment.ts). That is what keeps a key's rows in input order when they may be spread over parts: an
 * export chain with no checkpoint or a global order, or parts of unknown content.
 *
 * The division needs the listing every worker shares (--listing): a worker that listed other parts would
 * take other shares, and a part could then be read by two workers or by none.
 */
export type DivisionBy = 'parts' | 'chain' | 'keys' | 'ranges';

export interface Division {
  by: DivisionBy;
  /** Why, in words for the summary: what makes the parts safe to divide, or why they are not. */
  why: string;
}

/** One worker's share: the parts it reads, and what the others read. */
export interface Share extends Division {
  /** This worker's parts, in listing order (the order a load of them alone reads them in). */
  parts: ListedPart[];
  bytes: number;
  /** Parts and bytes the other workers read. */
  otherParts: number;
  otherBytes: number;
  /** A chain's: the export (its index in the chain) of each of this worker's parts. */
  exportOfPart?: number[];
  /** Divided by range: the bytes this worker read to find where its ranges start and end (rangeCuts.ts), besides reading them. */
  scannedBytes?: number;
  /** Divided by range: the bytes read back from the local copies of the segments it scanned (segmentCopy.ts), its ranges' and any look at a part's head. */
  copied?: CopyTally;
}

export interface DivisionOptions {
  segment: Segment | undefined;
  partsDisjoint: boolean;
  /** --checkpoint: a chain is divided by part only with one (see above). */
  checkpointPath?: string | undefined;
  order?: OrderMode | undefined;
  /** --transform: it may write a key read in one part from another part's rows too, so parts are divided only under --parts-disjoint. */
  transform?: unknown;
  /** --input-format: what a part is read as when its name does not say (a range cut needs a line format). */
  inputFormat?: InputFormat | undefined;
  /** --deletes: not cut into ranges (a delete's key may be anywhere). */
  deletes?: unknown;
}

/** Formats a part can be cut in at record starts without reading it from its start (one record a line or CSV). */
const RANGE_FORMATS: ReadonlySet<InputFormat> = new Set(['csv', 'jsonl', 'ddb-json']);

/**
 * A part that can be cut into byte ranges, as far as its listing says: of known size, read as CSV or JSON
 * Lines, named without a compression suffix, and not named .json (a JSON document is read whole). Its
 * first bytes are checked when it is cut (rangeCuts.ts): a compressed file under a plain name is refused there.
 */
export function cuttableByName(listed: ListedPart, forced: InputFormat | undefined): boolean {
  const { part } = listed;
  if (listed.format !== undefined || part.size === undefined || part.name === 'stdin') return false;
  const plainName = nameBeforeCompression(part.name);
  if (plainName !== part.name.toLowerCase() || plainName.endsWith('.json')) return false;
  const format = forced ?? formatFromName(part.name);
  return format !== undefined && RANGE_FORMATS.has(format);
}

/** Bytes a part's range holds at least: smaller parts are one range (a few records each would be all overhead). */
export const MIN_RANGE_BYTES = 64 * 1024;

const BOM_BYTES = 3;

/**
 * How the parts of a set divided by range are cut, pure: each part into ranges in proportion to its bytes
 * (at least one, none under MIN_RANGE_BYTES unless the part is), so there are about as many ranges as
 * workers; `segments[p]` are the first bytes of part p's segments (0 first), where the cuts are looked for.
 * The ranges, in listing order, are then dealt to the workers as parts are (dealParts, by segment bytes).
 */
export interface RangeLayout {
  segments: number[][];
  /** The worker each range goes to, ranges numbered through the parts in order. */
  owner: number[];
}

export function rangeLayout(sizes: readonly number[], workers: number, minBytes = MIN_RANGE_BYTES): RangeLayout {
  const total = sizes.reduce((a, b) => a + b, 0);
  const segments = sizes.map((size) => {
    const wanted = total > 0 ? Math.round((size * workers) / total) : 1;
    // A first segment of just a UTF-8 BOM would put the next cut at the first record (a header row read as a row, its BOM as text): 4 bytes at least.
    const count = Math.max(1, Math.min(wanted, Math.floor(size / Math.max(minBytes, BOM_BYTES + 1))));
    return Array.from({ length: count }, (_, k) => Math.floor((size * k) / count));
  });
  const bytes = segments.flatMap((starts, p) => starts.map((start, k) => (k + 1 < starts.length ? starts[k + 1]! : sizes[p]!) - start));
  // No more ranges than workers: range k to worker k (one part's workers then read it in order, each after the one before).
  const owner = bytes.length <= workers ? bytes.map((_, k) => k) : dealParts(bytes, workers);
  return { segments, owner };
}

/** Orders that hold nothing across an export boundary once emptied there (WriteOrderer.restart). */
const CHAIN_ORDERS: ReadonlySet<OrderMode> = new Set(['auto', 'window', 'input']);

export function divisionOf(set: Pick<InputSet, 'parts' | 'exports'>, options: DivisionOptions): Division | undefined {
  const { segment } = options;
  if (segment === undefined || segment.count < 2) return undefined;
  if (set.parts.length < segment.count) {
    const few = `${set.parts.length === 1 ? 'one part' : `${set.parts.length} parts`} for ${segment.count} workers`;
    const uncut = set.parts.find((p) => !cuttableByName(p, options.inputFormat));
    if (options.partsDisjoint && uncut === undefined && !options.deletes)
      return {
        by: 'ranges',
        why: `--parts-disjoint with ${few}: each part cut into byte ranges at record starts, one worker a range; no primary key is in two of them`,
      };
    const hint = options.partsDisjoint
      ? uncut
        ? ` (${uncut.part.name} cannot be cut into byte ranges: only plain .csv, .tsv, .jsonl and .ndjson files or objects can)`
        : ' (--deletes: its keys may be anywhere in the file)'
      : ' (pass --parts-disjoint when no primary key is in two places of the input, to have each worker read only a byte range of it)';
    return { by: 'keys', why: `${few}: every worker reads every part and writes the keys of its segment${hint}` };
  }
  if (options.transform !== undefined && !options.partsDisjoint)
    return {
      by: 'keys',
      why: '--transform may write keys its input does not hold where they are (pass --parts-disjoint if no key it writes comes from two parts): every worker reads every part and writes the keys of its segment',
    };
  const allExport = set.parts.every((p) => p.format !== undefined && p.format.startsWith('export-'));
  // An export chain before --parts-disjoint: an item changed in a window is in the full export and in that
  // incremental, whatever the user vouches for the data files of one export, so only the barrier keeps it.
  if (options.partsDisjoint && !(allExport && set.exports.length > 1)) return { by: 'parts', why: '--parts-disjoint: no primary key is in two parts' };
  if (allExport && set.exports.length === 1)
    return { by: 'parts', why: `one DynamoDB export (${set.exports[0]!.name}): each item is in one of its data files` };
  if (allExport && exportSpans(set) !== undefined) {
    const chain = `an export chain of ${set.exports.length} exports`;
    if (options.checkpointPath !== undefined && CHAIN_ORDERS.has(options.order ?? 'auto'))
      return {
        by: 'chain',
        why: `${chain}, each divided by data file; no worker starts an export before every worker has written the one before it`,
      };
    const missing = options.checkpointPath === undefined ? 'pass --checkpoint to every worker' : `use --order auto, window or input (not ${options.order})`;
    return {
      by: 'keys',
      why: `${chain}: an item's records in several exports must be written in chain order, so every worker reads every export and writes the keys of its segment (${missing} to have each read only its share of each export)`,
    };
  }
  return {
    by: 'keys',
    why: 'a key may be in several parts, and its rows must be written in input order: every worker reads every part and writes the keys of its segment (pass --parts-disjoint when no primary key is in two parts, to have each worker read only its share)',
  };
}

/**
 * Worker `segment.index`'s share of the parts: the parts dealt out by size, largest first, each to the
 * worker with the fewest bytes so far (then the fewest parts, then the lowest index), so shares come out
 * within one part's size of each other and, with at least as many parts as workers, none is empty.
 * Deterministic from the listing alone: every worker computes the same deal.
 */
export function shareOf(parts: readonly ListedPart[], segment: Segment, division: Division, spans?: readonly ExportSpan[]): Share {
  const owner = ownersOf(parts, segment.count, spans);
  const mine = parts.filter((_, i) => owner[i] === segment.index);
  const bytes = sumBytes(mine);
  const share: Share = { ...division, parts: mine, bytes, otherParts: parts.length - mine.length, otherBytes: sumBytes(parts) - bytes };
  if (spans) share.exportOfPart = spans.flatMap(({ count }, e) => new Array<number>(count).fill(e)).filter((_, i) => owner[i] === segment.index);
  return share;
}

/** The worker each part goes to (by index): dealt by size, or a chain's export by export (`spans`). */
export function ownersOf(parts: readonly ListedPart[], workers: number, spans?: readonly ExportSpan[]): number[] {
  return spans
    ? dealChain(parts, spans, workers)
    : dealParts(
        parts.map((p) => p.part.size ?? 0),
        workers,
      );
}

/** The worker each part goes to (by index), for parts of these sizes dealt to `workers`. */
export function dealParts(sizes: readonly number[], workers: number): number[] {
  const owner = new Array<number>(sizes.length).fill(0);
  const load = new Array<number>(workers).fill(0);
  const count = new Array<number>(workers).fill(0);
  const bySize = sizes.map((size, i) => ({ size, i })).sort((a, b) => b.size - a.size || a.i - b.i);
  for (const { size, i } of bySize) {
    let least = 0;
    for (let w = 1; w < workers; w++) if (load[w]! < load[least]! || (load[w] === load[least] && count[w]! < count[least]!)) least = w;
    owner[i] = least;
    load[least]! += size;
    count[least]!++;
  }
  return owner;
}

/** Where one export's data files are in the listing: parts [first, first + count). */
export interface ExportSpan {
  first: number;
  count: number;
}

/**
 * Each export's parts in the listing, in chain order: the listing holds an export's data files together,
 * exports in chain order (dynamodbExport.ts partsOfExports). Undefined when the counts do not cover the
 * parts exactly (then the parts cannot be told apart by export, and the chain is divided by key).
 */
export function exportSpans(set: Pick<InputSet, 'parts' | 'exports'>): ExportSpan[] | undefined {
  const spans: ExportSpan[] = [];
  let first = 0;
  for (const e of set.exports) {
    spans.push({ first, count: e.parts });
    first += e.parts;
  }
  return first === set.parts.length && set.exports.length > 0 ? spans : undefined;
}

/**
 * A chain's parts dealt export by export: each export's parts by size, as dealParts does, first to the
 * workers with the fewest parts so far. Every worker then has a part when the chain has as many parts as
 * workers (an export of fewer files than workers goes to those that have none yet), and a chain of
 * one-file incrementals is spread over the workers rather than all on worker 0.
 */
function dealChain(parts: readonly ListedPart[], spans: readonly ExportSpan[], workers: number): number[] {
  const owner: number[] = [];
  const count = new Array<number>(workers).fill(0);
  for (const { first, count: n } of spans) {
    const byFewest = Array.from({ length: workers }, (_, w) => w).sort((a, b) => count[a]! - count[b]! || a - b);
    for (const w of dealParts(
      parts.slice(first, first + n).map((p) => p.part.size ?? 0),
      workers,
    )) {
      const to = byFewest[w]!;
      owner.push(to);
      count[to]!++;
    }
  }
  return owner;
}

function sumBytes(parts: readonly ListedPart[]): number {
  return parts.reduce((sum, p) => sum + (p.part.size ?? 0), 0);
}
