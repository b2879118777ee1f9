import { mkdtemp, readFile, rm, stat, truncate } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import fc from 'fast-check';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { itemToDynamoJson, toNumberValue } from '../../../src/typing/json.js';
import { orderAll, type GlobalOrderMode } from '../../../src/ordering/order.js';
import type { NativeAttributeValue } from '@aws-sdk/lib-dynamodb';
import type { Item, PlannedWrite } from '../../../src/shared/types.js';
import { decodeWrite, encodeWrite } from '../../../src/ordering/writeCodec.js';
import { LineWriter, readLines, TempSpace } from '../../../src/ordering/lineFiles.js';
import { WriteOrderer } from '../../../src/ordering/writeOrderer.js';
import { mulberry32 } from '../../../tools/mulberry32.js';
import { sized } from '../../support/testSize.js';
import { setOwn } from '../../../src/shared/ownRecord.js';

// An order that spills holds at most 1.2x its input on disk, by its own count of the
// bytes written to its temporary files less the ones unlinked; and every write comes back exactly.

let tempDir = '';
beforeEach(async () => {
  tempDir = await mkdtemp(join(tmpdir(), 'ddb-spread-spill-'));
});
afterEach(async () => {
  await rm(tempDir, { recursive: true, force: true });
});

/** DynamoDB JSON, type for type (the SDK's marshall refuses an attribute named `constructor`). */
const wire = (item: Item) => itemToDynamoJson(item);

// ---------------------------------------------------------------------------------------------------
// Arbitrary items: every attribute type, unicode, `__proto__` and empty names, 38-digit numbers, binary,
// sets, nesting.
// ---------------------------------------------------------------------------------------------------

const text = fc.oneof(
  fc.string({ unit: 'grapheme' }),
  fc.string({ unit: 'binary' }),
  fc.constantFrom('', '__proto__', '\n', '\r\n', '"\\', '\t', '\u2028', '\ud800', 'é😀'),
);
const name = fc.oneof(text, fc.constantFrom('__proto__', '', 'constructor', 'N', 'S', 'M'));

/** Canonical numbers, up to 38 significant digits, magnitudes from 1e-130 to 1e125. */
const number = fc
  .tuple(fc.bigInt({ min: 1n, max: 10n ** 38n - 1n }), fc.boolean(), fc.integer({ min: -129, max: 88 }))
  .map(([digits, negative, exponent]) => toNumberValue(`${negative ? '-' : ''}${digits}E${exponent}`, 'n'));
const binary = fc.uint8Array({ maxLength: 40 });

const { value } = fc.letrec<{ value: NativeAttributeValue; map: Record<string, NativeAttributeValue> }>((tie) => ({
  value: fc.oneof(
    { depthSize: 'small', withCrossShrink: true },
    text,
    number,
    binary,
    fc.boolean(),
    fc.constant(null),
    fc.uniqueArray(text, { minLength: 1, maxLength: 5 }).map((a) => new Set(a)),
    fc.uniqueArray(number, { minLength: 1, maxLength: 5, selector: (n) => n.value }).map((a) => new Set(a)),
    fc.uniqueArray(binary, { minLength: 1, maxLength: 5, selector: (b) => Buffer.from(b).toString('hex') }).map((a) => new Set(a)),
    fc.array(tie('value'), { maxLength: 4 }),
    tie('map'),
  ),
  map: fc.array(fc.tuple(name, tie('value')), { maxLength: 4 }).map(ownObject),
}));

/** An object with these own properties (`__proto__` included, as data). */
function ownObject(entries: [string, NativeAttributeValue][]): Record<string, NativeAttributeValue> {
  const out: Record<string, NativeAttributeValue> = {};
  for (const [k, v] of entries) setOwn(out, k, v);
  return out;
}

