import { divisionOf, exportSpans, ownersOf, rangeLayout, type DivisionBy, type DivisionOptions } from '../load/shares.js';
import type { InputSet } from '../reading/inputSet.js';

/**
 * How N workers (`--segment 0/N` … `N-1/N`) would divide the whole load the estimate reads, pure: the same
 * rule and the same deal as load/shares.ts, so the estimate names the division every worker of the load
 * will take, and the bytes the largest share reads. The estimate reads the input once, as one process; the
 * workers' read phase is then scaled by the share each one reads (its own bytes divided by part, every byte
 * divided by key).
 */
export interface WorkersPlan {
  count: number;
  by: DivisionBy;
  /** Why the parts can or cannot be divided (load/shares.ts's words). */
  why: string;
  /** The bytes of the listing: the input. */
  inputBytes: number;
  /** The bytes the worker with the most reads: its share of the parts, or every byte when divided by key. */
  largestShareBytes: number;
  /** The bytes all the workers read together: the input once when divided by part, N times by key. */
  bytesReadByAll: number;
  /**
   * The slowest reading against the input: what scales one process's read phase to the workers'. The
   * largest share; in a chain, the largest share of each export in turn (no worker starts an export
   * before every worker has written the one before it).
   */
  readShare: number;
}

export function planWorkers(set: Pick<InputSet, 'parts' | 'exports'>, workers: number, options: Omit<DivisionOptions, 'segment'>): WorkersPlan {
  const sizes = set.parts.map((p) => p.part.size ?? 0);
  const inputBytes = sizes.reduce((a, b) => a + b, 0);
  // One worker divides nothing: it reads every part, once.
  const division = divisionOf(set, { ...options, segment: { index: 0, count: workers } }) ?? { by: 'parts', why: 'one worker reads every part' };
  if (division.by === 'keys')
    return { count: workers, by: 'keys', why: division.why, inputBytes, largestShareBytes: inputBytes, bytesReadByAll: inputBytes * workers, readShare: 1 };
  if (division.by === 'ranges')
    return rangesPlan(
      sizes,
      set.parts.map((p) => p.part.path === undefined && p.part.name.startsWith('s3://')),
      workers,
      division.why,
    );
  const spans = division.by === 'chain' ? exportSpans(set) : undefined;
  const owner = ownersOf(set.parts, workers, spans);
  const largestOf = (first: number, count: number) => {
    const shares = new Array<number>(workers).fill(0);
    for (let i = first; i < first + count; i++) shares[owner[i]!]! += sizes[i]!;
    return Math.max(...shares);
  };
  const largest = largestOf(0, sizes.length);
  const slowest = spans ? spans.reduce((sum, s) => sum + largestOf(s.first, s.count), 0) : largest;
  return {
    count: workers,
    by: division.by,
    why: division.why,
    inputBytes,
    largestShareBytes: largest,
    bytesReadByAll: inputBytes,
    // Parts of unknown size (stdin cannot be divided: one part) count as the whole.
    readShare: inputBytes > 0 ? slowest / inputBytes : 1,
  };
}

/**
 * Parts cut into byte ranges (load/rangeCuts.ts): each worker reads its ranges, and first scans the bytes of
 * its segment of a part for where records start (all but each part's last segment), so the bytes read by all
 * are the input and those segments again; an S3 part's scanned segment is copied as it is scanned and its
 * range read from the copy (load/segmentCopy.ts), so an S3 part is fetched once.
 */
function rangesPlan(sizes: readonly number[], remote: readonly boolean[], workers: number, why: string): WorkersPlan {
  const inputBytes = sizes.reduce((a, b) => a + b, 0);
  const layout = rangeLayout(sizes, workers);
  const perWorker = new Array<number>(workers).fill(0);
  // The scan of a segment for record starts skips from quote to line break, without parsing: its bytes do not slow the read phase as a range's do.
  const parsed = new Array<number>(workers).fill(0);
  let scanned = 0;
  let r = 0;
  for (const [p, starts] of layout.segments.entries())
    for (let k = 0; k < starts.length; k++, r++) {
      const bytes = (k + 1 < starts.length ? starts[k + 1]! : sizes[p]!) - starts[k]!;
      const scan = k + 1 < starts.length ? bytes : 0;
      perWorker[layout.owner[r]!]! += bytes + scan;
      parsed[layout.owner[r]!]! += bytes;
      if (!remote[p]) scanned += scan;
    }
  const largest = Math.max(...perWorker);
  return {
    count: workers,
    by: 'ranges',
    why,
    inputBytes,
    largestShareBytes: largest,
    bytesReadByAll: inputBytes + scanned,
    readShare: inputBytes > 0 ? Math.max(...parsed) / inputBytes : 1,
  };
}
