import type { RecordStart } from './recordStarts.js';
import { cutRange, readRange, recordStartAtLine, type ByteRange, type RangeSyntax } from './ranges.js';
import type { SourceRecord } from '../../typing/planRow.js';
import { keyCellRows, UNCLEAR, type ProbedRow } from './keyCellRows.js';
import type { Piece, Stripe } from './stripeLayout.js';

/**
 * Keys that run across whole ranges of a striped read, each made a stripe of its own, so no stripe waits on one long key.
 *
 * A range whose head holds more than the probe's rows of one key joins the stripe before it whole, so that
 * no key is in two stripes. That stripe then holds the key and the other keys of the range the key starts
 * in (and of the range it ends in), and StripeSchedule gives a stripe the share of the writes its bytes are
 * of the file: the key was written at the rate of a stripe up to twice its size, and so were the small keys
 * beside it. On the bench's flights file a key of 3.5% took 6.4% of the writes, and --key-wcu held the whole
 * load to 1,000 / 6.4% = 15,600 writes/s. Cut at the key's first and last row, each key gets its own share,
 * and no stripe is much more than a range besides one key.
 *
 * Where a key starts or ends is found without reading the range row by row: the range is cut in
 * SEARCH_PARTS parts where records start (one pass of RecordStartScanner), the key of the first row with one
 * from each part's start on is read (past any rows without a key, which would otherwise mislead the search),
 * a binary search finds the part the key starts (or ends) in, and that part alone is read row by row. On a
 * grouped file the key's rows are one run, so the search is exact; where the file is not grouped,
 * GroupingCheck stops the load, as it would anyway. The cut is made as cutHead makes its cuts: at the line
 * of the row found, checked by RecordStartScanner and by the text of the row that starts there; where that
 * check fails, the stripe is left as it was.
 */

/** Parts a range is cut into to find where a key starts or ends: one of them is then read row by row. */
const SEARCH_PARTS = 16;
/** Ranges smaller than this are read row by row. */
const SEARCH_MIN_BYTES = 64 * 1024;

export interface KeyReading {
  path: string;
  file: string;
  /** How range 0 is read (it holds the header row unless --columns names the columns). */
  first: RangeSyntax;
  /** How every other range is read. */
  how: RangeSyntax;
  probe: (record: SourceRecord) => string | undefined;
  /** The probe's key is this CSV column's cell as it is (planStripes's keyColumn): rows are read by KeyCellScanner. */
  keyColumn?: string;
  /** Record starts marked by the cut's pass over the file (cutFile), ascending; the searches start reading at them. */
  marks?: readonly RecordStart[];
}

/** A row where a stripe is cut: the piece it is in, where it starts, its line and its text. */
interface Cut {
  piece: number;
  offset: number;
  line: number;
  raw: string;
}

/** The stripes, each holding a key over whole ranges cut before and after that key. */
export async function isolateRunningKeys(stripes: readonly Stripe[], reading: KeyReading): Promise<Stripe[]> {
  const out: Stripe[] = [];
  for (const stripe of stripes) out.push(...split(stripe, await cutsOf(stripe, reading)));
  return out;
}

/** Where a stripe is to be cut: before the first row and after the last of every key that runs across a whole range. */
async function cutsOf(stripe: Stripe, reading: KeyReading): Promise<Cut[]> {
  const { pieces } = stripe;
  // Pieces that count rows (a head whose cut was not found) are left as they are: their sizes are counts.
  if (pieces.length < 2 || pieces.some((p) => p.skip > 0 || p.take !== Infinity)) return [];
  const cuts: Cut[] = [];
  for (let i = 1; i < pieces.length; i++) {
    const piece = pieces[i]!;
    const key = piece.running;
    if (!piece.whole || key === undefined) continue;
    // The key started in the piece before, unless that piece is the same key running on. A piece whose head
    // held only rows without a key (no `running`) may be the key running on too, past those rows: its first
    // row of the key is then no start of it, and a cut there would put the key in two stripes. No cut is
    // made before such a key (the cut after the key before it, if any, often starts it anyway).
    const before = pieces[i - 1]!;
    if (i === 1 || (before.running !== undefined && before.running !== key)) {
      const at = await firstRowWhere(reading, pieces[i - 1]!.range, (k) => k === key);
      if (at) cuts.push({ piece: i - 1, ...at });
    }
    // It ends in this piece, unless the next one starts in it too.
    if (pieces[i + 1]?.running !== key) {
      const at = await firstRowWhere(reading, piece.range, (k) => k !== key);
      if (at) cuts.push({ piece: i, ...at });
    }
  }
  return cuts.sort((a, b) => a.offset - b.offset).filter((c, i, all) => i === 0 || c.offset !== all[i - 1]!.offset);
}

/** A stripe cut at `cuts` (in file order, each inside its piece): the stripes, in file order. */
export function split(stripe: Stripe, cuts: readonly Cut[]): Stripe[] {
  if (cuts.length === 0) return [stripe];
  const out: Stripe[] = [];
  let current: Stripe = { pieces: [], size: 0, firstLine: stripe.firstLine, firstRaw: stripe.firstRaw };
  const add = (piece: Piece) => {
    current.pieces.push(piece);
    current.size += piece.range.end - piece.range.start;
  };
  let c = 0;
  stripe.pieces.forEach((piece, i) => {
    let range = piece.range;
    for (; c < cuts.length && cuts[c]!.piece === i; c++) {
      const cut = cuts[c]!;
      add({ range: { ...range, end: cut.offset }, skip: 0, take: Infinity });
      out.push(current);
      current = { pieces: [], size: 0, firstLine: cut.line, firstRaw: cut.raw };
      range = { start: cut.offset, end: range.end, line: cut.line };
    }
    add({ ...piece, range });
  });
  out.push(current);
  return out;
}