const plannedWrite = fc
  .record({
    pk: text,
    attributes: fc.array(fc.tuple(name, value), { maxLength: 6 }),
    raw: text,
    line: fc.integer({ min: 1, max: 2 ** 40 }),
    size: fc.integer({ min: 1, max: 400_000 }),
    sharded: fc.boolean(),
    del: fc.boolean(),
  })
  .map(({ pk, attributes, raw, line, size, sharded, del }): PlannedWrite => {
    const item = ownObject([...attributes.filter(([k]) => k !== 'pk'), ['pk', pk]]);
    const write: PlannedWrite = { origin: { file: 'in.csv', line, raw }, item, keyId: `S${pk}`, partitionId: `S${pk}`, size, wcu: Math.ceil(size / 1024) };
    if (sharded) write.unshardedKey = pk;
    if (del) write.op = 'delete';
    return write;
  });

function expectSame(back: PlannedWrite, original: PlannedWrite): void {
  expect(back).toEqual(original);
  expect(wire(back.item)).toEqual(wire(original.item));
  expect(Object.keys(back.item)).toEqual(Object.keys(original.item));
  expect(back.origin).toEqual(original.origin);
}

describe('the write codec and the spill, with arbitrary writes (fast-check)', () => {
  it('encodeWrite then decodeWrite gives the same write: one line, and the same encoding again', () => {
    fc.assert(
      fc.property(plannedWrite, (original) => {
        const encoded = encodeWrite(original, 'in.csv');
        expect(encoded).not.toMatch(/[\n\r]/);
        const back = decodeWrite(Buffer.from(encoded, 'utf8').toString('utf8'), 'in.csv');
        expectSame(back, original);
        expect(encodeWrite(back, 'in.csv')).toBe(encoded);
      }),
      { numRuns: sized(75, 300) },
    );
  });

  it.each(['round-robin', 'spread'] as GlobalOrderMode[])(
    '%s: writes spilled through compressed bucket and run files come back exactly, in the order',
    async (mode) => {
      await fc.assert(
        fc.asyncProperty(fc.array(plannedWrite, { minLength: 1, maxLength: 400 }), async (writes) => {
          const o = new WriteOrderer({ mode, windowRows: 1, memoryBytes: 64 * 1024, tempDir });
          try {
            // A big first write makes every run spill.
            writes[0]!.origin.raw = 'x'.repeat(70_000);
            for (const w of writes) await o.push(w);
            expect(o.stats.spilled).toBe(true);
            const out: PlannedWrite[] = [];
            for await (const w of o.drain()) out.push(w);
            const expected = orderAll(writes, (w) => w.partitionId, mode);
            expect(out).toHaveLength(expected.length);
            out.forEach((w, i) => expectSame(w, expected[i]!));
          } finally {
            await o.close();
          }
        }),
        { numRuns: sized(5, 15) },
      );
    },
  );
});

// ---------------------------------------------------------------------------------------------------
// Compressed line files
// ---------------------------------------------------------------------------------------------------

describe('compressed line files', () => {
  it('round-trip lines (empty, multi-byte, longer than the buffer), count plain and disk bytes, and tell the space', async () => {
    const random = mulberry32(77);
    const lines: string[] = [];
    for (let i = 0; i < 5000; i++) lines.push(i % 500 === 0 ? '日😀'.repeat(3000) : i % 7 === 0 ? '' : `row ${i}\t${'é'.repeat(Math.floor(random() * 30))}`);
    const path = join(tempDir, 'c.txt');
    const space = new TempSpace();
    const writer = await LineWriter.create(path, 4096, { compressed: true, space });
    for (const line of lines) await writer.write(line);
    await writer.close();
    const plain = Buffer.byteLength(`${lines.join('\n')}\n`, 'utf8');
    expect(writer.plainBytes).toBe(plain);
    expect(writer.bytes).toBe((await stat(path)).size);
    expect(writer.bytes).toBeLessThan(plain / 2);
    expect(space).toMatchObject({ written: writer.bytes, live: writer.bytes, peak: writer.bytes });
    const back: string[] = [];
    for await (const line of readLines(path, true)) back.push(line);
    expect(back).toEqual(lines);
    // The file is not the text itself.
    expect((await readFile(path)).includes(Buffer.from('row 1\t'))).toBe(false);
    space.remove(writer.bytes);
    expect(space).toMatchObject({ live: 0, peak: writer.bytes });
  });

  it('a file cut short is an error, not fewer lines', async () => {
    const path = join(tempDir, 'cut.txt');
    const writer = await LineWriter.create(path, 4096, { compressed: true });
    for (let i = 0; i < 2000; i++) await writer.write(`line ${i} ${'z'.repeat(i % 50)}`);
    await writer.close();
    await truncate(path, writer.bytes - 5);
    const read = async () => {
      for await (const line of readLines(path, true)) void line;
    };
    await expect(read()).rejects.toThrow(/cut short/);
  });
});

