/**
 * Attacks on the cut of keys that run across whole ranges (src/ordering/stripes/stripeKeys.ts): where a big key starts
 * and ends is found by a binary search over 16 parts of a range, each asked for its first row with a key.
 * A run of rows without one (empty partition keys, bad CSV) across a part's start made that part answer
 * "not yet", so the search went past the key's first rows and cut inside the key: a sorted file then had a
 * key in two stripes, and GroupingCheck stopped `--order stripes` with ORDER_NOT_GROUPED (a default load
 * started over in round-robin). Every case here checks the three things a cut must keep: every row read
 * once with the whole-file reader's line and text, no key in two stripes (GroupingCheck on the read order),
 * and the big key still a stripe of its own. In-process, but in the integration project: its striped
 * reads of 50,000 rows take most of a minute.
 */
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { openStripedRead, recordGroup } from '../../src/ordering/stripes/stripedRecords.js';
import { GroupingCheck } from '../../src/ordering/stripes/grouping.js';
import { readCsv } from '../../src/reading/readCsv.js';
import { readJsonLines } from '../../src/reading/readJsonLines.js';
import type { RangeSyntax } from '../../src/ordering/stripes/ranges.js';
import type { PlannedWrite } from '../../src/shared/types.js';
import { createRowPlanner, type SourceRecord } from '../../src/typing/planRow.js';

const csvHow: RangeSyntax = { syntax: 'csv', delimiter: ',', columns: undefined };
const stringKeys = (r: SourceRecord) => (r.kind === 'csv' ? (r.cells['pk'] ? `S${r.cells['pk']}` : undefined) : undefined);
const key = (j: number) => `k${String(j).padStart(4, '0')}`;
const BIG = 150;

interface Layout {
  /** Rows without a key before row `i` of key `j`. */
  unkeyed?: (j: number, i: number) => number;
  eol?: (line: number) => string;
  bigs?: ReadonlySet<number>;
  header?: string;
  pk?: (j: number) => string;
}

/** 300 keys of 100 rows, sorted, with big keys of 6,000 rows (each over a whole range of 8), CSV. */
function sortedCsv({ unkeyed, eol = () => '\n', bigs = new Set([BIG]), header = 'pk,sk,note', pk = key }: Layout): string {
  const lines = header === '' ? [] : [header];
  for (let j = 0; j < 300; j++) {
    for (let i = 0; i < (bigs.has(j) ? 6000 : 100); i++) {
      for (let x = unkeyed?.(j, i) ?? 0; x > 0; x--) lines.push(`,${x},no key`);
      lines.push(`${pk(j)},${i},${i % 9 === 0 ? '"a ""quoted""\r\nbreak"' : 'note xx'}`);
    }
  }
  return lines.map((l, n) => l + eol(n)).join('');
}

async function wholeRead(text: string, how: RangeSyntax): Promise<SourceRecord[]> {
  const out: SourceRecord[] = [];
  const stream = Readable.from([Buffer.from(text)]);
  const records = how.syntax === 'csv' ? readCsv(stream, 'in', { delimiter: ',', columns: how.columns }) : readJsonLines(stream, 'in');
  for await (const r of records) out.push(r);
  return out;
}

async function stripedRead(
  text: string,
  how: RangeSyntax,
  probe: (r: SourceRecord) => string | undefined,
): Promise<{ records: SourceRecord[]; parts: number }> {
  const path = join(mkdtempSync(join(tmpdir(), 'unkeyed-')), 'in');
  writeFileSync(path, text);
  const striped = await openStripedRead({ path, file: 'in', size: Buffer.byteLength(text), how, parts: 8, probe });
  expect(striped, 'read in stripes').toBeDefined();
  const records: SourceRecord[] = [];
  try {
    for await (const r of striped!.records) records.push(r);
  } finally {
    striped!.close();
  }
  return { records, parts: striped!.parts };
}

/** The message of GroupingCheck's refusal of the read order, or undefined when it passes. */
function groupingRefusal(records: SourceRecord[], parts: number, probe: (r: SourceRecord) => string | undefined): string | undefined {
  const check = new GroupingCheck(parts);
  try {
    for (const r of records) {
      const k = probe(r);
      if (k !== undefined) check.check({ partitionId: k, origin: r.origin } as PlannedWrite, r.origin.part!);
    }
    return undefined;
  } catch (error) {
    return (error as Error).message;
  }
}

async function expectSafeCut(text: string, { how = csvHow, probe = stringKeys, bigs = [BIG], name = (j: number) => `S${key(j)}` } = {}): Promise<void> {
  const { records, parts } = await stripedRead(text, how, probe);
  const whole = await wholeRead(text, how);
  const view = (r: SourceRecord) => `${r.origin.line}|${r.kind}|${r.origin.raw}`;
  // Compared as one string: a diff of 50,000 rows takes vitest minutes to print.
  expect(records.map(view).sort().join('\n') === whole.map(view).sort().join('\n'), 'the rows of the whole-file read, each once').toBe(true);
  expect(groupingRefusal(records, parts, probe)).toBeUndefined();
  // The big key is still a stripe of its own (only rows without a key beside it).
  const keysOfPart = new Map<number, Set<string>>();
  for (const r of records) {
    const k = probe(r);
    if (k === undefined) continue;
    if (!keysOfPart.has(r.origin.part!)) keysOfPart.set(r.origin.part!, new Set());
    keysOfPart.get(r.origin.part!)!.add(k);
  }
  for (const j of bigs) {
    const k = name(j);
    expect([...keysOfPart.values()].filter((keys) => keys.has(k)).map((keys) => [...keys])).toEqual([[k]]);
  }
}

