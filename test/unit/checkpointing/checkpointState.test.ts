import { describe, expect, it } from 'vitest';
import {
  BatchProgress,
  CHECKPOINT_VERSION,
  resumeRefusal,
  type BatchDone,
  type CheckpointFile,
  type InputIdentity,
} from '../../../src/checkpointing/checkpointState.js';
import type { BatchRange } from '../../../src/checkpointing/doneBatches.js';
import { normalizeOptions, type LoadOptions } from '../../../src/load/options.js';
import { writeAffectingOptions } from '../../../src/load/writeAffectingOptions.js';
import { createWindowInterleaver } from '../../../src/ordering/order.js';
import { mulberry32 } from '../../../tools/mulberry32.js';

// ---------------------------------------------------------------------------------------------------
// BatchProgress

/** Batch `index` of a seeded load: counts that differ per batch (halves, so sums are exact). */
function batchOf(index: number, rejects = index % 3): BatchDone {
  return { written: 25 - rejects, plannedWcu: 25 + index * 0.5, consumedWcu: 24 + index * 0.25, writeRejects: rejects };
}

/** What the totals must be after the batches in `done`, on top of `from`. */
function expectedTotals(batches: readonly BatchDone[], done: Iterable<number>, from = { written: 0, plannedWcu: 0, consumedWcu: 0, writeRejects: 0 }) {
  const totals = { ...from };
  for (const i of [...done].sort((a, b) => a - b)) {
    const b = batches[i]!;
    totals.written += b.written;
    totals.plannedWcu += b.plannedWcu;
    totals.consumedWcu += b.consumedWcu;
    totals.writeRejects += b.writeRejects;
  }
  return totals;
}

/** Finishing orders of n batches: a full shuffle, or in flight `slots` at a time, each slot finishing at random. */
function finishingOrder(n: number, random: () => number, slots: number | 'any'): number[] {
  if (slots === 'any') {
    const order = Array.from({ length: n }, (_, i) => i);
    for (let i = n - 1; i > 0; i--) {
      const j = Math.floor(random() * (i + 1));
      [order[i], order[j]] = [order[j]!, order[i]!];
    }
    return order;
  }
  const order: number[] = [];
  const inFlight: number[] = [];
  let next = 0;
  while (order.length < n) {
    while (inFlight.length < slots && next < n) inFlight.push(next++);
    order.push(inFlight.splice(Math.floor(random() * inFlight.length), 1)[0]!);
  }
  return order;
}

/** The mark and the ranges above it that a set of done batches should give. */
function expectedShape(done: ReadonlySet<number>, n: number): { mark: number; above: BatchRange[] } {
  let mark = 0;
  while (done.has(mark)) mark++;
  const above: BatchRange[] = [];
  for (let i = mark; i < n; i++) {
    if (!done.has(i)) continue;
    const last = above.at(-1);
    if (last && last[1] === i) last[1] = i + 1;
    else above.push([i, i + 1]);
  }
  return { mark, above };
}

