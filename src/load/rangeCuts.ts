import { setTimeout as sleep } from 'node:timers/promises';
import { entryStates, SegmentScan, stateKey, type SegmentPass, type SegmentSummary } from '../ordering/stripes/objectCuts.js';
import { RecordStartScanner, type RecordStart, type RecordSyntax, type ScanState } from '../ordering/stripes/recordStarts.js';
import { delimiterOf, formatFromName, type InputFormat } from '../reading/inputFormat.js';
import type { ListedPart, InputPart } from '../reading/inputPart.js';
import type { InputSet } from '../reading/inputSet.js';
import { jsonShapeOf } from '../reading/jsonShape.js';
import { headerRowOf } from '../reading/partHeads.js';
import { mayBeCut } from '../reading/magic.js';
import type { S3Access } from '../reading/s3Part.js';
import { LoaderError } from '../shared/errors.js';
import type { SegmentCopies } from './segmentCopy.js';
import type { Segment } from './segment.js';
import { rangeLayout, type Division, type Share } from './shares.js';
import { localWorkerStore, s3WorkerStore, type WorkerDocStore } from './workerBoard.js';

/**
 * The exact byte ranges of the parts of a load divided by range (shares.ts), found together by its workers.
 *
 * A range past a part's first byte must start exactly where a record starts and know its line: a CSV line
 * break may be inside a quoted field opened any distance before, and the line is the count of every line
 * break before. Both depend on every byte before the cut, which no worker wants to read twice. So each
 * worker scans the bytes of its own segment of the part once, from every state a scan can be in at its first
 * byte (objectCuts.ts's SegmentScan: a few states, most of which meet within a few bytes), and writes what
 * that gives (for each entry state: the first record start, the state at the end, the line breaks) beside
 * the listing, where the others read it. From the part's start, whose state is known, the segments' passes
 * in order then give every cut's record start and line: what one pass from the first byte would find.
 *
 * A worker waits for the passes of the segments before its own, which their workers write as soon as they
 * have scanned them (in about the time it takes to read its own). One that has not written its pass within
 * `waitMs` (not started yet: an array job's children start apart; killed) has its segment scanned here
 * instead, and the pass written for the others; every worker finds the same pass, so two writing it agree.
 *
 * The documents hold offsets, line counts and scan states, never row data; local ones are private (0600).
 * A restarted worker finds its pass and the others' there: it reads nothing again to cut.
 */

export const RANGE_SCAN_FORMAT = 'ddb-spread-range-scan';

export interface RangeCutOptions {
  listing: string;
  /** The listing's listedAt, recorded in the scans (for a person reading them). */
  listedAt: string;
  segment: Segment;
  s3: () => Promise<S3Access>;
  delimiter: string | undefined;
  inputFormat: InputFormat | undefined;
  /** How long to wait for another worker's pass before scanning its segment here (ms). */
  waitMs?: number;
  pollMs?: number;
  /** The smallest range (shares.ts' MIN_RANGE_BYTES otherwise): a unit test's small file cut for several workers. */
  minRangeBytes?: number;
  /** Where the segments this worker scans of S3 parts are copied, so that its ranges are fetched once (segmentCopy.ts). */
  copies?: SegmentCopies;
  warn: (message: string) => void;
  stopping: () => boolean;
}

const WAIT_MS = 60_000;
/** The first window a segment's head is read in, for its first record start. */
const HEAD_BYTES = 4 * 1024;
const LF = 10;
const CR = 13;
/** The first bytes a whole read looks at to tell JSON Lines from one JSON document (a file's first chunk). */
const JSON_HEAD_BYTES = 64 * 1024;
const POLL_MS = 250;

