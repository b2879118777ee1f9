import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import type { EstimateResult, HotKey } from '../../../src/estimating/estimateTypes.js';
import { bar, compress, displayWidth, heatChar, heatStrip, plain, stripAnsi, truncate, wrap } from '../../../src/reporting/charts.js';
import { estimateJson, formatEstimate, HEAT_MAX_ROWS } from '../../../src/estimating/estimateReport.js';

// ---------------------------------------------------------------------------------------------------
// Fixture: 1.25 M orders into a 1,000 WCU table raised to 3,200 WCU (4 partitions), one hot customer.

const hotKey = (key: string, rows: number, units: number, validRows = 1_239_610, tableUnits = 2_023_602): HotKey => ({
  key,
  rows,
  rowShare: rows / validRows,
  units,
  unitShare: units / tableUnits,
});

/** Planned order: every partition at 80-85% until 630 s, then only the hot key's partition (p2) at 25%. */
function plannedHeat(): number[][] {
  return [0, 1, 2, 3].map((p) => Array.from({ length: 77 }, (_, t) => (t < 63 ? (p === 2 ? 0.85 : 0.8) : p === 2 ? 0.25 : t === 63 ? 0.05 : 0)));
}

/** Input order (sorted by customer): one partition at a time, over its sustained rate for most of its turn. */
function inputHeat(): number[][] {
  return [0, 1, 2, 3].map((p) => Array.from({ length: 142 }, (_, t) => (Math.floor(t / 36) === p ? (t % 36 < 24 ? 1.6 : 1) : 0.1)));
}

function fixture(): EstimateResult {
  return {
    version: 1,
    input: {
      file: 'data/orders-2024.jsonl.gz',
      bytes: 184_320_512,
      rows: 1_250_000,
      expired: 0,
      validRows: 1_239_610,
      superseded: 1_200,
      rejected: 10_390,
      rejectedByReason: { MISSING_KEY: 9_012, ITEM_TOO_LARGE: 1_378 },
      rejectsPath: 'data/orders-2024.jsonl.gz.dry-run.rejects.jsonl',
    },
    items: {
      totalBytes: 1_663_556_620,
      averageBytes: 1_342,
      maxBytes: 7_912,
      histogram: [
        { upToBytes: 1024, items: 702_118 },
        { upToBytes: 2048, items: 431_904 },
        { upToBytes: 4096, items: 98_211 },
        { upToBytes: 8192, items: 7_377 },
        { upToBytes: 16_384, items: 0 },
        { upToBytes: 32_768, items: 0 },
        { upToBytes: 65_536, items: 0 },
        { upToBytes: 131_072, items: 0 },
        { upToBytes: 262_144, items: 0 },
        { upToBytes: 409_600, items: 0 },
      ],
    },
    writeUnits: { table: 2_023_602, indexes: { byCustomer: 2_023_602, byDate: 1_239_610 }, total: 5_286_814 },
    table: {
      name: 'Orders',
      source: 'describe-table',
      billingMode: 'PROVISIONED',
      provisionedWcu: 1_000,
      provisionedRcu: undefined,
      warmWriteUnits: 4_000,
      itemCount: 0,
      gsis: [
        { name: 'byCustomer', projection: 'ALL' },
        { name: 'byDate', projection: 'KEYS_ONLY' },
      ],
      partitionsNow: 1,
      partitionsAtTarget: 4,
    },
    keys: {
      distinct: 48_210,
      distinctWritten: 48_210,
      hottest: [hotKey('cust-0007', 61_980, 182_124), hotKey('cust-0042', 24_792, 60_708), hotKey('cust-1337', 12_396, 40_472)],
      hottestWritten: [hotKey('cust-0007', 61_980, 182_124), hotKey('cust-0042', 24_792, 60_708), hotKey('cust-1337', 12_396, 40_472)],
      sharded: false,
      indexes: [],
    },
    rate: { targetWcu: 3_200, assumedWcu: 3_200, peakWcu: 3_200, reason: '--wcu 3200', warning: undefined, keyWcu: 250, throttleFreeWcu: 2_900 },
    time: {
      idealSeconds: 632.3756,
      estimatedSeconds: 760.3149,
      startupSeconds: 0.4123,
      readSeconds: 31.9,
      writeSeconds: 728.0026,
      bottleneck: { kind: 'key', key: 'cust-0007', units: 182_124, seconds: 728.496 },
    },
    simulations: {
      planned: { order: 'round-robin', paced: true, seconds: 760.3149, throttledItems: 0, heat: { bucketSeconds: 10, partitions: plannedHeat() } },
      input: { order: 'input', paced: false, seconds: 1_412.8, throttledItems: 48_211, heat: { bucketSeconds: 10, partitions: inputHeat() } },
    },
    shardAdvice: [
      {
        key: 'cust-0007',
        units: 182_124,
        requiredWcu: 288.0004,
        minShards: 2,
        recommendedShards: 4,
        flags: '--shard hash:4 --shard-keys cust-0007',
        index: undefined,
        reads: '4 queries per key, merged by sort key (hash: point reads too)',
      },
    ],
    capacity: {
      loadWcu: 3_200,
      partitionsAfterRaise: 4,
      perPartitionWcuAfterLoad: 250,
      noSplitWcu: 1_000,
      noSplitSeconds: 2_023.602,
      advice: [
        'Raise the table to 3,200 WCU for the load, then set it back to 1,000 WCU.',
        'Or shard "cust-0007" and load at 1,000 WCU without a split: 33 min 44 s.',
      ],
    },
    cost: {
      prices: { region: 'us-east-1', date: '2025-06-01', onDemandPerMillionWrites: 0.625, provisionedPerWcuHour: 0.00065 },
      onDemandUsd: 3.304258_75,
      provisionedWcuHours: 3_200,
      provisionedUsd: 2.08,
      importFromS3: 'Empty table: Import from S3 loads it with no write capacity.',
    },
    managedPaths: [
      { name: 'import-from-s3', serves: false, why: 'it creates a new table', wouldNot: 'load an existing table', cost: 'per GB of source' },
      { name: 'bulk-put-items', serves: true, why: 'DynamoDB JSON in S3', wouldNot: 'pace per partition key', cost: 'no public price was found' },
    ],
    verify: VERIFY,
  };
}