describe('BatchProgress', () => {
  it.each([
    ['a full shuffle', 'any'],
    ['8 in flight', 8],
    ['2 in flight', 2],
    ['1 in flight (in order)', 1],
  ] as const)(
    'completions in random orders (%s): after every step the mark, the ranges above it and the totals describe exactly the batches done',
    (_label, slots) => {
      for (let seed = 1; seed <= 25; seed++) {
        const random = mulberry32(seed);
        const n = seed === 1 ? 1 : 1 + Math.floor(random() * 300);
        const batches = Array.from({ length: n }, (_, i) => batchOf(i));
        const progress = new BatchProgress();
        const done = new Set<number>();
        let problem: string | undefined;
        for (const index of finishingOrder(n, random, slots)) {
          if (progress.complete(index, batches[index]!) !== true) problem ??= `batch ${index} not taken`;
          done.add(index);
          const { mark, above } = expectedShape(done, n);
          if (progress.batchesDone !== mark) problem ??= `after batch ${index}: mark ${progress.batchesDone}, expected ${mark}`;
          if (JSON.stringify(progress.doneAbove) !== JSON.stringify(above))
            problem ??= `after batch ${index}: ranges ${JSON.stringify(progress.doneAbove)}, expected ${JSON.stringify(above)}`;
          const expected = expectedTotals(batches, done);
          if (JSON.stringify(progress.totals) !== JSON.stringify(expected)) problem ??= `after batch ${index}: totals ${JSON.stringify(progress.totals)}`;
          // Now and then a done batch reports again (a late duplicate): nothing changes.
          if (random() < 0.2) {
            const old = [...done][Math.floor(random() * done.size)]!;
            if (progress.complete(old, batchOf(old, 5)) !== false) problem ??= `batch ${old} counted twice`;
            if (JSON.stringify(progress.totals) !== JSON.stringify(expected)) problem ??= `batch ${old} again changed the totals`;
          }
          for (let probe = 0; probe < n; probe++)
            if (progress.isDone(probe) !== done.has(probe)) problem ??= `after batch ${index}: isDone(${probe}) is ${progress.isDone(probe)}`;
        }
        expect(problem, `seed ${seed}, ${n} batches`).toBeUndefined();
        expect([progress.batchesDone, progress.doneAbove], `seed ${seed}`).toEqual([n, []]);
      }
    },
  );

  it('a slow batch holding the mark does not hold back the batches done after it: they are recorded as ranges, with their counts', () => {
    const progress = new BatchProgress();
    for (let i = 1; i <= 300; i++) progress.complete(i, batchOf(i, 0));
    progress.complete(302, batchOf(302, 0));
    expect(progress.batchesDone).toBe(0);
    expect(progress.doneAbove).toEqual([
      [1, 301],
      [302, 303],
    ]);
    expect(progress.totals.written).toBe(301 * 25);
    progress.complete(0, batchOf(0, 0));
    expect([progress.batchesDone, progress.doneAbove]).toEqual([301, [[302, 303]]]);
  });

  it('with no batch done, the state is zero', () => {
    const progress = new BatchProgress();
    expect([progress.batchesDone, progress.doneAbove]).toEqual([0, []]);
    expect(progress.totals).toEqual({ written: 0, plannedWcu: 0, consumedWcu: 0, writeRejects: 0 });
  });

  it('starting from a saved state continues its mark, ranges and totals', () => {
    const saved: Pick<CheckpointFile, 'batchesDone' | 'doneAbove' | 'written' | 'plannedWcu' | 'consumedWcu' | 'writeRejects'> = {
      batchesDone: 40,
      doneAbove: [
        [42, 45],
        [50, 51],
      ],
      written: 990,
      plannedWcu: 1012.5,
      consumedWcu: 1500.25,
      writeRejects: 7,
    };
    const progress = new BatchProgress(saved);
    expect([39, 40, 41, 42, 44, 45, 50, 51].map((i) => progress.isDone(i))).toEqual([true, false, false, true, true, false, true, false]);
    expect(progress.complete(39, batchOf(39))).toBe(false);
    expect(progress.complete(43, batchOf(43))).toBe(false);
    expect(progress.complete(41, batchOf(41))).toBe(true);
    expect(progress.complete(40, batchOf(40))).toBe(true);
    expect([progress.batchesDone, progress.doneAbove]).toEqual([45, [[50, 51]]]);
    const batches = Array.from({ length: 42 }, (_, i) => batchOf(i));
    expect(progress.totals).toEqual(expectedTotals(batches, [40, 41], { written: 990, plannedWcu: 1012.5, consumedWcu: 1500.25, writeRejects: 7 }));
  });
});

// ---------------------------------------------------------------------------------------------------
// writeAffectingOptions

const BASE: LoadOptions = { input: 'data/rows.csv', table: 'orders' };
const SHARDED: LoadOptions = { ...BASE, shard: ['hash:4'] };

/** The options a checkpoint would record for these load options, as the checkpoint file holds them. */
const recorded = (options: LoadOptions): Record<string, unknown> =>
  JSON.parse(JSON.stringify(writeAffectingOptions(normalizeOptions(options)))) as Record<string, unknown>;
const sameRecord = (a: LoadOptions, b: LoadOptions): boolean => JSON.stringify(recorded(a)) === JSON.stringify(recorded(b));