describe('rows without a key around a key that runs across whole ranges', () => {
  it('a run of them inside the big key, in the range it starts in: cut before its first row, not after the run', async () => {
    await expectSafeCut(sortedCsv({ unkeyed: (j, i) => (j === BIG && i === 200 ? 2500 : 0) }));
  });

  it('a run of them right after the big key ends: cut after its last row, not inside the next key', async () => {
    await expectSafeCut(sortedCsv({ unkeyed: (j, i) => (j === BIG + 1 && i === 30 ? 2500 : 0) }));
  });

  it('runs of them inside and after each of two big keys side by side', async () => {
    const unkeyed = (j: number, i: number) => ((j === BIG || j === BIG + 1) && i === 300 ? 2000 : j === BIG + 2 && i === 10 ? 2000 : 0);
    await expectSafeCut(sortedCsv({ unkeyed, bigs: new Set([BIG, BIG + 1]) }), { bigs: [BIG, BIG + 1] });
  });

  it('at the start of the file (range 0 holds the header row and a BOM), and a big key running to its end', async () => {
    const text = `\ufeff${sortedCsv({ unkeyed: (j, i) => (j === 0 && i === 100 ? 2500 : j === 299 && i === 50 ? 2500 : 0), bigs: new Set([0, 299]) })}`;
    await expectSafeCut(text, { bigs: [0, 299] });
  });

  it('--columns (no header row)', async () => {
    const text = sortedCsv({ unkeyed: (j, i) => (j === BIG && i === 200 ? 2500 : 0), header: '' });
    await expectSafeCut(text, { how: { ...csvHow, columns: ['pk', 'sk', 'note'] } });
  });

  it('numeric partition keys (type N, compared by value: 9 before 10), the probe being the planner', async () => {
    const planner = createRowPlanner({ keySchema: { partitionKey: { name: 'pk', type: 'N' } }, types: {}, infer: false, empty: 'omit', jsonFlavor: 'json' });
    const probe = recordGroup(planner, { name: 'pk', type: 'N' });
    const text = sortedCsv({ unkeyed: (j, i) => (j === BIG && i === 200 ? 2500 : 0), pk: String });
    await expectSafeCut(text, { probe, name: (j) => `N${j}` });
  });

  it('JSON Lines: objects without the key', async () => {
    const csvText = sortedCsv({ unkeyed: (j, i) => (j === BIG && i === 200 ? 2500 : j === BIG + 1 && i === 30 ? 2500 : 0) });
    const jsonl = csvText
      .split('\n')
      .slice(1, -1)
      .filter((l) => !l.includes('quoted') && !l.startsWith('break'))
      .map((l) => {
        const [pk, sk, note] = l.split(',');
        return JSON.stringify(pk ? { pk, sk, note } : { sk, note });
      })
      .join('\n');
    const probe = (r: SourceRecord) => {
      const pk = (JSON.parse(r.origin.raw) as { pk?: string }).pk;
      return pk ? `S${pk}` : undefined;
    };
    await expectSafeCut(`${jsonl}\n`, { how: { syntax: 'jsonl', delimiter: ',', columns: undefined }, probe });
  });
});

describe('line breaks around a big key', () => {
  const unkeyed = (j: number, i: number) => (j === BIG && i === 300 ? 2000 : j === BIG + 2 && i === 10 ? 2000 : 0);
  it.each<[string, (n: number) => string]>([
    ['CRLF with blank LF lines', (n) => (n % 3 === 0 ? '\r\n\n' : '\r\n')],
    ['lone CR and blank CRLF lines', (n) => (n % 5 === 0 ? '\r' : n % 5 === 1 ? '\r\n\r\n' : '\n')],
  ])('%s, with rows without a key inside and after two big keys', async (_name, eol) => {
    await expectSafeCut(sortedCsv({ unkeyed, eol, bigs: new Set([BIG, BIG + 1]) }), { bigs: [BIG, BIG + 1] });
  });

  // "\n\r\n\n" (a blank CRLF line, then a blank LF line) made readCsv count every later line one short,
  // in the whole-file read and in each range, so the text check refused the cuts there and the big keys
  // shared stripes. readCsv counts them right now: every row at its line, each big key alone.
  it('LF with a blank CRLF then a blank LF line now and then: every row once at its line, each big key alone', async () => {
    const eol = (n: number) => (n % 97 === 0 ? '\n\r\n\n' : '\n');
    await expectSafeCut(sortedCsv({ unkeyed, eol, bigs: new Set([BIG, BIG + 1]) }), { bigs: [BIG, BIG + 1] });
  });
});