const way = (readUnits: number, calls: number, rcu: number) => ({
  readUnits,
  calls,
  seconds: readUnits / rcu,
  onDemandUsd: (readUnits / 1e6) * 0.125,
  provisionedRcuHours: 0,
  provisionedUsd: 0,
  usd: (readUnits / 1e6) * 0.125,
});

const VERIFY: EstimateResult['verify'] = {
  keys: 1_238_410,
  sample: 1,
  consistentRead: true,
  rcu: 9_600,
  rcuSource: 'on-demand-default',
  rcuPercent: 80,
  table: { bytes: 1_500_000_000, items: 1_238_410, source: 'describe-table' },
  batchGet: way(1_300_000, 12_385, 9_600),
  scan: { ...way(367_000, 1_431, 9_600), segments: 1 },
  cheaper: 'scan',
  why: 'a Scan of the table reads 367,000 read units, BatchGetItem of the keys 1,300,000',
  prices: { region: 'us-east-1', date: '2024-11', onDemandPerMillionReads: 0.125, provisionedPerRcuHour: 0.00013 },
  flags: '--rcu 9600',
};

const PREWARM: NonNullable<EstimateResult['prewarm']> = {
  given: false,
  targetWcu: 20_000,
  raises: [{ index: undefined, from: 4_000, to: 20_000 }],
  command: 'aws dynamodb update-table --table-name Orders --warm-throughput WriteUnitsPerSecond=20000',
  secondsWithout: 1_800,
  secondsWith: 600,
  savedSeconds: 1_200,
  cost: 'billed by AWS; no public price was found',
  notes: [],
};

const text = (result: EstimateResult = fixture(), width?: number) =>
  formatEstimate(result, { color: false, excerpts: true, ...(width === undefined ? {} : { width }) });
const linesOf = (report: string) => report.replace(/\n$/, '').split('\n');

/** The lines of one section: its heading (at the margin) and the indented lines after it. */
function section(report: string, title: string): string[] {
  const lines = linesOf(report);
  const start = lines.indexOf(title);
  expect(start, `section ${title}`).toBeGreaterThan(0);
  const end = lines.findIndex((l, i) => i > start && !l.startsWith(' '));
  return lines.slice(start, end < 0 ? undefined : end);
}

/** The lines of one simulation inside Partitions: its header row to the next header or the legend. */
function simulationRows(report: string, name: 'planned order' | 'input order'): string[] {
  const lines = section(report, 'Partitions');
  const start = lines.findIndex((l) => l.startsWith(`  ${name}`));
  const rest = lines.slice(start + 1);
  const end = rest.findIndex((l) => !l.startsWith('    '));
  return rest.slice(0, end < 0 ? undefined : end).filter((l) => /^\s+p\d+ │/.test(l));
}

const BAR_CHARS = /[█▏▎▍▌▋▊▉]+/;
/** A bar's length in eighths of a column. */
function barEighths(line: string): number {
  const drawn = BAR_CHARS.exec(line)?.[0] ?? '';
  const partial = ['▏', '▎', '▍', '▌', '▋', '▊', '▉'];
  return [...drawn].reduce((sum, ch) => sum + (ch === '█' ? 8 : partial.indexOf(ch) + 1), 0);
}

// ---------------------------------------------------------------------------------------------------