/** Pairs of load options that write different things or cut batches differently, with the option key that must differ. */
const WRITE_AFFECTING: Array<[label: string, key: string, before: LoadOptions, after: LoadOptions]> = [
  ['table', 'table', BASE, { ...BASE, table: 'orders-v2' }],
  ['format', 'inputFormat', BASE, { ...BASE, inputFormat: 'jsonl' }],
  ['format ddb-json', 'inputFormat', { ...BASE, input: 'rows.jsonl' }, { ...BASE, input: 'rows.jsonl', inputFormat: 'ddb-json' }],
  ['delimiter', 'delimiter', BASE, { ...BASE, delimiter: ';' }],
  ['columns given', 'columns', BASE, { ...BASE, columns: ['pk', 'sk', 'price'] }],
  ['columns reordered', 'columns', { ...BASE, columns: ['pk', 'sk'] }, { ...BASE, columns: ['sk', 'pk'] }],
  ['types given', 'types', BASE, { ...BASE, types: { price: 'N' } }],
  ['types changed', 'types', { ...BASE, types: { price: 'N' } }, { ...BASE, types: { price: 'S' } }],
  ['types added', 'types', { ...BASE, types: { price: 'N' } }, { ...BASE, types: { price: 'N', active: 'BOOL' } }],
  ['infer', 'infer', BASE, { ...BASE, infer: true }],
  ['empty', 'empty', BASE, { ...BASE, empty: 'null' }],
  ['empty string', 'empty', { ...BASE, empty: 'null' }, { ...BASE, empty: 'string' }],
  ['timestamps', 'timestamps', BASE, { ...BASE, timestamps: 'epoch-s' }],
  ['timestamps unit', 'timestamps', { ...BASE, timestamps: 'epoch-ms' }, { ...BASE, timestamps: 'epoch-s' }],
  ['order spread', 'order', BASE, { ...BASE, order: 'spread' }],
  ['order input', 'order', BASE, { ...BASE, order: 'input' }],
  ['order window', 'order', BASE, { ...BASE, order: 'window' }],
  ['window size', 'window', { ...BASE, order: 'window' }, { ...BASE, order: 'window', window: 1000 }],
  ['order stripes by name', 'order', BASE, { ...BASE, order: 'stripes' }],
  // The auto order's window grows up to --window rows and is capped by --memory: both decide where it goes over.
  ['auto window size', 'window', BASE, { ...BASE, window: 1000 }],
  ['auto memoryBytes', 'windowMemoryBytes', BASE, { ...BASE, memoryBytes: 1024 * 1024 }],
  ['shard rules given', 'shard', BASE, SHARDED],
  ['shard count', 'shard', SHARDED, { ...BASE, shard: ['hash:8'] }],
  ['shard attribute', 'shard', SHARDED, { ...BASE, shard: ['hash:4:orderId'] }],
  ['shard rule added', 'shard', SHARDED, { ...BASE, shard: ['hash:4', 'time:day'] }],
  ['shard rules reordered', 'shard', { ...BASE, shard: ['time:day', 'hash:4'] }, { ...BASE, shard: ['hash:4', 'time:day'] }],
  ['shard separator', 'shard', SHARDED, { ...SHARDED, shardSeparator: '|' }],
  ['shard keys given', 'shard', SHARDED, { ...SHARDED, shardKeys: ['hot'] }],
  ['shard keys changed', 'shard', { ...SHARDED, shardKeys: ['hot'] }, { ...SHARDED, shardKeys: ['hot', 'warm'] }],
  ['keepOriginalKey', 'shard', SHARDED, { ...SHARDED, keepOriginalKey: 'originalPk' }],
  ['shard seed given', 'shard', { ...BASE, shard: ['random:4'] }, { ...BASE, shard: ['random:4'], shardSeed: 7 }],
  ['shard seed changed', 'shard', { ...BASE, shard: ['random:4'], shardSeed: 7 }, { ...BASE, shard: ['random:4'], shardSeed: 8 }],
  ['shard suffix base', 'shard', SHARDED, { ...SHARDED, shardSuffixBase: 1 }],
  ['segment given', 'segment', BASE, { ...BASE, segment: '0/4' }],
  ['segment index', 'segment', { ...BASE, segment: '0/4' }, { ...BASE, segment: '1/4' }],
  ['segment count', 'segment', { ...BASE, segment: '0/4' }, { ...BASE, segment: '0/2' }],
];