/** What this worker reads of a set divided by range: its ranges, each a part read from its start to its end. */
export async function rangeShare(set: InputSet, division: Division, o: RangeCutOptions): Promise<Share> {
  const sizes = set.parts.map((p) => p.part.size ?? 0);
  const layout = rangeLayout(sizes, o.segment.count, o.minRangeBytes);
  const mine: { p: number; k: number }[] = [];
  let r = 0;
  for (const [p, starts] of layout.segments.entries())
    for (let k = 0; k < starts.length; k++, r++) if (layout.owner[r] === o.segment.index) mine.push({ p, k });
  const cutters = new Map<number, PartCutter>();
  const cutterOf = (p: number) => {
    let cutter = cutters.get(p);
    if (!cutter) cutters.set(p, (cutter = new PartCutter(set.parts[p]!, p, layout.segments[p]!, o)));
    return cutter;
  };
  // Every pass the others wait for, first: then this worker's own waits.
  for (const p of new Set(mine.map((m) => m.p))) await cutterOf(p).checkPlain();
  for (const { p, k } of mine) if (k + 1 < layout.segments[p]!.length) await cutterOf(p).pass(k, 'own');
  const parts: ListedPart[] = [];
  for (const { p, k } of mine) {
    const range = await cutterOf(p).range(k);
    if (range && range.end > range.start) {
      // A first row that does not parse as a header (a headerless file read with --columns: an empty cell, a
      // value twice) is not carried: the range's read then takes --columns, or reads the head and refuses it there.
      const header = await cutterOf(p)
        .header()
        .catch((error: unknown) => {
          if (error instanceof LoaderError) return undefined;
          throw error;
        });
      parts.push({ ...set.parts[p]!, part: cutterOf(p).copyOf(k) ?? set.parts[p]!.part, range, ...(header ? { header } : {}) });
    }
  }
  const bytes = parts.reduce((sum, p) => sum + (p.range!.end - p.range!.start), 0);
  const total = sizes.reduce((a, b) => a + b, 0);
  const scannedBytes = [...cutters.values()].reduce((sum, c) => sum + c.scannedBytes, 0);
  return {
    ...division,
    parts,
    bytes,
    otherParts: layout.owner.length - mine.length,
    otherBytes: total - bytes,
    scannedBytes,
    ...(o.copies ? { copied: o.copies.tally } : {}),
  };
}

/** One part's cuts: its segments' passes (own, read from beside the listing, or scanned here), and the ranges they give. */
class PartCutter {
  readonly #passes = new Map<number, SegmentSummary>();
  /** The part with segment k's bytes read from the local copy made as this worker scanned it (S3 parts only). */
  readonly #copies = new Map<number, InputPart>();
  /** Bytes read here to find the cuts (the segments scanned, the heads read, the first bytes checked). */
  scannedBytes = 0;
  readonly #syntax: RecordSyntax;
  readonly #delimiter: string;
  /** A CSV part's first record after its header row (#pastHeader), read once when a cut needs it. */
  #afterHeader: Promise<RecordStart> | undefined;
  /** The bytes before it (a BOM, blank lines, the header row): its names, for the reads of the ranges. */
  #headerBytes: Buffer | undefined;

  constructor(
    readonly listed: ListedPart,
    readonly index: number,
    readonly starts: readonly number[],
    readonly o: RangeCutOptions,
  ) {
    const format = o.inputFormat ?? formatFromName(listed.part.name);
    this.#syntax = format === 'csv' ? 'csv' : 'jsonl';
    this.#delimiter = delimiterOf(listed.part.name, o.delimiter);
    if (this.#syntax === 'csv' && Buffer.byteLength(this.#delimiter, 'utf8') !== 1)
      throw new LoaderError(
        'INVALID_OPTION',
        `--parts-disjoint cuts ${listed.part.name} into byte ranges, which needs a one-byte delimiter (got ${JSON.stringify(this.#delimiter)}); leave out --parts-disjoint to have every worker read the whole file`,
      );
  }

  get #part(): InputPart {
    return this.listed.part;
  }