describe('formatEstimate: sections and numbers', () => {
  const report = text();

  it.each<[string, string[]]>([
    [
      'Input',
      [
        '  file            data/orders-2024.jsonl.gz (175.8 MB, 184,320,512 bytes)',
        '  rows            1,250,000: 1,239,610 valid, 1,200 superseded by a later row',
        '  rejected        10,390 (MISSING_KEY 9,012, ITEM_TOO_LARGE 1,378)',
        '  reject file     data/orders-2024.jsonl.gz.dry-run.rejects.jsonl',
      ],
    ],
    ['Items', ['  size            average 1.3 KB, largest 7.7 KB, total 1.5 GB', 'up to 1 KB', 'up to 8 KB', '702,118', '56.6%']],
    ['Write units', ['  table           2,023,602', '  GSI byCustomer  2,023,602', '  GSI byDate      1,239,610', '  total           5,286,814']],
    [
      'Table',
      [
        '  name            Orders (from DescribeTable), 0 items now',
        '  billing         provisioned, 1,000 WCU; warm throughput 4,000 write units/s',
        '  GSIs            byCustomer (ALL), byDate (KEYS_ONLY)',
        '  partitions      1 now, 4 at the target rate',
      ],
    ],
    ['Keys', ['  distinct        48,210 partition key values (estimate, ±2%)', '"cust-0007"', '9.0%', '61,980', '182,124', '"cust-1337"']],
    [
      'Time',
      [
        '  rate            target 3,200 WCU/s (--wcu 3200); --key-wcu 250 per key',
        '  duration        12 min 40 s estimated, 10 min 32 s ideal (at 3,200 WCU/s)',
        '  bottleneck      key "cust-0007": 182,124 units at 250 WCU/s take 12 min 08 s',
        '  throttle-free   up to 2,900 WCU/s in the planned order',
      ],
    ],
    [
      'Partitions',
      [
        '  planned order   round-robin, paced: 12 min 40 s, no throttled writes',
        '  input order     input, unpaced: 23 min 33 s, 48,211 throttled writes',
        'one column = 30.0 s',
      ],
    ],
    [
      'Shard advice',
      [
        '  "cust-0007": 182,124 units, needs 288 WCU/s: 4 shards advised, at least 2',
        '    --shard hash:4 --shard-keys cust-0007',
        '    reads: 4 queries per key, merged by sort key (hash: point reads too)',
        '  - Adaptive capacity may isolate a hot key, never above 1,000 WCU/s: shard it.',
      ],
    ],
    [
      'Capacity',
      [
        '  for the load    3,200 WCU (4 partitions); afterwards 250 WCU/s per partition',
        '  without a split 1,000 WCU, 33 min 44 s',
        '  - Raise the table to 3,200 WCU',
      ],
    ],
    [
      'Cost',
      [
        '  on-demand       $3.30 ($0.625 per million write request units)',
        '  provisioned     3,200 WCU-hours, $2.08 ($0.00065 per WCU-hour)',
        '  prices          us-east-1, as of 2025-06-01',
        '  Import from S3  Empty table: Import from S3 loads it with no write capacity.',
      ],
    ],
    [
      'Managed paths',
      ['  Import from S3  would not serve: it creates a new table', '  bulk put items  would serve: DynamoDB JSON in S3; it would not pace per'],
    ],
  ])('%s', (title, expected) => {
    const body = section(report, title).join('\n');
    for (const piece of expected) expect(body).toContain(piece);
  });

  it('shows pre-warming when the estimate has advice: the command, the time saved, the price', () => {
    const out = text({ ...fixture(), table: { ...fixture().table, billingMode: 'PAY_PER_REQUEST', provisionedWcu: undefined }, prewarm: PREWARM });
    const body = section(out, 'Pre-warming').join('\n').replace(/\s+/g, ' ');
    expect(body).toContain("below the load's 20,000 write units/s");
    expect(body).toContain('aws dynamodb update-table --table-name Orders --warm-throughput WriteUnitsPerSecond=20000');
    expect(body).toContain('time saved 20 min 00 s of writing (30 min 00 s growing from the warm throughput, 10 min 00 s warm)');
    expect(body).toContain('cost billed by AWS; no public price was found');
    const given = section(text({ ...fixture(), prewarm: { ...PREWARM, given: true } }), 'Pre-warming')
      .join('\n')
      .replace(/\s+/g, ' ');
    expect(given).toContain('--prewarm raises before the first write: table 4,000 → 20,000 write units/s; the figures above assume it');
  });

  it('puts the sections in order, headings at the margin, after the title and a blank line', () => {
    expect(linesOf(report)[1]).toBe('');
    const headings = linesOf(report).filter((l, i) => i > 1 && !l.startsWith(' '));
    expect(headings).toEqual([
      'Input',
      'Items',
      'Write units',
      'Table',
      'Keys',
      'Time',
      'Partitions',
      'Shard advice',
      'Capacity',
      'Cost',
      'Managed paths',
      'Verify',
    ]);
    expect(linesOf(report)[0]).toBe('ddb-spread estimate: data/orders-2024.jsonl.gz into Orders (nothing written)');
  });

  it('draws the size histogram from the first to the last non-empty band, empty bands between kept', () => {
    const r = fixture();
    r.items.histogram = r.items.histogram.map((b) => ({ ...b, items: b.upToBytes === 1024 || b.upToBytes === 262_144 ? 0 : b.items || 1 }));
    r.items.histogram[9]!.items = 3;
    const bands = section(text(r), 'Items').filter((l) => l.includes('up to'));
    expect(bands.map((l) => /up to [\d,]+ KB/.exec(l)?.[0])).toEqual([
      'up to 2 KB',
      'up to 4 KB',
      'up to 8 KB',
      'up to 16 KB',
      'up to 32 KB',
      'up to 64 KB',
      'up to 128 KB',
      'up to 256 KB',
      'up to 400 KB',
    ]);
    expect(bands[7]).toMatch(/up to 256 KB\s+0\.0%\s+0$/);
    expect(bands[8]).toMatch(/up to 400 KB\s+▏\s+<0\.1%\s+3$/);
  });

  it('names the table rate as the bottleneck when no key binds, and on-demand billing', () => {
    const r = fixture();
    r.time.bottleneck = { kind: 'table', wcu: 3_200 };
    r.table.billingMode = 'PAY_PER_REQUEST';
    r.table.provisionedWcu = undefined;
    r.shardAdvice = [];
    const out = text(r);
    expect(section(out, 'Time').join('\n')).toContain("bottleneck      the table's rate, 3,200 WCU/s");
    expect(section(out, 'Table').join('\n')).toContain('billing         on-demand');
    expect(section(out, 'Shard advice')).toEqual(['Shard advice', '  none            no key needs more than --key-wcu 250']);
  });

  it('shows the keys as written after sharding, and says so', () => {
    const r = fixture();
    r.keys.sharded = true;
    r.keys.distinctWritten = 48_213;
    r.keys.hottestWritten = [hotKey('cust-0042', 24_792, 60_708), hotKey('cust-0007#1', 15_495, 45_531), hotKey('cust-0007#3', 15_495, 45_531)];
    const keys = section(text(r), 'Keys').join('\n');
    expect(keys).toContain('  after --shard   48,213 values as written');
    expect(keys).toContain('"cust-0007#3"');
    expect(section(text(fixture()), 'Keys').join('\n')).not.toContain('after --shard');
  });

  it('leaves out what is unknown: file size, reject file, warm throughput, item count', () => {
    const r = fixture();
    r.input = { ...r.input, bytes: undefined, rejectsPath: undefined, rejected: 0, rejectedByReason: {} };
    r.table = { ...r.table, warmWriteUnits: undefined, itemCount: undefined };
    const out = text(r);
    expect(section(out, 'Input').join('\n')).toContain('data/orders-2024.jsonl.gz (size unknown)');
    expect(section(out, 'Input')).toContain('  rejected        0');
    expect(out).not.toContain('reject file');
    expect(out).not.toContain('warm throughput');
    expect(out).not.toContain('items now');
  });
});