/** Pairs of load options that differ only in how fast, how hard or where rejects go: the same writes in the same batches. */
const NOT_WRITE_AFFECTING: Array<[label: string, before: LoadOptions, after: LoadOptions]> = [
  ['concurrency', BASE, { ...BASE, concurrency: 64 }],
  ['wcu', BASE, { ...BASE, wcu: 500 }],
  ['wcu auto', { ...BASE, wcu: 500 }, { ...BASE, wcu: 'auto:50%' }],
  ['keyWcu', BASE, { ...BASE, keyWcu: 50 }],
  ['maxAttempts', BASE, { ...BASE, maxAttempts: 3 }],
  ['memoryBytes (round-robin)', { ...BASE, order: 'round-robin' }, { ...BASE, order: 'round-robin', memoryBytes: 1024 * 1024 }],
  ['memoryBytes (spread)', { ...BASE, order: 'spread' }, { ...BASE, order: 'spread', memoryBytes: 1024 * 1024 }],
  ['memoryBytes (input)', { ...BASE, order: 'input' }, { ...BASE, order: 'input', memoryBytes: 1024 * 1024 }],
  ['tempDir', BASE, { ...BASE, tempDir: '/var/tmp/ddb' }],
  ['rejectsPath', BASE, { ...BASE, rejectsPath: 'elsewhere.rejects.jsonl' }],
  ['region', BASE, { ...BASE, region: 'eu-west-1' }],
  ['requestTimeoutMs', BASE, { ...BASE, requestTimeoutMs: 5000 }],
  ['maxRejects', BASE, { ...BASE, maxRejects: 10 }],
  ['pacing', BASE, { ...BASE, pacing: false }],
  ['checkpointPath', BASE, { ...BASE, checkpointPath: 'other.checkpoint.json' }],
  ['shardManifestPath', SHARDED, { ...SHARDED, shardManifestPath: 'other.shards.json' }],
  ['totalWcu', { ...BASE, segment: '1/4', wcu: 250 }, { ...BASE, segment: '1/4', totalWcu: 1000 }],
  [
    'types in another key order',
    { ...BASE, types: { price: 'N', active: 'BOOL', tags: 'SS' } },
    { ...BASE, types: { tags: 'SS', active: 'BOOL', price: 'N' } },
  ],
  ['shard keys in another order', { ...SHARDED, shardKeys: ['hot', 'warm', 'cold'] }, { ...SHARDED, shardKeys: ['warm', 'cold', 'hot'] }],
  ['segment spelled with spaces', { ...BASE, segment: '1/4' }, { ...BASE, segment: ' 1 / 4 ' }],
  ['segment as text or object', { ...BASE, segment: '1/4' }, { ...BASE, segment: { index: 1, count: 4 } }],
  ['shard rule as text or object', SHARDED, { ...BASE, shard: [{ kind: 'hash', shards: 4 }] }],
  ['the default format spelled out', BASE, { ...BASE, inputFormat: 'csv', delimiter: ',' }],
];

