import { LoaderError } from '../shared/errors.js';
import type { InputPart } from './inputPart.js';
import type { ListedPart } from './inputSet.js';

/**
 * DynamoDB's export to S3 (AWS Developer Guide, "DynamoDB table export output format"): an export folder
 * `<prefix>/AWSDynamoDB/<ExportId>/` holds manifest-summary.json (itemCount, outputFormat, exportType,
 * manifestFilesS3Key), manifest-files.json (one JSON line per data file: itemCount, md5Checksum, etag,
 * dataFileS3Key) and data/*.json.gz (or .ion.gz). A full export's lines are {"Item":{...}}; an
 * incremental export's are change records {"Metadata":{"WriteTimestampMicros":...},"Keys":{...},
 * "NewImage":{...},"OldImage":{...}}.
 */
export type ExportKind = 'export-full' | 'export-incremental' | 'export-full-ion' | 'export-incremental-ion';

/** A folder, local or in S3, as the export reader needs it. */
export interface ExportFolder {
  name: string;
  /** A file's text by its name under the folder; undefined when there is none. */
  readText(name: string): Promise<string | undefined>;
  /** A data file as a part, by its name under the folder (e.g. "data/abc.json.gz"). */
  part(name: string): Promise<InputPart>;
}

export interface FoundExport {
  kind: ExportKind;
  /** Items (or change records) the manifest counts, in total. */
  items: number;
  parts: ListedPart[];
}

/** The export in `folder`, when it holds manifest-summary.json; undefined otherwise. */
export async function exportOfFolder(folder: ExportFolder): Promise<FoundExport | undefined> {
  const summaryText = await folder.readText('manifest-summary.json');
  if (summaryText === undefined) return undefined;
  const bad = (why: string) =>
    new LoaderError('INPUT_UNREADABLE', `${folder.name} is not a readable DynamoDB export: ${why}`, { file: `${folder.name}/manifest-summary.json` });
  const summary = parseObject(summaryText, () => bad('manifest-summary.json is not a JSON object'));
  const format = summary.outputFormat ?? 'DYNAMODB_JSON';
  if (format !== 'DYNAMODB_JSON' && format !== 'ION') throw bad(`outputFormat ${JSON.stringify(format)} is neither DYNAMODB_JSON nor ION`);
  const type = summary.exportType ?? 'FULL_EXPORT';
  if (type !== 'FULL_EXPORT' && type !== 'INCREMENTAL_EXPORT') throw bad(`exportType ${JSON.stringify(type)} is neither FULL_EXPORT nor INCREMENTAL_EXPORT`);
  const kind: ExportKind = `${type === 'FULL_EXPORT' ? 'export-full' : 'export-incremental'}${format === 'ION' ? '-ion' : ''}` as ExportKind;
  const items = summary.itemCount;
  if (!Number.isSafeInteger(items) || (items as number) < 0) throw bad('manifest-summary.json has no itemCount');
  const filesText = await folder.readText('manifest-files.json');
  if (filesText === undefined) throw bad('manifest-files.json is missing');
  const parts: ListedPart[] = [];
  let counted = 0;
  let number = 0;
  for (const line of filesText.split('\n')) {
    number++;
    if (line.trim() === '') continue;
    const entry = parseObject(line, () => bad(`line ${number} of manifest-files.json is not a JSON object`));
    const key = entry.dataFileS3Key;
    const count = entry.itemCount;
    if (typeof key !== 'string' || !Number.isSafeInteger(count) || (count as number) < 0)
      throw bad(`line ${number} of manifest-files.json lacks dataFileS3Key or itemCount`);
    // The data file by its name under data/: the export may have been copied to another bucket or folder.
    const name = `data/${key.slice(key.lastIndexOf('/') + 1)}`;
    const md5 = typeof entry.md5Checksum === 'string' ? Buffer.from(entry.md5Checksum, 'base64').toString('hex') : undefined;
    parts.push({ part: await folder.part(name), format: kind, expected: { items: count as number, md5 } });
    counted += count as number;
  }
  if (counted !== items) throw bad(`manifest-files.json counts ${counted} items, manifest-summary.json ${String(items)}`);
  return { kind, items: items as number, parts };
}

function parseObject(text: string, error: () => LoaderError): Record<string, unknown> {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    throw error();
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) throw error();
  return value as Record<string, unknown>;
}