// ---------------------------------------------------------------------------------------------------
// The disk a spilling load holds
// ---------------------------------------------------------------------------------------------------

const WORDS = ['fragile', 'parcel', 'express', 'red', 'door', 'large', 'gift', 'economy', 'carton', 'points', 'colour', 'weather'];

/** Export-like CSV rows, key-sorted (skewed keys), each with its raw line and the item typed from it. */
function csvWrites(rows: number, seed: number): { writes: PlannedWrite[]; inputBytes: number } {
  const random = mulberry32(seed);
  const writes: PlannedWrite[] = [];
  let inputBytes = 0;
  let key = 0;
  for (let i = 0; i < rows; i++) {
    if (random() < 0.01) key++;
    const pk = `ACCT#${String(key).padStart(7, '0')}`;
    const sk = `ORDER#${String(i).padStart(7, '0')}`;
    const amount = (random() * 100).toFixed(2);
    const qty = String(1 + Math.floor(random() * 20));
    const payload = Array.from({ length: 20 + Math.floor(random() * 15) }, () => WORDS[Math.floor(random() * WORDS.length)]).join(' ');
    const raw = `${pk},${sk},SHIPPED,${amount},${qty},${payload}`;
    inputBytes += Buffer.byteLength(raw) + 1;
    const item: Item = { pk, sk, status: 'SHIPPED', amount: toNumberValue(amount, 'amount'), qty: toNumberValue(qty, 'qty'), payload };
    const size = raw.length + 30;
    writes.push({ origin: { file: 'in.csv', line: i + 2, raw }, item, keyId: `13:S${pk}S${sk}`, partitionId: `S${pk}`, size, wcu: 1 });
  }
  return { writes, inputBytes };
}

describe('temporary disk of a spilling global order', () => {
  it.each(['round-robin', 'spread'] as GlobalOrderMode[])(
    '%s: at most 1.2x the input at once (written less unlinked), every write back in order',
    async (mode) => {
      // 5,000 writes in the unit pass, 40,000 at full size (test/support/testSize.ts), the budget in proportion.
      const scale = sized(0.5, 4);
      const { writes, inputBytes } = csvWrites(10_000 * scale, 14);
      // A budget of a tenth of what the writes take in memory: most of them go through the files.
      const o = new WriteOrderer({ mode, windowRows: 1, memoryBytes: scale * 512 * 1024, tempDir, inputBytes });
      try {
        for (const w of writes) await o.push(w);
        expect(o.stats.spilled).toBe(true);
        const out: PlannedWrite[] = [];
        for await (const w of o.drain()) out.push(w);
        const expected = orderAll(writes, (w) => w.partitionId, mode);
        expect(out.map((w) => w.origin.line)).toEqual(expected.map((w) => w.origin.line));
        expectSame(out[123]!, expected[123]!);
        expect(o.stats.runs).toBeGreaterThan(1);
        // Each write went to disk twice (bucket, run), but never two copies at once.
        expect(o.stats.tempBytes).toBeGreaterThan(inputBytes / 2);
        expect(o.stats.tempPeakBytes).toBeGreaterThan(0);
        expect(o.stats.tempPeakBytes).toBeLessThanOrEqual(1.2 * inputBytes);
        expect(o.stats.tempPeakBytes).toBeLessThan(0.75 * o.stats.tempBytes);
      } finally {
        await o.close();
      }
    },
  );
});