describe('bars', () => {
  it.each<[number, number, string]>([
    [0, 10, ''],
    [1, 10, '██████████'],
    [0.5, 10, '█████'],
    [0.55, 10, '█████▌'],
    [0.001, 10, '▏'],
    [2, 4, '████'],
  ])('bar(%d, %d) = %j', (fraction, width, expected) => {
    expect(bar(fraction, width)).toBe(expected);
  });

  it('hot key bars scale with the share of write units', () => {
    const r = fixture();
    r.keys.hottest = [0.8, 0.4, 0.2, 0.1].map((share, i) => ({ key: `k${i}`, rows: 1, rowShare: 0, units: 1, unitShare: share }));
    const rows = section(text(r), 'Keys').filter((l) => /"k\d"/.test(l));
    const lengths = rows.map(barEighths);
    expect(lengths).toHaveLength(4);
    for (let i = 1; i < 4; i++) expect(Math.abs(lengths[i]! * 2 - lengths[i - 1]!)).toBeLessThanOrEqual(2);
    expect(rows.map((l) => /\d+\.\d%/.exec(l)?.[0])).toEqual(['80.0%', '40.0%', '20.0%', '10.0%']);
  });
});

describe('heat strip', () => {
  it.each<[number, string]>([
    [0, ' '],
    [-1, ' '],
    [0.1, '░'],
    [0.3, '▒'],
    [0.6, '▓'],
    [0.8, '█'],
    [1, '█'],
    [1 + 1e-9, '█'],
    [1.01, '!'],
    [7, '!'],
  ])('heatChar(%d) = %j', (utilisation, expected) => {
    expect(heatChar(utilisation)).toBe(expected);
  });

  it('merges buckets by their peak, so one second over capacity survives compression', () => {
    expect(compress([0.1, 0.1, 1.5, 0.1, 0.2], 2)).toEqual([0.1, 1.5, 0.2]);
    expect(heatStrip([0.1, 0.1, 1.5, 0.1, 0.2], 2, 5, plain)).toBe('░!░  ');
  });

  it('has one row per partition, marks over-capacity buckets in the input order only', () => {
    const report = text();
    const planned = simulationRows(report, 'planned order');
    const input = simulationRows(report, 'input order');
    expect(planned.map((l) => /p\d+/.exec(l)?.[0])).toEqual(['p0', 'p1', 'p2', 'p3']);
    expect(input).toHaveLength(4);
    for (const line of planned) expect(line).not.toContain('!');
    for (const line of input) expect(line).toContain('!');
    expect(input.map((l) => /(\d+%)$/.exec(l)?.[1])).toEqual(['160%', '160%', '160%', '160%']);
    // The same time scale for both: the planned order (770 s) ends about halfway through the input's (1,420 s).
    const strip = (l: string) => l.slice(l.indexOf('│') + 1, l.lastIndexOf('│'));
    expect(strip(planned[2]!).trimEnd().length).toBe(Math.ceil(77 / 3));
    expect(strip(input[0]!).length).toBe(strip(planned[0]!).length);
  });

  it('with more than 16 partitions shows the 16 with the highest peak, in partition order, and says so', () => {
    const r = fixture();
    const hot = new Set([3, 17, 40, 63]);
    r.simulations.input.heat.partitions = Array.from({ length: 64 }, (_, p) =>
      Array.from({ length: 50 }, (_, t) => (hot.has(p) && t === 10 ? 2 : 0.3 + (p % 13) / 100)),
    );
    const rows = simulationRows(text(r), 'input order');
    expect(rows).toHaveLength(HEAT_MAX_ROWS);
    const shown = rows.map((l) => Number(/p(\d+)/.exec(l)?.[1]));
    expect(shown).toEqual([...shown].sort((a, b) => a - b));
    for (const p of hot) expect(shown).toContain(p);
    expect(section(text(r), 'Partitions').join('\n')).toContain('the 16 hottest of 64 partitions (by peak)');
  });
});

