/**
 * One worker of the CLI on 500-byte items (DynamoDB's size: attribute names plus values), the size of the
 * worked migration example in docs/OPERATIONS.md, where the other benches' rows are 75-250 bytes. The same
 * generated items load into the instant sink (bench/instantSink.ts: every BatchWriteItem answered at once,
 * so the client's own CPU is what shows) twice: as one key-sorted CSV, and as a full DynamoDB export of 8
 * gzip data files (a local folder). Prints the items' DynamoDB size, the export's JSON and gzip bytes per
 * item, then CPU per item, items/s and peak RSS of each load. Asserts nothing.
 *
 *   npm run build && npx tsx bench/wideItems.ts [--rows 200000]
 */
import { spawn } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { gzipSync } from 'node:zlib';
import { startInstantSink } from './instantSink.js';

const { values: flags } = parseArgs({ options: { rows: { type: 'string' } } });
const ROWS = Number(flags.rows ?? 200_000);
if (!Number.isInteger(ROWS) || ROWS < 1) throw new Error(`--rows must be a whole number from 1, got ${flags.rows}`);
const KEYS = 20_000;
const FILES = 8;
const NUMBERS = new Set(['amount', 'qty', 'score']);
const repoRoot = join(import.meta.dirname, '..');

/** The process's own CPU and peak RSS, written at exit to $WIDE_STATS (the CLI runs unchanged; scaleOut.ts does the same). */
const STATS_AT_EXIT = `data:text/javascript,${encodeURIComponent(
  [
    "import { readFileSync, writeFileSync } from 'node:fs';",
    "process.on('exit', () => {",
    '  const u = process.resourceUsage();',
    '  let kb = u.maxRSS;',
    "  try { kb = Number(/^VmHWM:\\s+(\\d+) kB/m.exec(readFileSync('/proc/self/status', 'utf8'))[1]); } catch {}",
    '  writeFileSync(process.env.WIDE_STATS, JSON.stringify({ cpuS: (u.userCPUTime + u.systemCPUTime) / 1e6, peakRssMB: kb / 1024 }));',
    '});',
  ].join('\n'),
)}`;

type Row = Record<string, string>;

function generate(rows: number): Row[] {
  let seed = 42;
  const random = () => (seed = (seed * 1_103_515_245 + 12_345) % 2_147_483_648) / 2_147_483_648;
  const words =
    'order shipped pending review customer account invoice paid refund warehouse parcel priority standard express north south east west city street garden river market'.split(
      ' ',
    );
  const text = (n: number) => Array.from({ length: n }, () => words[Math.floor(random() * words.length)]).join(' ');
  const hex = (n: number) => Array.from({ length: n }, () => Math.floor(random() * 16).toString(16)).join('');
  const out: Row[] = [];
  for (let i = 0; i < rows; i++) {
    const key = Math.floor((i / rows) * KEYS); // key-sorted: each key's rows together, keys ascending
    out.push({
      pk: `CUSTOMER#${String(key).padStart(8, '0')}`,
      sk: `ORDER#${new Date(1.7e12 + i * 1000).toISOString()}#${hex(8)}`,
      orderId: `${hex(8)}-${hex(4)}-${hex(4)}-${hex(4)}-${hex(12)}`,
      email: `user${key}@example.com`,
      name: text(2),
      city: text(1),
      country: 'US',
      status: words[Math.floor(random() * 4)]!,
      amount: (random() * 10_000).toFixed(2),
      qty: String(1 + Math.floor(random() * 20)),
      score: String(Math.floor(random() * 1e6)),
      note: text(42),
    });
  }
  return out;
}

/** DynamoDB's item size: name bytes plus value bytes, a number about one byte per two digits plus one. */
function itemSize(row: Row): number {
  let size = 0;
  for (const [name, value] of Object.entries(row)) {
    size += Buffer.byteLength(name) + (NUMBERS.has(name) ? Math.ceil(value.replace(/[.-]/g, '').length / 2) + 1 : Buffer.byteLength(value));
  }
  return size;
}

/** A full export's folder (manifest-summary.json, manifest-files.json, data/*.json.gz), keys dealt to the files in turn. */
async function writeExport(dir: string, rows: Row[]): Promise<{ folder: string; jsonBytes: number; gzipBytes: number }> {
  const id = `01700000000000-${randomBytes(4).toString('hex')}`;
  const folder = join(dir, 'AWSDynamoDB', id);
  await mkdir(join(folder, 'data'), { recursive: true });
  const manifest: string[] = [];
  let jsonBytes = 0;
  let gzipBytes = 0;
  for (let f = 0; f < FILES; f++) {
    const lines = rows
      .filter((_, i) => Math.floor((i / rows.length) * KEYS) % FILES === f)
      .map((r) => `${JSON.stringify({ Item: Object.fromEntries(Object.entries(r).map(([n, v]) => [n, NUMBERS.has(n) ? { N: v } : { S: v }])) })}\n`);
    const body = Buffer.from(lines.join(''));
    const gz = gzipSync(body, { level: 6 });
    jsonBytes += body.length;
    gzipBytes += gz.length;
    const name = `${randomBytes(8).toString('hex')}${f}.json.gz`;
    await writeFile(join(folder, 'data', name), gz);
    const md5 = createHash('md5').update(gz);
    manifest.push(
      JSON.stringify({
        itemCount: lines.length,
        md5Checksum: md5.copy().digest('base64'),
        etag: md5.digest('hex'),
        dataFileS3Key: `bench/AWSDynamoDB/${id}/data/${name}`,
      }),
    );
  }
  await writeFile(join(folder, 'manifest-files.json'), `${manifest.join('\n')}\n`);
  await writeFile(
    join(folder, 'manifest-summary.json'),
    JSON.stringify({
      version: '2023-08-01',
      exportArn: `arn:aws:dynamodb:us-east-1:123456789012:table/source/export/${id}`,
      tableArn: 'arn:aws:dynamodb:us-east-1:123456789012:table/source',
      exportTime: '2026-11-27T00:00:00.000Z',
      manifestFilesS3Key: `bench/AWSDynamoDB/${id}/manifest-files.json`,
      itemCount: rows.length,
      outputFormat: 'DYNAMODB_JSON',
      exportType: 'FULL_EXPORT',
    }),
  );
  return { folder, jsonBytes, gzipBytes };
}

