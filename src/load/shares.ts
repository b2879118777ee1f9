import type { ListedPart } from '../reading/inputPart.js';
import type { InputSet } from '../reading/inputSet.js';
import type { OrderMode } from '../ordering/order.js';
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
 * By key hash otherwise: every worker reads every part and writes the partition keys of its segment
 * (segment.ts). That is what keeps a key's rows in input order when they may be spread over parts: an
 * export chain with no checkpoint or a global order, or parts of unknown content.
 *
 * The division needs the listing every worker shares (--listing): a worker that listed other parts would
 * take other shares, and a part could then be read by two workers or by none.
 */
export type DivisionBy = 'parts' | 'chain' | 'keys';

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
}

export interface DivisionOptions {
  segment: Segment | undefined;
  partsDisjoint: boolean;
  /** --checkpoint: a chain is divided by part only with one (see above). */
  checkpointPath?: string | undefined;
  order?: OrderMode | undefined;
  /** --transform: it may write a key read in one part from another part's rows too, so parts are divided only under --parts-disjoint. */
  transform?: unknown;
}

/** Orders that hold nothing across an export boundary once emptied there (WriteOrderer.restart). */
const CHAIN_ORDERS: ReadonlySet<OrderMode> = new Set(['auto', 'window', 'input']);

export function divisionOf(set: Pick<InputSet, 'parts' | 'exports'>, options: DivisionOptions): Division | undefined {
  const { segment } = options;
  if (segment === undefined || segment.count < 2) return undefined;
  if (set.parts.length < segment.count)
    return {
      by: 'keys',
      why: `${set.parts.length === 1 ? 'one part' : `${set.parts.length} parts`} for ${segment.count} workers: every worker reads every part and writes the keys of its segment`,
    };
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