/** A result at the limits: 40 hot keys with 200-character values, 64 partitions of 600 buckets, long names. */
function large(): EstimateResult {
  const r = fixture();
  const longKey = (i: number) => `customer-${String(i).padStart(4, '0')}-${'x'.repeat(190)}`;
  const keys = Array.from({ length: 40 }, (_, i) => hotKey(longKey(i), 9_999_999 - i * 1000, 99_999_999 - i * 10_000, 999_999_999, 999_999_999));
  r.keys = {
    distinct: 123_456_789,
    distinctWritten: 123_999_999,
    hottest: keys,
    hottestWritten: keys,
    sharded: true,
    indexes: [{ index: `index_0_${'g'.repeat(200)}`, hottest: keys }],
  };
  r.input.file = `/mnt/${'very-long-directory-name/'.repeat(8)}orders.jsonl.gz`;
  r.input.rejectsPath = `${r.input.file}.rejects.jsonl`;
  r.input.rejectedByReason = { MISSING_KEY: 1_234_567, ITEM_TOO_LARGE: 7_654_321, KEY_TYPE_MISMATCH: 99, JSON_SYNTAX: 5, TYPE_ERROR: 12_345 };
  const gsiName = (i: number) => `index_${i}_${'g'.repeat(200)}`;
  r.table.gsis = Array.from({ length: 5 }, (_, i) => ({ name: gsiName(i), projection: 'INCLUDE' as const }));
  r.writeUnits.indexes = Object.fromEntries(r.table.gsis.map((g) => [g.name, 123_456_789_012]));
  const heat = (over: boolean) =>
    Array.from({ length: 64 }, (_, p) => Array.from({ length: 600 }, (_, t) => (over && (t + p) % 17 === 0 ? 12.5 : ((t * p) % 100) / 100)));
  r.simulations.planned.heat = { bucketSeconds: 1, partitions: heat(false) };
  r.simulations.input.heat = { bucketSeconds: 1, partitions: heat(true) };
  r.shardAdvice = keys.slice(0, 10).map((k) => ({
    key: k.key,
    units: k.units,
    requiredWcu: 123_456.7,
    minShards: 1_000,
    recommendedShards: 2_000,
    flags: `--shard hash:2000 --shard-keys ${k.key}`,
    index: undefined,
    reads: '2000 queries per logical key (one per suffix, merged by sort key)',
  }));
  r.capacity.advice = [`Raise the table to ${'9'.repeat(120)} WCU.`, 'A'.repeat(300)];
  r.time.bottleneck = { kind: 'key', key: longKey(0), units: 99_999_999, seconds: 400_000 };
  return r;
}

