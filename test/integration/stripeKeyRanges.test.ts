/**
 * A key that runs across whole ranges of a striped read is a stripe of its own: the stripe
 * that took it used to take the other keys of the range it starts in as well, and a stripe gets the share of
 * the writes its bytes are of the file, so the key was written at the rate of a stripe bigger than itself
 * (1.8x its share on the bench's flights file, 6.4% of the writes for a key of 3.5%), and the small keys
 * before it at the same rate. Under --key-wcu that capped the whole load at --key-wcu / 6.4%.
 * In-process, but in the integration project: its striped reads of 60,000 rows take most of a minute.
 */
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { openStripedRead } from '../../src/ordering/stripes/stripedRecords.js';
import { readCsv } from '../../src/reading/readCsv.js';
import type { SourceRecord } from '../../src/typing/planRow.js';

const csvHow = { syntax: 'csv', delimiter: ',', columns: undefined } as const;
const jsonHow = { syntax: 'jsonl', delimiter: ',', columns: undefined } as const;
const probe = (r: SourceRecord) =>
  r.kind === 'csv' ? r.cells['pk'] || undefined : r.kind === 'json' ? ((JSON.parse(r.origin.raw) as { pk?: string }).pk ?? undefined) : undefined;
const key = (j: number) => `k${String(j).padStart(4, '0')}`;

/**
 * Rows sorted by key: 400 keys of 40-120 rows, and big keys (2,600-3,400 rows, each over two of the 40 ranges
 * and so over the probe's 1,000 rows at a range's head) here and there, each after some small keys in the
 * range it starts in. Quoted line breaks, CRLF and a blank line now and then.
 */
function sortedText(big: ReadonlySet<number>, bigRows = 3000): { text: string; rows: number; counts: Map<string, number> } {
  const lines = ['pk,sk,note'];
  const counts = new Map<string, number>();
  for (let j = 0; j < 400; j++) {
    const n = big.has(j) ? bigRows + ((j * 37) % 400) : 40 + ((j * 13) % 80);
    counts.set(key(j), n);
    for (let i = 0; i < n; i++) lines.push(`${key(j)},${i},${i % 11 === 0 ? '"quoted\r\nbreak"' : `note ${'x'.repeat(i % 23)}`}`);
    if (j % 17 === 0) lines.push('');
  }
  const text = lines.map((l, i) => l + (i % 5 === 0 ? '\r\n' : '\n')).join('');
  let rows = 0;
  for (const n of counts.values()) rows += n;
  return { text, rows, counts };
}

/** The same rows as JSON Lines (the quoted line breaks escaped, as JSON has them). */
function asJsonLines(text: string): string {
  const rows: string[] = [];
  for (const line of text
    .replace(/"quoted\r\nbreak"/g, 'quoted\\r\\nbreak')
    .split(/\r?\n/)
    .slice(1)) {
    if (line === '') continue;
    const [pk, sk, note] = line.split(',');
    rows.push(JSON.stringify({ pk, sk, note: note!.replace('\\r\\n', '\r\n') }));
  }
  return rows.join('\n') + '\n';
}

async function stripedOrder(text: string, parts: number, how: typeof csvHow | typeof jsonHow = csvHow): Promise<{ records: SourceRecord[]; stripes: number }> {
  const path = join(mkdtempSync(join(tmpdir(), 'keys-')), how === csvHow ? 'in.csv' : 'in.jsonl');
  writeFileSync(path, text);
  const striped = await openStripedRead({ path, file: 'in.csv', size: Buffer.byteLength(text), how, parts, probe });
  expect(striped).toBeDefined();
  const records: SourceRecord[] = [];
  try {
    for await (const r of striped!.records) records.push(r);
  } finally {
    striped!.close();
  }
  return { records, stripes: striped!.parts };
}

describe('a striped read of a file with keys over whole ranges', () => {
  // Big keys at the file's start (range 0, after the header), in range 0 after a small key, side by side
  // (90, 91), and at the end of the file.
  const big = new Set([0, 2, 37, 90, 91, 150, 260, 333, 399]);
  const { text, rows, counts } = sortedText(big);

  it('reads every row once, with its line and cells, as the whole-file reader does', async () => {
    const whole: SourceRecord[] = [];
    for await (const r of readCsv(Readable.from([Buffer.from(text)]), 'in.csv', { delimiter: ',', columns: undefined })) whole.push(r);
    const { records } = await stripedOrder(text, 40);
    expect(records).toHaveLength(rows);
    const view = (r: SourceRecord) => [r.origin.line, r.origin.raw, r.kind === 'csv' ? { ...r.cells } : r.kind];
    expect(records.map(view).sort((a, b) => (a[0] as number) - (b[0] as number))).toEqual(whole.map(view));
  });

  it.each([
    ['CSV', csvHow],
    ['JSON Lines', jsonHow],
  ] as const)('%s: gives each big key a stripe of its own, and every key its rows in file order', async (_, how) => {
    const { records } = await stripedOrder(how === csvHow ? text : asJsonLines(text), 40, how);
    expect(records).toHaveLength(rows);
    const keysOfStripe = new Map<number, Set<string>>();
    const lastLine = new Map<string, number>();
    for (const r of records) {
      const k = probe(r)!;
      const part = r.origin.part!;
      if (!keysOfStripe.has(part)) keysOfStripe.set(part, new Set());
      keysOfStripe.get(part)!.add(k);
      expect(r.origin.line).toBeGreaterThan(lastLine.get(k) ?? 0);
      lastLine.set(k, r.origin.line);
    }
    for (const j of big) {
      const owners = [...keysOfStripe].filter(([, keys]) => keys.has(key(j)));
      // 90 and 91 are big keys side by side: each still alone.
      expect(owners.map(([, keys]) => [...keys])).toEqual([[key(j)]]);
    }
  });

  it('writes a big key at its share of the file, not at the share of a stripe holding other keys too', async () => {
    const { records } = await stripedOrder(text, 40);
    const window = 1000;
    for (const j of [37, 150, 260, 333]) {
      const k = key(j);
      const share = counts.get(k)! / rows;
      const at = records.map((r, i) => (probe(r) === k ? i : -1)).filter((i) => i >= 0);
      let most = 0;
      // Windows wholly inside the key's stretch of the load.
      for (let from = at[0]!; from + window <= at.at(-1)!; from += window / 4) {
        let n = 0;
        for (let i = from; i < from + window; i++) if (probe(records[i]!) === k) n++;
        most = Math.max(most, n / window);
      }
      expect(most, `${k}: ${(share * 100).toFixed(1)}% of the rows`).toBeLessThan(share * 1.25);
    }
  });

  it('a small key never gets more than a range and a head of the writes', async () => {
    const { records } = await stripedOrder(text, 40);
    const window = 1000;
    let most = 0;
    for (let from = 0; from + window <= records.length; from += window / 2) {
      const n = new Map<string, number>();
      for (let i = from; i < from + window; i++) {
        const k = probe(records[i]!)!;
        if (!big.has(Number(k.slice(1)))) n.set(k, (n.get(k) ?? 0) + 1);
      }
      most = Math.max(most, ...n.values());
    }
    // A range is 1/40 of the file: 2.5% of the writes; with the head of the range after it, at most ~3.5%.
    expect(most / window).toBeLessThan(0.04);
  });
});