describe('writeAffectingOptions', () => {
  it.each(WRITE_AFFECTING)('a change of %s changes option %s', (_label, key, before, after) => {
    const a = recorded(before);
    const b = recorded(after);
    expect(JSON.stringify(a[key])).not.toBe(JSON.stringify(b[key]));
    expect(sameRecord(before, after)).toBe(false);
  });

  it.each(NOT_WRITE_AFFECTING)('a change of %s leaves the result as it is', (_label, before, after) => {
    expect(JSON.stringify(recorded(after))).toBe(JSON.stringify(recorded(before)));
  });

  it('the window size matters only with order window (it is not recorded otherwise)', () => {
    for (const order of ['round-robin', 'spread', 'input'] as const) {
      const opts = normalizeOptions({ ...BASE, order });
      expect(JSON.stringify(writeAffectingOptions({ ...opts, windowRows: 7 })), order).toBe(JSON.stringify(writeAffectingOptions(opts)));
    }
    const windowed = normalizeOptions({ ...BASE, order: 'window' });
    expect(writeAffectingOptions(windowed)['window']).toBe(windowed.windowRows);
    expect(writeAffectingOptions({ ...windowed, windowRows: 7 })['window']).toBe(7);
  });

  it("pins a transform by its module's hash: another module, or none, is refused with what to do; a load without one records nothing", () => {
    const withPin = (pin: string) =>
      writeAffectingOptions({ ...normalizeOptions({ ...BASE, transform: './t.mjs' }), transformLoaded: { fn: (item) => item, pin, name: './t.mjs' } });
    const a = withPin(`sha256:${'a'.repeat(64)}`);
    expect(a['transform']).toBe(`sha256:${'a'.repeat(64)}`);
    expect(recorded(BASE)).not.toHaveProperty('transform');
    const refusal = (saved: Record<string, unknown>, now: Record<string, unknown>) =>
      resumeRefusal({ version: CHECKPOINT_VERSION, input: IDENTITY, options: saved }, IDENTITY, now, 'c.json');
    expect(refusal(a, a)).toBeUndefined();
    expect(refusal(a, withPin(`sha256:${'b'.repeat(64)}`))).toMatch(
      /^the --transform module changed since checkpoint c\.json was taken .* restore the module .* delete c\.json/,
    );
    expect(refusal(a, recorded(BASE))).toMatch(/^checkpoint c\.json was taken with --transform, and this load runs without one/);
    expect(refusal(recorded(BASE), a)).toMatch(/^checkpoint c\.json was taken without --transform, and this load runs with one/);
  });

  it('a hash/time checkpoint from before still resumes; a random:N one (path-and-line suffixes) is refused', () => {
    // What older versions recorded: no suffixBase, no randomSuffix.
    const before = (options: LoadOptions) => {
      const r = recorded(options);
      const { suffixBase: _base, randomSuffix: _random, ...shard } = r['shard'] as Record<string, unknown>;
      return { ...r, shard };
    };
    const check = (options: LoadOptions) =>
      resumeRefusal({ version: CHECKPOINT_VERSION, input: IDENTITY, options: before(options) }, IDENTITY, recorded(options), 'c.json');
    expect(check({ ...BASE, shard: ['hash:4', 'time:day:at'] })).toBeUndefined();
    expect(check({ ...BASE, shard: ['random:4'], shardSeed: 3 })).toMatch(
      /^checkpoint c\.json was taken by an earlier ddb-spread, whose random:N suffixes .* delete c\.json/,
    );
    expect(recorded({ ...BASE, shard: ['hash:4'] })['shard']).not.toHaveProperty('suffixBase');
  });

  it('an auto-order checkpoint of an earlier ddb-spread, which read exports and small sets otherwise, is refused: its batches were other rows', () => {
    const { autoReading: _reading, ...before } = recorded(BASE);
    expect(resumeRefusal({ version: CHECKPOINT_VERSION, input: IDENTITY, options: before }, IDENTITY, recorded(BASE), 'c.json')).toMatch(
      /^checkpoint c\.json was taken by an earlier ddb-spread, whose auto order read this input in other batches .* delete c\.json/,
    );
    // A checkpoint of the reading before restart points inside an export's data files: refused too.
    expect(resumeRefusal({ version: CHECKPOINT_VERSION, input: IDENTITY, options: { ...before, autoReading: 2 } }, IDENTITY, recorded(BASE), 'c.json')).toMatch(
      /^checkpoint c\.json was taken by an earlier ddb-spread, whose auto order read this input in other batches \(reading 2 then, 4 now/,
    );
    // And the reading before an export of one data file had restart points inside it.
    expect(resumeRefusal({ version: CHECKPOINT_VERSION, input: IDENTITY, options: { ...before, autoReading: 3 } }, IDENTITY, recorded(BASE), 'c.json')).toMatch(
      /in other batches \(reading 3 then, 4 now/,
    );
    // Large S3 objects are now cut into ranges, in `--order stripes` too: its checkpoints of before are refused.
    const { autoReading: _none, ...stripesBefore } = recorded({ ...BASE, order: 'stripes' });
    expect(
      resumeRefusal({ version: CHECKPOINT_VERSION, input: IDENTITY, options: stripesBefore }, IDENTITY, recorded({ ...BASE, order: 'stripes' }), 'c.json'),
    ).toMatch(/^checkpoint c\.json was taken by an earlier ddb-spread, whose stripes order read this input in other batches/);
    // The named orders read as they did: their checkpoints record no reading and still resume.
    expect(recorded({ ...BASE, order: 'window' })).not.toHaveProperty('autoReading');
  });

  it('types and shard keys are recorded in sorted order, whatever order they came in', () => {
    const r = recorded({ ...SHARDED, types: { zeta: 'N', alpha: 'S', mid: 'BOOL' }, shardKeys: ['z', 'a', 'm'] });
    expect(Object.keys(r['types'] as object)).toEqual(['alpha', 'mid', 'zeta']);
    expect((r['shard'] as { keys: string[] }).keys).toEqual(['a', 'm', 'z']);
  });

  it('an unsharded, unsegmented load records null for shard, segment and columns, and the auto order its window', () => {
    expect(recorded(BASE)).toEqual({
      table: 'orders',
      inputFormat: 'csv',
      delimiter: ',',
      columns: null,
      types: {},
      infer: false,
      empty: 'omit',
      // null for the default, so a checkpoint written before --timestamps existed still resumes.
      timestamps: null,
      order: 'auto',
      window: 50_000,
      windowMemoryBytes: 128 * 1024 * 1024,
      autoReading: 4,
      shard: null,
      segment: null,
    });
  });

  it('what it records survives the checkpoint file (a JSON round trip) and matches itself again', () => {
    for (const [, , before, after] of WRITE_AFFECTING) {
      for (const options of [before, after]) {
        const now = writeAffectingOptions(normalizeOptions(options));
        expect(resumeRefusal({ version: CHECKPOINT_VERSION, input: IDENTITY, options: recorded(options) }, IDENTITY, now, CHECKPOINT)).toBeUndefined();
      }
    }
  });

  /*
   * Bug: with --order window the WriteOrderer caps the window by bytes as well as rows, and the byte cap is
   * --memory (src/io/order/writeOrderer.ts: createWindowInterleaver(..., { rows: windowRows, bytes: memoryBytes })).
   * A different --memory therefore lets writes leave the window in a different order, so the batches are a
   * different sequence; yet memoryBytes is not in writeAffectingOptions, so a resume with another --memory is
   * accepted and skips the first K batches of the new sequence: rows of the old sequence's first K batches
   * that fall later in the new one are written again, and rows the new sequence puts in its first K batches
   * are never written.
   */
  it('with order window, memoryBytes (the window byte cap) changes the result', () => {
    // The premise: the same writes through windows that differ only in their byte cap leave in different orders.
    const through = (bytes: number) => {
      const interleaver = createWindowInterleaver<string>((w) => w[0]!, { rows: 100, bytes });
      return [...['a1', 'a2', 'a3', 'b1', 'b2', 'c1'].flatMap((w) => interleaver.push(w, 1000)), ...interleaver.flush()];
    };
    expect(through(2500)).not.toEqual(through(1_000_000));
    const window: LoadOptions = { ...BASE, order: 'window' };
    expect(sameRecord(window, { ...window, memoryBytes: 1024 * 1024 })).toBe(false);
  });
});

// ---------------------------------------------------------------------------------------------------
// resumeRefusal

const CHECKPOINT = 'runs/orders.checkpoint.json';
const IDENTITY: InputIdentity = { path: 'data/rows.csv', size: 1_048_576, mtimeMs: 1_717_000_000_123, edgesSha256: 'a'.repeat(64) };

describe('resumeRefusal', () => {
  const savedFor = (options: LoadOptions, version = CHECKPOINT_VERSION, input = IDENTITY) => ({ version, input, options: recorded(options) });
  const now = (options: LoadOptions) => writeAffectingOptions(normalizeOptions(options));

  /** One sentence that names the checkpoint and says how to start over. */
  const expectStartOver = (message: string | undefined) => {
    expect(message).toBeDefined();
    expect(message).not.toContain('\n');
    expect(message).toContain(`delete ${CHECKPOINT}`);
    expect(message).toContain('start over');
  };

  it('is undefined when the version, the input and every option match', () => {
    expect(resumeRefusal(savedFor(BASE), { ...IDENTITY }, now(BASE), CHECKPOINT)).toBeUndefined();
    const busy: LoadOptions = { ...SHARDED, order: 'window', window: 500, segment: '2/3', types: { price: 'N' }, shardKeys: ['b', 'a'], shardSeed: 3 };
    expect(resumeRefusal(savedFor(busy), IDENTITY, now({ ...busy, shardKeys: ['a', 'b'], concurrency: 32, wcu: 100 }), CHECKPOINT)).toBeUndefined();
  });

  it.each<[label: string, saved: { version: number; input: InputIdentity }, input: InputIdentity, mentions: string[]]>([
    [
      'version',
      { version: CHECKPOINT_VERSION + 1, input: IDENTITY },
      IDENTITY,
      ['another version', `format ${CHECKPOINT_VERSION + 1}`, `reads ${CHECKPOINT_VERSION}`],
    ],
    ['version 0', { version: 0, input: IDENTITY }, IDENTITY, ['another version', 'format 0']],
    ['size', { version: CHECKPOINT_VERSION, input: IDENTITY }, { ...IDENTITY, size: 2_000_000 }, ['not the one', '1048576', '2000000', 'bytes']],
    ['edges hash', { version: CHECKPOINT_VERSION, input: IDENTITY }, { ...IDENTITY, edgesSha256: 'b'.repeat(64) }, ['not the one', 'first or last 64 KB']],
    [
      'mtime, without content hashes',
      { version: CHECKPOINT_VERSION, input: IDENTITY },
      { ...IDENTITY, mtimeMs: IDENTITY.mtimeMs + 1 },
      ['modified', 'modification time'],
    ],
    [
      'full hash',
      { version: CHECKPOINT_VERSION, input: { ...IDENTITY, sha256: 'c'.repeat(64) } },
      { ...IDENTITY, mtimeMs: IDENTITY.mtimeMs + 1, sha256: 'd'.repeat(64) },
      ['not the one', 'SHA-256 differs'],
    ],
  ])('a different %s is refused in one sentence that says what differs and how to start over', (_label, saved, input, mentions) => {
    const message = resumeRefusal({ ...saved, options: recorded(BASE) }, input, now(BASE), CHECKPOINT);
    expectStartOver(message);
    for (const m of mentions) expect(message).toContain(m);
  });

  it('the content decides, not the path or the modification time: another path (./c.csv, a fresh download) with the same SHA-256 resumes', () => {
    const saved = { version: CHECKPOINT_VERSION, input: { ...IDENTITY, sha256: 'c'.repeat(64) }, options: recorded(BASE) };
    expect(resumeRefusal(saved, { ...IDENTITY, path: '/elsewhere/rows.csv', mtimeMs: 5, sha256: 'c'.repeat(64) }, now(BASE), CHECKPOINT)).toBeUndefined();
    expect(resumeRefusal({ ...saved, input: IDENTITY }, { ...IDENTITY, path: './data/rows.csv' }, now(BASE), CHECKPOINT)).toBeUndefined();
  });

  it.each(WRITE_AFFECTING)('a different %s is refused, naming option %s with both values', (_label, key, before, after) => {
    const message = resumeRefusal(savedFor(before), IDENTITY, now(after), CHECKPOINT);
    expectStartOver(message);
    expect(message).toContain(`option ${key} `);
    expect(message).toContain(`${JSON.stringify(recorded(before)[key])} then`);
    expect(message).toContain(`${JSON.stringify(recorded(after)[key])} now`);
    expect(message).toContain('resume with the same options');
  });

  it('an option only one side knows is compared with null', () => {
    const saved = { version: CHECKPOINT_VERSION, input: IDENTITY, options: { ...recorded(BASE), future: 'x' } };
    const message = resumeRefusal(saved, IDENTITY, now(BASE), CHECKPOINT);
    expectStartOver(message);
    expect(message).toContain('option future differs');
    expect(message).toContain('("x" then, null now)');
    expect(resumeRefusal({ ...saved, options: recorded(BASE) }, IDENTITY, { ...now(BASE), future: 1 }, CHECKPOINT)).toContain('(null then, 1 now)');
  });

  it('the version is checked first, then the input, then the options', () => {
    const everything = resumeRefusal(savedFor({ ...BASE, table: 'other' }, 0), { ...IDENTITY, path: 'x.csv', size: 1 }, now(BASE), CHECKPOINT);
    expect(everything).toContain('another version');
    const inputAndOption = resumeRefusal(savedFor({ ...BASE, table: 'other' }), { ...IDENTITY, size: 1 }, now(BASE), CHECKPOINT);
    expect(inputAndOption).toContain('size');
    expect(inputAndOption).not.toContain('option table');
  });
});