describe('width', () => {
  it.each([80, 60, 40, 132])('every line of a large result fits %d columns', (width) => {
    const report = text(large(), width);
    const over = linesOf(report).filter((l) => displayWidth(l) > width);
    expect(over).toEqual([]);
  });

  it('narrower than 40 is drawn at 40; the default is 80', () => {
    expect(text(large(), 10)).toBe(text(large(), 40));
    expect(text(large())).toBe(text(large(), 80));
    expect(Math.max(...linesOf(text(large())).map(displayWidth))).toBe(80);
  });

  it('cuts long key names with …, keeps one row per key and 16 partitions', () => {
    const report = text(large());
    const keyRows = section(report, 'Keys').filter((l) => l.includes('"customer-'));
    // 40 keys in each of hottest, hottest as written and the GSI's table.
    expect(keyRows).toHaveLength(120);
    for (const line of keyRows) expect(line).toMatch(/"customer-\d{4}-x+…/);
    // In sentences a key is cut at 40 columns, so a 200-character key takes one line, not four.
    expect(section(report, 'Time').find((l) => l.includes('bottleneck'))).toMatch(/key "customer-0000-x{24}…: 99,999,999 units/);
    // A heading, four lines per key (sizes on two, flags, reads), and the line on adaptive capacity.
    expect(section(report, 'Shard advice')).toHaveLength(1 + 10 * 4 + 1);
    expect(simulationRows(report, 'planned order')).toHaveLength(16);
    expect(simulationRows(report, 'input order')).toHaveLength(16);
  });

  it('counts wide characters as two columns', () => {
    expect(displayWidth('顧客')).toBe(4);
    expect(displayWidth('\u001b[31m!\u001b[0m')).toBe(1);
    expect(truncate('顧客顧客顧客', 5)).toBe('顧客…');
    const r = fixture();
    r.keys.hottest = [hotKey('顧客'.repeat(30), 5, 5)];
    for (const line of linesOf(text(r, 60))) expect(displayWidth(line)).toBeLessThanOrEqual(60);
  });

  it('wraps words and cuts a word longer than the line', () => {
    expect(wrap('aaa bbb ccc', 9, '- ', '  ')).toEqual(['- aaa bbb', '  ccc']);
    expect(wrap('x'.repeat(10), 6, '> ', '  ')).toEqual(['> xxxx', '  xxxx', '  xx']);
  });
});

describe('colour', () => {
  it('writes no escape codes without colour', () => {
    for (const report of [text(), text(large(), 60), formatEstimate(fixture(), { color: false, excerpts: false })]) expect(report).not.toMatch(/\u001b/);
  });

  it('with colour: ANSI headings, bars and red over-capacity marks; the same text underneath', () => {
    const coloured = formatEstimate(fixture(), { color: true, excerpts: true });
    expect(coloured).toContain('\u001b[1mInput\u001b[0m');
    expect(coloured).toMatch(/\u001b\[1;31m!+\u001b\[0m/);
    expect(coloured).toMatch(/\u001b\[36m█+/);
    expect(stripAnsi(coloured)).toBe(text());
  });

  it('escapes control characters in key values and paths, so data cannot drive the terminal', () => {
    const r = fixture();
    const evil = 'evil\u001b[2J\u009b31m\u202e';
    r.keys.hottest = [hotKey(evil, 1, 1)];
    r.time.bottleneck = { kind: 'key', key: evil, units: 1, seconds: 1 };
    r.input.file = 'in\rput.csv';
    const report = text(r);
    expect(report).not.toMatch(/[\u001b\u009b\u202e\r]/);
    expect(section(report, 'Keys').join('\n')).toContain('"evil\\u001b[2J\\u009b31m…');
    expect(section(report, 'Time').join('\n')).toContain('key "evil\\u001b[2J\\u009b31m\\u202e": 1 units');
    expect(report).toContain('in\\u000dput.csv');
  });
});

describe('--no-excerpts', () => {
  const hidden = formatEstimate(fixture(), { color: false, excerpts: false });

  it('shows no key value anywhere: hot keys, bottleneck, shard flags, advice', () => {
    expect(hidden).not.toContain('cust-');
    expect(section(hidden, 'Keys').filter((l) => l.includes('(hidden)'))).toHaveLength(3);
    expect(section(hidden, 'Time').join('\n')).toContain('key (hidden): 182,124 units');
    expect(section(hidden, 'Shard advice').join('\n')).toContain('--shard hash:4 --shard-keys (hidden)');
    expect(section(hidden, 'Capacity').join('\n')).toContain('Or shard "(hidden)" and load');
  });

  it('hides a key only where it stands as a word, so numbers that contain it survive', () => {
    const r = fixture();
    r.keys.hottest = [hotKey('1', 10, 10)];
    r.keys.hottestWritten = [];
    r.capacity.advice = ['Key 1 needs 1,000 WCU for 1.5 s; shard "1".'];
    const capacity = section(formatEstimate(r, { color: false, excerpts: false }), 'Capacity').join('\n');
    expect(capacity).toContain('Key (hidden) needs 1,000 WCU for 1.5 s; shard "(hidden)".');
  });

  it('hides key values in the JSON too when asked', () => {
    const json = estimateJson(fixture(), { excerpts: false });
    expect(json).not.toContain('cust-');
    const parsed = JSON.parse(json) as { keys: { hottest: Array<{ key: string }> }; shardAdvice: Array<{ flags: string }> };
    expect(parsed.keys.hottest.map((k) => k.key)).toEqual(['(hidden)', '(hidden)', '(hidden)']);
    expect(parsed.shardAdvice[0]!.flags).toBe('--shard hash:4 --shard-keys (hidden)');
    expect(estimateJson(fixture())).toContain('cust-0007');
  });
});

describe('estimateJson', () => {
  const json = estimateJson(fixture());
  const parsed = JSON.parse(json) as Record<string, unknown>;
  const at = (path: string) => path.split('.').reduce<unknown>((v, k) => (v as Record<string, unknown>)[k], parsed);

  it('is one line of JSON ending in a newline, and round-trips', () => {
    expect(json.endsWith('}\n')).toBe(true);
    expect(json.trimEnd()).not.toContain('\n');
    expect(estimateJson(JSON.parse(json) as EstimateResult)).toBe(json);
  });

  it.each<[string, string[]]>([
    [
      '',
      [
        'version',
        'input',
        'items',
        'writeUnits',
        'table',
        'keys',
        'rate',
        'time',
        'simulations',
        'shardAdvice',
        'capacity',
        'cost',
        'workers',
        'prewarm',
        'managedPaths',
        'costGuard',
        'verify',
      ],
    ],
    ['managedPaths.0', ['name', 'serves', 'why', 'wouldNot', 'cost']],
    ['input', ['file', 'bytes', 'rows', 'validRows', 'expired', 'superseded', 'rejected', 'rejectedByReason', 'rejectsPath']],
    ['items', ['totalBytes', 'averageBytes', 'maxBytes', 'histogram']],
    ['writeUnits', ['table', 'indexes', 'total']],
    [
      'table',
      ['name', 'source', 'billingMode', 'provisionedWcu', 'provisionedRcu', 'warmWriteUnits', 'itemCount', 'gsis', 'partitionsNow', 'partitionsAtTarget'],
    ],
    ['keys', ['distinct', 'distinctWritten', 'hottest', 'hottestWritten', 'sharded', 'indexes']],
    ['keys.hottest.0', ['key', 'rows', 'rowShare', 'units', 'unitShare']],
    ['rate', ['targetWcu', 'assumedWcu', 'peakWcu', 'reason', 'warning', 'keyWcu', 'throttleFreeWcu']],
    ['time', ['idealSeconds', 'estimatedSeconds', 'startupSeconds', 'readSeconds', 'writeSeconds', 'bottleneck']],
    ['time.bottleneck', ['kind', 'key', 'units', 'seconds']],
    ['simulations', ['planned', 'input']],
    ['simulations.planned', ['order', 'paced', 'seconds', 'throttledItems', 'heat']],
    ['simulations.planned.heat', ['bucketSeconds', 'partitions']],
    ['shardAdvice.0', ['key', 'units', 'requiredWcu', 'minShards', 'recommendedShards', 'flags', 'index', 'reads']],
    ['capacity', ['loadWcu', 'partitionsAfterRaise', 'perPartitionWcuAfterLoad', 'noSplitWcu', 'noSplitSeconds', 'advice']],
    ['cost', ['prices', 'onDemandUsd', 'provisionedWcuHours', 'provisionedUsd', 'importFromS3']],
    ['cost.prices', ['region', 'date', 'onDemandPerMillionWrites', 'provisionedPerWcuHour']],
    ['verify', ['keys', 'sample', 'consistentRead', 'rcu', 'rcuSource', 'rcuPercent', 'table', 'batchGet', 'scan', 'cheaper', 'why', 'prices', 'flags']],
    ['verify.batchGet', ['readUnits', 'calls', 'seconds', 'onDemandUsd', 'provisionedRcuHours', 'provisionedUsd', 'usd']],
    ['verify.scan', ['readUnits', 'calls', 'seconds', 'onDemandUsd', 'provisionedRcuHours', 'provisionedUsd', 'usd', 'segments']],
    ['verify.prices', ['region', 'date', 'onDemandPerMillionReads', 'provisionedPerRcuHour']],
  ])('field order of %s', (path, keys) => {
    expect(Object.keys(path === '' ? parsed : (at(path) as object))).toEqual(keys);
  });

  it('writes pre-warming field by field, an unreported index or warm throughput as null', () => {
    const out = JSON.parse(estimateJson({ ...fixture(), prewarm: PREWARM })) as { prewarm: Record<string, unknown> };
    expect(Object.keys(out.prewarm)).toEqual(['given', 'targetWcu', 'raises', 'command', 'secondsWithout', 'secondsWith', 'savedSeconds', 'cost', 'notes']);
    expect(out.prewarm['raises']).toEqual([{ index: null, from: 4_000, to: 20_000 }]);
    expect(parsed['prewarm']).toBeNull();
  });

  it('keeps the order whatever order the result was built in', () => {
    const r = fixture();
    const shuffled = Object.fromEntries(Object.entries(r).reverse()) as unknown as EstimateResult;
    expect(estimateJson(shuffled)).toBe(json);
  });

  it.each<[string, unknown]>([
    ['time.idealSeconds', 632.4],
    ['time.estimatedSeconds', 760.3],
    ['time.bottleneck.seconds', 728.5],
    ['keys.hottest.0.unitShare', 0.09],
    ['keys.hottest.0.rowShare', 0.05],
    ['keys.hottest.1.unitShare', 0.03],
    ['shardAdvice.0.requiredWcu', 288],
    ['capacity.noSplitSeconds', 2_023.6],
    ['cost.onDemandUsd', 3.3],
    ['cost.prices.provisionedPerWcuHour', 0.00065],
    ['input.bytes', 184_320_512],
    ['table.provisionedRcu', null],
    ['input.rejectedByReason', { ITEM_TOO_LARGE: 1_378, MISSING_KEY: 9_012 }],
    ['writeUnits.indexes', { byCustomer: 2_023_602, byDate: 1_239_610 }],
    ['simulations.input.heat.partitions.0.0', 1.6],
  ])('%s = %j', (path, expected) => {
    expect(at(path)).toEqual(expected);
  });

  it('rounds shares to 4 decimals, seconds to 0.1, dollars to the cent, utilisation to 0.001', () => {
    const r = fixture();
    r.keys.hottest = [{ key: 'k', rows: 1, rowShare: 0.123456, units: 1, unitShare: 1 / 3 }];
    r.time.idealSeconds = 12.3456;
    r.cost.provisionedUsd = 1234.5678;
    r.simulations.planned.heat.partitions = [[0.12345, 1 / 3]];
    const out = JSON.parse(estimateJson(r)) as EstimateResult;
    expect(out.keys.hottest[0]).toMatchObject({ rowShare: 0.1235, unitShare: 0.3333 });
    expect(out.time.idealSeconds).toBe(12.3);
    expect(out.cost.provisionedUsd).toBe(1234.57);
    expect(out.simulations.planned.heat.partitions).toEqual([[0.123, 0.333]]);
  });

  it('writes the table bottleneck with its own fields', () => {
    const r = fixture();
    r.time.bottleneck = { kind: 'table', wcu: 3_200 };
    expect((JSON.parse(estimateJson(r)) as EstimateResult).time.bottleneck).toEqual({ kind: 'table', wcu: 3_200 });
  });
});

describe('docs/ESTIMATE.md', () => {
  it("shows this fixture's text report as its example", () => {
    const doc = readFileSync(new URL('../../../docs/ESTIMATE.md', import.meta.url), 'utf8');
    const example = /## Example[\s\S]*?```text\n([\s\S]*?)```/.exec(doc)?.[1];
    expect(example).toBe(text());
    // Under 74: the shard advice's read cost and adaptive capacity took two lines, the managed paths four, the verify's price seven.
    expect(linesOf(text()).length).toBeLessThan(74);
  });
});

describe('the whole load of --workers N', () => {
  const workers = {
    count: 4,
    by: 'parts' as const,
    why: 'one DynamoDB export (01): each item is in one of its data files',
    inputBytes: 8_000_000,
    largestShareBytes: 2_100_000,
    bytesReadByAll: 8_000_000,
    readSeconds: 3.25,
  };

  it('is null in the JSON without --workers, and its fields in order with it', () => {
    expect((JSON.parse(estimateJson(fixture())) as Record<string, unknown>)['workers']).toBeNull();
    const parsed = JSON.parse(estimateJson({ ...fixture(), workers })) as { workers: Record<string, unknown> };
    expect(Object.keys(parsed.workers)).toEqual(['count', 'by', 'why', 'inputBytes', 'largestShareBytes', 'bytesReadByAll', 'readSeconds']);
    expect(parsed.workers['readSeconds']).toBe(3.3);
  });

  it('the text names the division, what all the workers read and how to run them', () => {
    const text = formatEstimate({ ...fixture(), workers }, { color: false, excerpts: true, width: 200 });
    expect(text).toMatch(/^Workers \(4, --segment 0\/4 … 3\/4\)$/m);
    expect(text).toMatch(/division\s+by part: one DynamoDB export/);
    expect(text).toMatch(/read by all of them together \(1\.00x the input\); the largest share 2\.0 MB/);
    expect(formatEstimate(fixture(), { color: false, excerpts: true, width: 200 })).not.toMatch(/^Workers/m);
  });
});