/**
 * The first row of `range` past its first whose key passes `test`, where a record starts there (checked as
 * cutHead checks); undefined when there is none or it cannot be cut at.
 */
async function firstRowWhere(reading: KeyReading, range: ByteRange, test: (key: string) => boolean): Promise<Omit<Cut, 'piece'> | undefined> {
  const parts =
    range.end - range.start < SEARCH_MIN_BYTES ? [range] : (partsAt(range, reading.marks) ?? (await cutRange(reading.path, range, reading.how, SEARCH_PARTS)));
  // A part's first keyed row is looked for up to the range's end, not within the part's first rows: a part
  // that starts in a run of rows without a key (empty keys, bad CSV) must answer for the first keyed row
  // after the run, or the search is not monotone and can cut inside a key (its first rows left in the
  // stripe before). Those rows are read once more only where such a run is.
  const onward = (part: ByteRange): ByteRange => ({ ...part, end: range.end });
  // The first part whose first keyed row passes, or that has none to the range's end (those parts are last,
  // past every keyed row: counted as passing, a search over a key followed by a few rows of another and a
  // run without keys to the range's end still finds the other's first row). On a grouped file, every part
  // after it answers so too.
  let lo = 1;
  let hi = parts.length;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    const first = await firstKeyed(reading, onward(parts[mid]!));
    if (first === undefined || test(first.key)) hi = mid;
    else lo = mid + 1;
  }
  // The row is in the part before that one, or is the first keyed row from that part on.
  let part = parts[lo - 1]!;
  let found = await rowWhere(reading, part, test);
  if (found === undefined && lo < parts.length) {
    part = onward(parts[lo]!);
    found = await firstKeyed(reading, part);
  }
  if (found === undefined || !test(found.key)) return undefined;
  const offset = found.line === part.line ? part.start : await recordStartAtLine(reading.path, part, found.line, reading.how);
  if (offset === undefined || offset <= range.start || offset >= range.end) return undefined;
  // The line is readCsv's count, the offset RecordStartScanner's: should they ever disagree, the text at the offset must match.
  const there = await firstKeyed(reading, { start: offset, end: range.end, line: found.line }, 1);
  return there?.raw === found.raw ? { offset, line: found.line, raw: found.raw } : undefined;
}

/**
 * The range in parts at the record starts the cut's pass marked inside it (cutFile), or undefined when it
 * holds fewer than half of SEARCH_PARTS of them: then the range is scanned again (cutRange).
 */
function partsAt(range: ByteRange, marks: readonly RecordStart[] | undefined): ByteRange[] | undefined {
  if (marks === undefined) return undefined;
  const inside: RecordStart[] = [];
  for (const m of marks) if (m.offset > range.start && m.offset < range.end && m.offset !== inside.at(-1)?.offset) inside.push(m);
  if (inside.length < SEARCH_PARTS / 2) return undefined;
  const starts = [{ offset: range.start, line: range.line }, ...inside];
  return starts.map((m, i) => ({ start: m.offset, end: i + 1 < starts.length ? starts[i + 1]!.offset : range.end, line: m.line }));
}

interface Keyed {
  key: string;
  line: number;
  raw: string;
}

/** The first row of a range with a key (within `within` rows, when given), or undefined. */
async function firstKeyed(reading: KeyReading, range: ByteRange, within?: number): Promise<Keyed | undefined> {
  return rowWhere(reading, range, () => true, within);
}

/**
 * The first row of a range whose key passes `test`, within `within` rows when given; rows without a key are
 * passed over. Read by KeyCellScanner where the probe's key is a CSV cell (keyColumn), through readCsv
 * where it is not, or where the scanner meets a record it cannot read for sure.
 */
async function rowWhere(reading: KeyReading, range: ByteRange, test: (key: string) => boolean, within?: number): Promise<Keyed | undefined> {
  const cells = reading.keyColumn !== undefined ? keyCellRows(reading.path, range, reading.how, reading.keyColumn) : undefined;
  if (cells) {
    try {
      return await firstPassing(cells, test, within);
    } catch (error) {
      if (error !== UNCLEAR) throw error;
    } finally {
      await cells.return(undefined);
    }
  }
  const reader = readRange(reading.path, reading.file, range, range.start === 0 ? reading.first : reading.how);
  async function* rows(): AsyncGenerator<ProbedRow> {
    for await (const record of reader.records) yield { group: reading.probe(record), line: record.origin.line, raw: record.origin.raw };
  }
  try {
    return await firstPassing(rows(), test, within);
  } finally {
    await reader.records.return(undefined);
    reader.close();
  }
}

/** The first of `rows` with a key that passes `test`, within `within` rows (keyed or not) when given. */
async function firstPassing(rows: AsyncIterable<ProbedRow>, test: (key: string) => boolean, within: number | undefined): Promise<Keyed | undefined> {
  let n = 0;
  for await (const { group, line, raw } of rows) {
    if (group !== undefined && test(group)) return { key: group, line, raw };
    if (within !== undefined && ++n >= within) return undefined;
  }
  return undefined;
}
