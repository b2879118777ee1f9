import { LoaderError } from '../shared/errors.js';
import { chainOrder, manifestTime, type ExportManifest } from './exportChain.js';
import type { ExportKind } from './inputFormat.js';
import type { InputPart, ListedPart } from './inputPart.js';

/**
 * DynamoDB's export to S3 (AWS Developer Guide, "DynamoDB table export output format"): an export folder
 * `<prefix>/AWSDynamoDB/<ExportId>/` holds manifest-summary.json (itemCount, outputFormat, exportType,
 * manifestFilesS3Key), manifest-files.json (one JSON line per data file: itemCount, md5Checksum, etag,
 * dataFileS3Key) and data/*.json.gz (or .ion.gz). A full export's lines are {"Item":{...}}; an
 * incremental export's are change records {"Metadata":{"WriteTimestampMicros":...},"Keys":{...},
 * "NewImage":{...},"OldImage":{...}}.
 */
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
  /** What its manifest-summary.json says of its place in a chain (exportChain.ts). */
  manifest: ExportManifest;
}

/** An export of the input set: its folder, its manifest's totals, and the folder of exports it was found in. */
export interface ListedExport {
  name: string;
  items: number;
  parts: number;
  manifest: ExportManifest;
  /** The input (a folder or prefix that holds several exports) it was found below; undefined: given itself. */
  within?: string | undefined;
}

/** Records the exports found for one input, in the order given, and returns their parts in that order. */
export function partsOfExports(found: readonly FoundExport[], exports: ListedExport[], within?: string): ListedPart[] {
  const parts: ListedPart[] = [];
  for (const e of found) {
    exports.push({ name: e.manifest.name, items: e.items, parts: e.parts.length, manifest: e.manifest, within });
    parts.push(...e.parts);
  }
  return parts;
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
  const manifest: ExportManifest = {
    name: folder.name,
    type,
    tableArn: typeof summary.tableArn === 'string' && summary.tableArn !== '' ? summary.tableArn : undefined,
    exportTime: manifestTime(summary.exportTime),
    fromTime: manifestTime(summary.exportFromTime),
    toTime: manifestTime(summary.exportToTime),
  };
  return { kind, items: items as number, parts, manifest };
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

const SUMMARY = 'manifest-summary.json';

/**
 * The exports below a folder or prefix given as input that is not itself an export folder: DynamoDB's
 * own layout `<prefix>/AWSDynamoDB/<ExportId>/`, given as `.../AWSDynamoDB/` or as `<prefix>/`, or any
 * folder with export folders below it. `files` are every file's path under it, relative, with "/"
 * between names. Each folder that holds manifest-summary.json is an export, read by exportOfFolder; the
 * exports come back in chain order (full first, then incrementals by window), which exportChain.ts then
 * checks. Undefined when no manifest is below: plain data. Refused: an export inside another, and data
 * files beside the exports (the folder would be half export, half plain data: which goes first?).
 */
export async function exportsBelow(
  root: string,
  files: readonly string[],
  folderAt: (relative: string) => ExportFolder,
  isData: (relative: string) => boolean,
): Promise<FoundExport[] | undefined> {
  const dirs = files.filter((f) => f === SUMMARY || f.endsWith(`/${SUMMARY}`)).map((f) => f.slice(0, -SUMMARY.length).replace(/\/$/, ''));
  if (dirs.length === 0) return undefined;
  const inside = (file: string, dir: string) => dir === '' || file.startsWith(`${dir}/`);
  const nested = dirs.find((d) => dirs.some((other) => other !== d && inside(d, other)));
  if (nested !== undefined) {
    const outer = dirs.find((other) => other !== nested && inside(nested, other))!;
    throw new LoaderError(
      'INPUT_UNREADABLE',
      `${root}: the export folder ${join(root, nested)} is inside the export folder ${join(root, outer)}; pass the export wanted`,
      {
        file: join(root, nested),
      },
    );
  }
  const others = files.filter((f) => !dirs.some((d) => inside(f, d)) && isData(f));
  // Data under AWSDynamoDB/<ExportId>/ without that folder's manifest: an export not finished, or copied without it.
  const unfinished = /^(?:.*\/)?AWSDynamoDB\/[^/]+(?=\/)/.exec(others.find((f) => /(?:^|\/)AWSDynamoDB\/[^/]+\//.test(f)) ?? '')?.[0];
  if (unfinished !== undefined)
    throw new LoaderError(
      'INPUT_UNREADABLE',
      `${join(root, unfinished)} holds export data files but no manifest-summary.json: the export is not finished, or was copied without its manifests; wait for it to finish, or pass the export folders wanted`,
      { file: join(root, unfinished) },
    );
  if (others.length > 0)
    throw new LoaderError(
      'INVALID_OPTION',
      `${root} holds DynamoDB exports (${dirs.map((d) => join(root, d)).join(', ')}) and other files (${others
        .slice(0, 3)
        .map((f) => join(root, f))
        .join(', ')}${others.length > 3 ? `, and ${others.length - 3} more` : ''}); ` +
        'a folder is read as its exports or as plain data, not both: pass the exports and the other files as separate inputs',
      { file: join(root, others[0]!) },
    );
  const found: FoundExport[] = [];
  for (const dir of dirs) {
    const exported = await exportOfFolder(folderAt(dir));
    if (exported === undefined)
      throw new LoaderError('INPUT_NOT_FOUND', `${join(root, dir)}/${SUMMARY} disappeared while the input was listed`, { file: join(root, dir) });
    found.push(exported);
  }
  const ordered = chainOrder(found.map((f) => f.manifest));
  return ordered.map((m) => found.find((f) => f.manifest === m)!);
}

const join = (root: string, relative: string) => (relative === '' ? root : `${root.replace(/\/+$/, '')}/${relative}`);