interface Load {
  code: number | null;
  wallS: number;
  cpuS: number;
  peakRssMB: number;
  written: number;
  order: string;
  orderTempBytes: number;
}

/** One CLI process loading `input` into the sink, measured from outside. */
async function load(dir: string, endpoint: string, input: string, extra: string[]): Promise<Load> {
  const statsPath = join(dir, `stats-${randomBytes(4).toString('hex')}.json`);
  const args = ['--import', STATS_AT_EXIT, join(repoRoot, 'bin/ddb-spread.js'), 'load', input, '--table', 'bench', '--endpoint-url', endpoint];
  args.push('--key-wcu', '1000000', '--wcu', '1000000', '--json', '--quiet', ...extra);
  const env = { ...process.env, AWS_ACCESS_KEY_ID: 'local', AWS_SECRET_ACCESS_KEY: 'local', AWS_REGION: 'us-east-1', WIDE_STATS: statsPath };
  const t0 = performance.now();
  const { code, stdout, stderr } = await new Promise<{ code: number | null; stdout: string; stderr: string }>((resolve, reject) => {
    const child = spawn(process.execPath, args, { env });
    let out = '';
    let err = '';
    child.stdout.on('data', (d: Buffer) => (out += d.toString()));
    child.stderr.on('data', (d: Buffer) => (err += d.toString()));
    child.on('error', reject);
    child.on('close', (c) => resolve({ code: c, stdout: out, stderr: err }));
  });
  const wallS = (performance.now() - t0) / 1000;
  if (code !== 0) process.stderr.write(stderr);
  const stats = JSON.parse(await readFile(statsPath, 'utf8')) as { cpuS: number; peakRssMB: number };
  const result = JSON.parse(stdout) as { written: number; order: string; orderTempBytes: number };
  return { code, wallS, ...stats, written: result.written, order: result.order, orderTempBytes: result.orderTempBytes };
}

const dir = await mkdtemp(join(tmpdir(), 'wide-items-'));
try {
  const rows = generate(ROWS);
  const sizes = rows.map(itemSize);
  const average = sizes.reduce((a, b) => a + b, 0) / ROWS;
  const columns = Object.keys(rows[0]!);
  const csv = `${columns.join(',')}\n${rows.map((r) => columns.map((c) => r[c]).join(',')).join('\n')}\n`;
  const csvPath = join(dir, 'wide.csv');
  await writeFile(csvPath, csv);
  const exported = await writeExport(dir, rows);
  const perItem = (bytes: number) => (bytes / ROWS).toFixed(0);
  console.log(
    `${ROWS.toLocaleString('en-US')} items, DynamoDB size ${average.toFixed(0)} B on average (largest ${sizes.reduce((a, b) => Math.max(a, b), 0)} B); ` +
      `CSV ${perItem(csv.length)} B a row; export JSON ${perItem(exported.jsonBytes)} B an item (${(exported.jsonBytes / ROWS / average).toFixed(2)}x the item), ` +
      `gzip ${perItem(exported.gzipBytes)} B (${(exported.jsonBytes / exported.gzipBytes).toFixed(2)}x smaller)`,
  );
  const sink = await startInstantSink();
  try {
    const runs: [string, string, string[]][] = [
      ['key-sorted CSV', csvPath, ['--types', 'amount:N,qty:N,score:N']],
      [`export, ${FILES} gzip data files`, exported.folder, []],
    ];
    for (const [label, input, extra] of runs) {
      const r = await load(dir, sink.endpoint, input, extra);
      console.log(
        `${label}: exit ${r.code}, ${r.wallS.toFixed(1)} s, CPU ${r.cpuS.toFixed(2)} s = ${((r.cpuS / ROWS) * 1e6).toFixed(0)} µs an item, ` +
          `${(ROWS / r.wallS).toFixed(0)} items/s, peak RSS ${r.peakRssMB.toFixed(0)} MB, written ${r.written}, order ${r.order}, temporary ${r.orderTempBytes} B`,
      );
    }
  } finally {
    await sink.close();
  }
} finally {
  await rm(dir, { recursive: true, force: true });
}
