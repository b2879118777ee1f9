import type { ListedPart } from '../reading/inputPart.js';
import type { InputSet } from '../reading/inputSet.js';
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
 * By key hash otherwise: every worker reads every part and writes the partition keys of its segment
 * (segment.ts). That is what keeps a key's rows in input order when they may be spread over parts: an
 * export chain (an item's full-export record, then each incremental's), or parts of unknown content.
 *
 * The division needs the listing every worker shares (--listing): a worker that listed other parts would
 * take other shares, and a part could then be read by two workers or by none.
 */
export type DivisionBy = 'parts' | 'keys';

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
}

export function divisionOf(set: Pick<InputSet, 'parts' | 'exports'>, options: { segment: Segment | undefined; partsDisjoint: boolean }): Division | undefined {
  const { segment } = options;
  if (segment === undefined || segment.count < 2) return undefined;
  if (set.parts.length < segment.count)
    return {
      by: 'keys',
      why: `${set.parts.length === 1 ? 'one part' : `${set.parts.length} parts`} for ${segment.count} workers: every worker reads every part and writes the keys of its segment`,
    };
  if (options.partsDisjoint) return { by: 'parts', why: '--parts-disjoint: no primary key is in two parts' };
  const allExport = set.parts.every((p) => p.format !== undefined && p.format.startsWith('export-'));
  if (allExport && set.exports.length === 1)
    return { by: 'parts', why: `one DynamoDB export (${set.exports[0]!.name}): each item is in one of its data files` };
  if (allExport)
    return {
      by: 'keys',
      why: `an export chain of ${set.exports.length} exports: an item's records in several exports must be written in chain order, so every worker reads every export and writes the keys of its segment`,
    };
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
export function shareOf(parts: readonly ListedPart[], segment: Segment, division: Division): Share {
  const owner = dealParts(
    parts.map((p) => p.part.size ?? 0),
    segment.count,
  );
  const mine = parts.filter((_, i) => owner[i] === segment.index);
  const bytes = sumBytes(mine);
  return { ...division, parts: mine, bytes, otherParts: parts.length - mine.length, otherBytes: sumBytes(parts) - bytes };
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

function sumBytes(parts: readonly ListedPart[]): number {
  return parts.reduce((sum, p) => sum + (p.part.size ?? 0), 0);
}
