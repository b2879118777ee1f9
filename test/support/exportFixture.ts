/**
 * DynamoDB export folders built in the documented layout (AWS Developer Guide, "DynamoDB table export
 * output format"), for the tests of issue 16: `AWSDynamoDB/<ExportId>/` with manifest-summary.json,
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