  get #size(): number {
    return this.#part.size ?? 0;
  }

  /**
   * A compressed or Parquet file under a plain name, or one JSON document (a pretty-printed array, scan
   * output) under a JSON Lines name, cannot be read from its middle: refused before any write, by every
   * worker alike. A whole read tells a JSON document by its first chunk (jsonDocumentFormat.ts): so here.
   */
  async checkPlain(): Promise<void> {
    const head = await readBytes(this.#part, 0, Math.min(this.#syntax === 'jsonl' ? JSON_HEAD_BYTES : 6, this.#size));
    this.scannedBytes += head.length;
    const refuse = (what: string) =>
      new LoaderError(
        'INVALID_OPTION',
        `${this.#part.name} is ${what}: it cannot be cut into byte ranges for --parts-disjoint; name it for what it is, or leave out --parts-disjoint to have every worker read it whole`,
        { file: this.#part.name },
      );
    if (!mayBeCut(head.subarray(0, 6))) throw refuse('compressed (or Parquet) although its name says plain text');
    if (this.#syntax === 'jsonl' && jsonShapeOf(head.toString('utf8')) !== 'lines')
      throw refuse('one JSON document (an array or scan output, over many lines) although its name says JSON Lines (one object a line)');
  }

  copyOf(k: number): InputPart | undefined {
    return this.#copies.get(k);
  }

  #end(k: number): number {
    return k + 1 < this.starts.length ? this.starts[k + 1]! : this.#size;
  }

  #store(k: number): WorkerDocStore {
    const path = `${this.o.listing}.range-scan-${this.index}-${k}-of-${this.starts.length}.json`;
    return path.startsWith('s3://') ? s3WorkerStore(path, this.o.s3) : localWorkerStore(path);
  }

  /**
   * Segment k's pass: known, read from beside the listing, or (`own`, or once its worker has been silent
   * past waitMs) scanned here and written there.
   */
  async pass(k: number, how: 'own' | 'wait'): Promise<SegmentSummary> {
    const known = this.#passes.get(k);
    if (known) return known;
    const store = this.#store(k);
    const waitMs = this.o.waitMs ?? WAIT_MS;
    const from = performance.now();
    for (;;) {
      const found = await this.#read(store);
      if (found) return this.#keep(k, found);
      if (how === 'own' || performance.now() - from >= waitMs) break;
      if (this.o.stopping()) throw new LoaderError('ABORTED', `stopped while waiting for the scan of ${store.where}`);
      await sleep(this.o.pollMs ?? POLL_MS);
    }
    if (how === 'wait')
      this.o.warn(
        `no worker has written where the records of segment ${k + 1} of ${this.starts.length} of ${this.#part.name} start (${store.where}) after ${Math.round(waitMs / 1000)} s: this worker scans its ${this.#end(k) - this.starts[k]!} bytes itself`,
      );
    const summary = await this.#scan(k, how === 'own');
    await store.write(`${JSON.stringify(this.#doc(k, summary), null, 2)}\n`);
    return this.#keep(k, summary);
  }

  #keep(k: number, summary: SegmentSummary): SegmentSummary {
    this.#passes.set(k, summary);
    return summary;
  }

  /** Scans segment k; this worker's own segment of an S3 part is copied as it is read, for its range (segmentCopy.ts). */
  async #scan(k: number, own: boolean): Promise<SegmentSummary> {
    const scan = new SegmentScan(this.#syntax, Buffer.from(this.#delimiter, 'utf8')[0]!, k === 0);
    const [start, end] = [this.starts[k]!, this.#end(k)];
    const remote = this.#part.path === undefined && this.#part.name.startsWith('s3://');
    const copy = own && remote && this.o.copies ? await this.o.copies.start(this.#part, start, end - start, `${this.index}-${k}`) : undefined;
    try {
      for await (const chunk of await this.#part.open(start, end)) {
        scan.feed(chunk as Buffer);
        this.scannedBytes += (chunk as Buffer).length;
        await copy?.write(chunk as Buffer);
      }
    } catch (error) {
      await copy?.discard();
      throw error;
    }
    const copied = await copy?.finish(end);
    if (copied) this.#copies.set(k, copied);
    return scan.summary();
  }

  #doc(k: number, summary: SegmentSummary): RangeScanDoc {
    return {
      format: RANGE_SCAN_FORMAT,
      version: 1,
      listedAt: this.o.listedAt,
      part: this.#part.name,
      size: this.#size,
      ...(this.#part.etag !== undefined ? { etag: this.#part.etag } : {}),
      syntax: this.#syntax,
      delimiter: this.#delimiter,
      start: this.starts[k]!,
      end: this.#end(k),
      ...(this.#part.pin ? { mtimeMs: this.#part.pin.identity.mtimeMs } : {}),
      passes: [...summary.entries()].map(([entry, pass]) => ({ entry, ...pass })),
    };
  }

  async #read(store: WorkerDocStore): Promise<SegmentSummary | undefined> {
    let text: string | undefined;
    try {
      text = await store.read();
    } catch {
      return undefined;
    }
    if (text === undefined) return undefined;
    let doc: RangeScanDoc;
    try {
      doc = JSON.parse(text) as RangeScanDoc;
    } catch {
      // Half written by a store that is not atomic: read again at the next poll.
      return undefined;
    }
    const k = this.starts.indexOf(doc.start);
    // Of another version of the part (the listing was removed and made again for a changed file): its worker
    // scans the segment again and writes over it; meanwhile it is not there. The same bytes cut at the same
    // segments give the same passes, whichever listing they were scanned for.
    const same =
      doc.format === RANGE_SCAN_FORMAT &&
      doc.part === this.#part.name &&
      doc.size === this.#size &&
      doc.etag === this.#part.etag &&
      doc.mtimeMs === this.#part.pin?.identity.mtimeMs &&
      k !== -1 &&
      doc.end === this.#end(k) &&
      Array.isArray(doc.passes);
    if (!same) return undefined;
    if (doc.syntax !== this.#syntax || doc.delimiter !== this.#delimiter)
      throw new LoaderError(
        'INVALID_OPTION',
        `${store.where} was scanned as ${doc.syntax} with delimiter ${JSON.stringify(doc.delimiter)}, and this worker reads ${this.#part.name} as ${this.#syntax} with ${JSON.stringify(this.#delimiter)}: give every worker the same --input-format and --delimiter`,
        { file: store.where },
      );
    return new Map(doc.passes.map(({ entry, ...pass }) => [entry, pass]));
  }

  /**
   * Range k: from the first record start at or after segment k's first byte (the part's start for k = 0) to
   * the first at or after the next segment's that has one; undefined when segment k has none (a record runs
   * through it: the range before reads it).
   */
  async range(k: number): Promise<{ start: number; end: number; line: number } | undefined> {
    let state: ScanState = entryStates(this.#syntax)[0]!;
    let breaks = 0;
    for (let m = 0; m < k; m++) {
      const pass = passFor(await this.pass(m, 'wait'), state, this.#part.name);
      breaks += pass.breaks;
      state = pass.exit;
    }
    let start: RecordStart;
    if (k === 0) start = { offset: 0, line: 1 };
    else {
      // Segment k's pass is this worker's own when it has one (not the part's last): else its head is scanned here.
      const own = k + 1 < this.starts.length ? passFor(await this.pass(k, 'own'), state, this.#part.name) : await this.#head(k, state);
      if (!own.start) return undefined;
      start = await this.#pastHeader({ offset: this.starts[k]! + own.start.offset, line: breaks + own.start.line });
    }
    // The end: where the next segment's first record starts, in the state this segment ends in.
    if (k + 1 >= this.starts.length) return { start: start.offset, end: this.#size, line: start.line };
    const mine = passFor(await this.pass(k, 'own'), state, this.#part.name);
    let after = mine.exit;
    for (let m = k + 1; m < this.starts.length; m++) {
      const head = await this.#head(m, after);
      if (head.start)
        return { start: start.offset, end: (await this.#pastHeader({ offset: this.starts[m]! + head.start.offset, line: 0 })).offset, line: start.line };
      after = head.exit;
    }
    return { start: start.offset, end: this.#size, line: start.line };
  }

  /**
   * A cut, or the first record after a CSV part's header row when the cut is before it: blank lines before
   * the header are record starts too, and a range from one would read the header row as a row (the whole
   * read skips them and takes the first record as the header). Both sides of a cut move alike, so the
   * ranges still tile the part; one left empty is read by nobody. With --columns the first record moves
   * to the range before: read once all the same.
   */
  async #pastHeader(cut: RecordStart): Promise<RecordStart> {
    if (this.#syntax !== 'csv') return cut;
    this.#afterHeader ??= this.#headerEnd();
    const after = await this.#afterHeader;
    return cut.offset < after.offset ? after : cut;
  }

  /**
   * A CSV part's header row's names, read from the bytes #headerEnd read (so the look at the part's head
   * before the first write and the range's read need not read them again: over S3, a window or two each);
   * undefined for JSON Lines, or when no cut needed the header's end.
   */
  async header(): Promise<string[] | undefined> {
    if (this.#syntax !== 'csv' || !this.#afterHeader) return undefined;
    const after = await this.#afterHeader;
    return this.#headerBytes ? headerRowOf(this.#headerBytes.subarray(0, after.offset), this.#part.name, this.#delimiter) : undefined;
  }

  /** Where the record after a CSV part's header row starts (past its BOM and the line breaks before it), and its line. */
  async #headerEnd(): Promise<RecordStart> {
    const delimiter = Buffer.from(this.#delimiter, 'utf8')[0]!;
    let seen = Buffer.alloc(0);
    let scanner: RecordStartScanner | undefined;
    // In windows growing from HEAD_BYTES, as a segment's head: an S3 ranged GET of the whole part comes whole.
    for (let at = 0, window = HEAD_BYTES; at < this.#size && !scanner?.done; window *= 4) {
      const to = Math.min(this.#size, at + window);
      for await (const chunk of await this.#part.open(at, to)) {
        this.scannedBytes += (chunk as Buffer).length;
        seen = Buffer.concat([seen, chunk as Buffer]);
        if (scanner) scanner.feed(chunk as Buffer);
        else {
          let i = seen[0] === 0xef && seen[1] === 0xbb && seen[2] === 0xbf ? 3 : 0;
          while (i < seen.length && (seen[i] === LF || seen[i] === CR)) i++;
          if (i === seen.length) continue;
          // The header row starts at byte i: the first record start past it ends it.
          scanner = new RecordStartScanner(this.#syntax, [i + 1], delimiter, { atFileStart: true });
          scanner.feed(seen);
        }
      }
      at = to;
    }
    this.#headerBytes = seen;
    if (!scanner) return { offset: this.#size, line: 1 };
    if (!scanner.done) scanner.end();
    return scanner.starts[0]!;
  }

  /**
   * Segment m's pass entered in `state`, read only as far as its first record start (a record or so past
   * its first byte); the whole segment when it has none (then its exit state holds too). The part's last
   * segment ends at the part's end, where a record ends.
   */
  async #head(m: number, state: ScanState): Promise<SegmentPass> {
    const scanner = new RecordStartScanner(this.#syntax, [0], Buffer.from(this.#delimiter, 'utf8')[0]!, { from: state, atFileStart: m === 0 });
    // In windows growing from HEAD_BYTES: a ranged GET's answer comes whole, and a record starts within a few hundred bytes as a rule.
    const end = this.#end(m);
    for (let at = this.starts[m]!, window = HEAD_BYTES; at < end && !scanner.done; window *= 4) {
      const to = Math.min(end, at + window);
      for await (const chunk of await this.#part.open(at, to)) {
        scanner.feed(chunk as Buffer);
        this.scannedBytes += (chunk as Buffer).length;
      }
      at = to;
    }
    if (!scanner.done && m + 1 === this.starts.length) scanner.end();
    return { start: scanner.starts[0], exit: scanner.state, breaks: scanner.breaks };
  }
}

function passFor(summary: SegmentSummary, state: ScanState, name: string): SegmentPass {
  const pass = summary.get(stateKey(state));
  if (!pass)
    throw new LoaderError(
      'INPUT_UNREADABLE',
      `the scan of ${name} has no pass for the state a segment is entered in: scan documents damaged; give this load another --listing`,
      { file: name },
    );
  return pass;
}

async function readBytes(part: InputPart, start: number, count: number): Promise<Buffer> {
  if (count <= 0) return Buffer.alloc(0);
  const chunks: Buffer[] = [];
  const stream = await part.open(start, start + count);
  for await (const chunk of stream) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).subarray(0, count);
}

/** What a worker writes beside the listing for a segment it scanned: offsets, line counts and states only. */
interface RangeScanDoc {
  format: typeof RANGE_SCAN_FORMAT;
  version: 1;
  listedAt: string;
  part: string;
  size: number;
  etag?: string;
  syntax: RecordSyntax;
  delimiter: string;
  start: number;
  end: number;
  /** A local file's modification time when listed. */
  mtimeMs?: number;
  passes: ({ entry: string } & SegmentPass)[];
}
