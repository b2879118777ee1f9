/**
 * exportsBelow: the export folders below a folder given as input, found by their
 * manifest-summary.json at any depth, returned in chain order whatever their names; an export inside
 * another, or exports beside plain data files, refused. Fake folders (the listing is the caller's).
 */
import { describe, expect, it } from 'vitest';
import { exportsBelow, type ExportFolder } from '../../../src/reading/dynamodbExport.js';
import { isDataPath } from '../../../src/reading/listing.js';
import type { InputPart } from '../../../src/reading/inputPart.js';

const TABLE = 'arn:aws:dynamodb:us-east-1:123456789012:table/T';
const summaries: Record<string, Record<string, unknown>> = {
  'p/AWSDynamoDB/9-zz': { exportType: 'FULL_EXPORT', exportTime: '2026-11-01T00:00:00.000Z' },
  'p/AWSDynamoDB/1-aa': { exportType: 'INCREMENTAL_EXPORT', exportFromTime: '2026-11-01T01:00:00.000Z', exportToTime: '2026-11-01T02:00:00.000Z' },
  'p/AWSDynamoDB/5-mm': { exportType: 'INCREMENTAL_EXPORT', exportFromTime: '2026-11-01T00:00:00.000Z', exportToTime: '2026-11-01T01:00:00.000Z' },
};
const filesOf = (dir: string) => [
  `${dir}/manifest-summary.json`,
  `${dir}/manifest-summary.checksum`,
  `${dir}/manifest-files.json`,
  `${dir}/_started`,
  `${dir}/data/a.json.gz`,
];

function folderAt(dir: string): ExportFolder {
  return {
    name: `root/${dir}`,
    readText: (name) =>
      Promise.resolve(
        name === 'manifest-summary.json'
          ? JSON.stringify({ tableArn: TABLE, itemCount: 1, outputFormat: 'DYNAMODB_JSON', ...summaries[dir] })
          : name === 'manifest-files.json'
            ? `${JSON.stringify({ itemCount: 1, dataFileS3Key: `${dir}/data/a.json.gz` })}\n`
            : undefined,
      ),
    part: (name) => Promise.resolve({ name: `root/${dir}/${name}` } as InputPart),
  };
}

describe('exportsBelow', () => {
  it('finds the export folders at any depth and orders them by their manifests, not their names', async () => {
    const files = Object.keys(summaries).flatMap(filesOf);
    const found = await exportsBelow('root', files, folderAt, isDataPath);
    expect(found!.map((e) => e.manifest.name)).toEqual(['root/p/AWSDynamoDB/9-zz', 'root/p/AWSDynamoDB/5-mm', 'root/p/AWSDynamoDB/1-aa']);
    expect(found!.map((e) => e.kind)).toEqual(['export-full', 'export-incremental', 'export-incremental']);
    // Hidden files and markers beside them are not data: still the exports.
    expect(await exportsBelow('root', [...files, '.DS_Store', 'p/_SUCCESS'], folderAt, isDataPath)).toHaveLength(3);
  });

  it('plain data: undefined; exports beside data files, or inside another export, refused', async () => {
    expect(await exportsBelow('root', ['a.csv', 'b/c.jsonl'], folderAt, isDataPath)).toBeUndefined();
    const files = Object.keys(summaries).flatMap(filesOf);
    await expect(exportsBelow('root', [...files, 'notes.csv'], folderAt, isDataPath)).rejects.toThrow(
      /root holds DynamoDB exports \(root\/p\/AWSDynamoDB\/9-zz, .*\) and other files \(root\/notes\.csv\)/,
    );
    // An export still being written (data files, no manifest yet) beside finished ones: refused, not read as plain data.
    await expect(exportsBelow('root', [...files, 'p/AWSDynamoDB/7-xx/data/b.json.gz'], folderAt, isDataPath)).rejects.toThrow(
      /root\/p\/AWSDynamoDB\/7-xx holds export data files but no manifest-summary.json: the export is not finished/,
    );
    await expect(exportsBelow('root', [...files, 'p/AWSDynamoDB/9-zz/old/manifest-summary.json'], folderAt, isDataPath)).rejects.toThrow(
      /the export folder root\/p\/AWSDynamoDB\/9-zz\/old is inside the export folder root\/p\/AWSDynamoDB\/9-zz/,
    );
  });
});
