/**
 * The input formats, and what a part's name says about its format and its CSV delimiter. The bytes
 * decide compression and the formats that sign themselves (magic.ts, detectFormat.ts). Pure.
 */

export const INPUT_FORMATS = ['csv', 'jsonl', 'ddb-json', 'parquet', 'ion'] as const;
export type InputFormat = (typeof INPUT_FORMATS)[number];

/** A DynamoDB export's data files: full or incremental, DynamoDB JSON or Ion (dynamodbExport.ts). */
export type ExportKind = 'export-full' | 'export-incremental' | 'export-full-ion' | 'export-incremental-ion';

/**
 * A JSON document holding items, read element by element (readJsonDocument.ts, jsonShape.ts): an array of
 * plain JSON items or of DynamoDB JSON items, or `aws dynamodb scan` output. Found from a JSON part's
 * first bytes, never given by name.
 */
export type DocumentKind = 'json-array' | 'ddb-json-array' | 'scan-output';

/** How a part's records are read: a line format, a DynamoDB export's data file (dynamodbExport.ts), or a JSON document. */
export type PartFormat = InputFormat | ExportKind | DocumentKind;

/**
 * A name without its compression suffix (.gz, .gzip, .zst, .zstd, .bz2, .bzip2), lower case: what tells the
 * format and the delimiter. The compression itself is read from the bytes (magic.ts).
 */
export function nameBeforeCompression(input: string): string {
  return input.toLowerCase().replace(/\.(gz|gzip|zst|zstd|bz2|bzip2)$/, '');
}

/** The format by the name's extension (after a compression suffix); undefined when the name does not tell. */
export function formatFromName(input: string): InputFormat | undefined {
  const name = nameBeforeCompression(input);
  if (name.endsWith('.csv') || name.endsWith('.tsv')) return 'csv';
  if (name.endsWith('.jsonl') || name.endsWith('.ndjson') || name.endsWith('.json')) return 'jsonl';
  if (name.endsWith('.parquet') || name.endsWith('.pq')) return 'parquet';
  if (name.endsWith('.ion')) return 'ion';
  return undefined;
}

/**
 * A CSV part's delimiter: --delimiter when given (for every part), else by the part's own name: a tab for
 * .tsv (whatever its compression suffix), else a comma. Each part of a set decides for itself.
 */
export function delimiterOf(name: string, explicit: string | undefined): string {
  if (explicit !== undefined) return explicit;
  return nameBeforeCompression(name).endsWith('.tsv') ? '\t' : ',';
}
