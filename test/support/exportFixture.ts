/**
 * DynamoDB export folders built in the documented layout (AWS Developer Guide, "DynamoDB table export
 * output format"), for the tests of export inputs: `AWSDynamoDB/<ExportId>/` with manifest-summary.json,
 * manifest-files.json (one JSON line per data file: itemCount, md5Checksum as base64 MD5, etag,
 * dataFileS3Key), an empty `_started` and data/<name>.json.gz files, one per "partition" (an empty
 * partition gives an empty data file).
 */
import { createHash, randomBytes } from 'node:crypto';
import { mkdir, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { gzipSync } from 'node:zlib';

/** A DYNAMODB_JSON line as an object, or an ION export's line as its text. */
export type ExportLine = Record<string, unknown> | string;

export interface ExportFixture {
  /** The export folder, relative to where it is written: `<prefix>/AWSDynamoDB/<ExportId>`. */
  folder: string;
  /** Every object, by its path relative to where it is written. */
  files: Record<string, Buffer>;
}

/**
 * An export of `partitions` (each a list of lines: {"Item":...} for a full export, change records for an
 * incremental one). `tamper` alters the manifest for the failure tests.
 */
export function buildExport(
  prefix: string,
  kind: 'FULL_EXPORT' | 'INCREMENTAL_EXPORT',
  partitions: ExportLine[][],
  tamper: {
    countOf?: (file: number, count: number) => number;
    md5Of?: (file: number, md5: string) => string;
    ion?: boolean;
    /** The source table's ARN (default arn:...:table/Source). */
    tableArn?: string;
    /** A full export's exportTime (default 2026-11-01T00:00:00.000Z). */
    exportTime?: string;
    /** An incremental export's window: exportFromTime (inclusive) and exportToTime (exclusive), default 00:00 to 01:00. */
    window?: { from: string; to: string };
    /** Fields left out of manifest-summary.json (an older or hand-made manifest). */
    omit?: string[];
  } = {},
): ExportFixture {
  // ExportIds start with 14 digits then 8 hex; the digits are random here so that a folder's name order
  // says nothing about the chain's order.
  const id = `${String(10_000_000_000_000 + Math.floor(Math.random() * 89_999_999_999_999))}-${randomBytes(4).toString('hex')}`;
  const tableArn = tamper.tableArn ?? 'arn:aws:dynamodb:us-east-1:123456789012:table/Source';
  const exportTime = tamper.exportTime ?? '2026-11-01T00:00:00.000Z';
  const window = tamper.window ?? { from: '2026-11-01T00:00:00.000Z', to: '2026-11-01T01:00:00.000Z' };
  const folder = `${prefix}/AWSDynamoDB/${id}`;
  const files: Record<string, Buffer> = {};
  const manifestLines: string[] = [];
  let total = 0;
  for (const [i, lines] of partitions.entries()) {
    const text = lines.map((l) => (typeof l === 'string' ? l : JSON.stringify(l))).join('\n') + (lines.length > 0 ? '\n' : '');
    const body = gzipSync(Buffer.from(text));
    const key = `${folder}/data/${randomBytes(8).toString('hex')}${i}.${tamper.ion ? 'ion' : 'json'}.gz`;
    files[key] = body;
    const md5 = createHash('md5').update(body).digest('base64');
    const itemCount = tamper.countOf ? tamper.countOf(i, lines.length) : lines.length;
    manifestLines.push(
      JSON.stringify({
        itemCount,
        md5Checksum: tamper.md5Of ? tamper.md5Of(i, md5) : md5,
        etag: createHash('md5').update(body).digest('hex'),
        dataFileS3Key: key,
      }),
    );
    total += itemCount;
  }
  const filesText = `${manifestLines.join('\n')}\n`;
  files[`${folder}/manifest-files.json`] = Buffer.from(filesText);
  files[`${folder}/manifest-files.checksum`] = Buffer.from(createHash('md5').update(filesText).digest('hex'));
  // As AWS writes it: a full export has exportTime (the instant of the snapshot); an incremental export
  // has exportFromTime and exportToTime (its window) and outputView instead.
  const summary: Record<string, unknown> = {
    version: '2023-08-01',
    exportArn: `${tableArn}/export/${id}`,
    startTime: '2026-11-02T00:00:00.000Z',
    endTime: '2026-11-02T00:05:00.000Z',
    tableArn,
    tableId: '12345a12-abcd-123a-ab12-1234abc12345',
    ...(kind === 'FULL_EXPORT' ? { exportTime } : { exportFromTime: window.from, exportToTime: window.to }),
    s3Bucket: 'source-bucket',
    s3Prefix: prefix,
    s3SseAlgorithm: 'AES256',
    s3SseKmsKeyId: null,
    manifestFilesS3Key: `${folder}/manifest-files.json`,
    billedSizeBytes: 0,
    itemCount: total,
    outputFormat: tamper.ion ? 'ION' : 'DYNAMODB_JSON',
    exportType: kind,
    ...(kind === 'INCREMENTAL_EXPORT' ? { outputView: 'NEW_AND_OLD_IMAGES' } : {}),
  };
  for (const field of tamper.omit ?? []) Reflect.deleteProperty(summary, field);
  const summaryText = JSON.stringify(summary);
  files[`${folder}/manifest-summary.json`] = Buffer.from(summaryText);
  files[`${folder}/manifest-summary.checksum`] = Buffer.from(createHash('md5').update(summaryText).digest('hex'));
  files[`${folder}/_started`] = Buffer.alloc(0);
  return { folder, files };
}

export async function writeExport(root: string, fixture: ExportFixture): Promise<string> {
  for (const [path, body] of Object.entries(fixture.files)) {
    await mkdir(dirname(join(root, path)), { recursive: true });
    await writeFile(join(root, path), body);
  }
  return join(root, fixture.folder);
}

/** A DynamoDB JSON item of the simulated source table. */
type SourceItem = Record<string, Record<string, string>>;

export interface SimulatedChain {
  /** The full export's partitions ({"Item":...} lines), the table at `times[0]`. */
  full: ExportLine[][];
  /** Each incremental export's partitions (change records), window i from times[i] to times[i + 1]. */
  incrementals: ExportLine[][][];
  /** ISO times: the full export's exportTime, then each window's end. */
  times: string[];
  /** The source table after the last window, by "pk/sk": what a load of the chain must leave. */
  final: Map<string, SourceItem>;
}

/**
 * A source table that changes over time, exported as DynamoDB does: a full export at T0, then one
 * incremental export per window, compacted (one record per item changed in the window: the item as at the
 * window's end under NewImage, its image at the window's start under OldImage, a delete without
 * NewImage). Updates, deletes and re-inserts of the same keys in several windows make any wrong order or
 * missing window show in the table. Deterministic for a seed.
 */
export function simulateChain(seed: number, options: { items: number; windows: number; changesPerWindow: number; partitions?: number }): SimulatedChain {
  let state = seed >>> 0 || 1;
  const random = (n: number) => {
    state = (Math.imul(state, 1_103_515_245) + 12_345) >>> 0;
    return (state >>> 8) % n;
  };
  const partitions = options.partitions ?? 3;
  const keyOf = (i: number) => ({ pk: { S: `p${i % 97}` }, sk: { N: String(i) } });
  const table = new Map<number, SourceItem>();
  for (let i = 0; i < options.items; i++) table.set(i, { ...keyOf(i), v: { S: `v0-${i}` }, n: { N: String(i) } });
  const split = (lines: ExportLine[]): ExportLine[][] => {
    const parts: ExportLine[][] = Array.from({ length: partitions }, () => []);
    for (const [i, line] of lines.entries()) parts[i % partitions]!.push(line);
    return parts;
  };
  const full = split([...table.values()].map((item) => ({ Item: item })));
  const times = [new Date(Date.UTC(2026, 10, 1, 0)).toISOString()];
  const incrementals: ExportLine[][][] = [];
  for (let w = 1; w <= options.windows; w++) {
    const before = new Map(table);
    const touched = new Set<number>();
    for (let c = 0; c < options.changesPerWindow; c++) {
      // Keys up to 30% past the initial ones: inserts, and deletes then re-inserts across windows.
      const i = random(Math.ceil(options.items * 1.3));
      touched.add(i);
      if (random(4) === 0) table.delete(i);
      else table.set(i, { ...keyOf(i), v: { S: `v${w}-${i}-${c}` }, n: { N: String(w * 1_000_000 + c) } });
    }
    const micros = (c: number) => ({ N: String(Date.UTC(2026, 10, 1, w - 1) * 1000 + c) });
    const records: ExportLine[] = [];
    let c = 0;
    for (const i of [...touched].sort((a, b) => a - b)) {
      const now = table.get(i);
      const then = before.get(i);
      if (now === undefined && then === undefined) continue;
      records.push({
        Metadata: { WriteTimestampMicros: micros(c++) },
        Keys: keyOf(i),
        ...(now ? { NewImage: now } : {}),
        ...(then ? { OldImage: then } : {}),
      });
    }
    incrementals.push(split(records));
    times.push(new Date(Date.UTC(2026, 10, 1, w)).toISOString());
  }
  const final = new Map<string, SourceItem>();
  for (const item of table.values()) final.set(`${item.pk!.S}/${item.sk!.N}`, item);
  return { full, incrementals, times, final };
}

/** The exports of a simulated chain, as DynamoDB writes them under `<prefix>/AWSDynamoDB/`: full first, then each incremental. */
export function chainExports(chain: SimulatedChain, prefix: string, tableArn?: string): ExportFixture[] {
  const arn = tableArn === undefined ? {} : { tableArn };
  return [
    buildExport(prefix, 'FULL_EXPORT', chain.full, { exportTime: chain.times[0]!, ...arn }),
    ...chain.incrementals.map((parts, i) =>
      buildExport(prefix, 'INCREMENTAL_EXPORT', parts, { window: { from: chain.times[i]!, to: chain.times[i + 1]! }, ...arn }),
    ),
  ];
}
