import { formatBytes, formatMoney } from '../shared/format.js';

/** What the input is, for AWS's managed loaders: the formats they read, and what they cannot do. */
export type ManagedInputKind =
  /** DynamoDB JSON items, one a line, or a full DynamoDB export in DynamoDB JSON. */
  | 'dynamodb-json'
  /** Amazon Ion items, or a full DynamoDB export in Ion. */
  | 'ion'
  /** CSV: Import from S3 reads it (every non-key column a string); bulk put items does not. */
  | 'csv'
  /** Parquet, plain JSON, JSON documents, incremental exports (change records), or formats mixed. */
  | 'other';

export interface ManagedPathInput {
  kind: ManagedInputKind;
  /** The input is already in S3 (every part an s3:// object). */
  inS3: boolean;
  /** The load deletes items (--delete, --operation-column, or an incremental export's removals). */
  deletes: boolean;
  /** The table holds no item: true, false, or 'unknown' (offline without --item-count), which counts as possibly empty. */
  tableIsEmpty: boolean | 'unknown';
  /** The table is a global table (DescribeTable listed replicas). */
  globalTable: boolean;
  /** Bytes of the input as read (compressed parts count compressed); undefined when unknown. */
  inputBytes: number | undefined;
  /** Whether any part was compressed, so the uncompressed size (what Import from S3 bills) is larger. */
  compressed: boolean;
  /** What this load costs in write request units at the prices in force (on demand), for comparison. */
  onDemandUsd: number;
}

/** One of AWS's managed paths, judged for this load. */
export interface ManagedPath {
  name: 'import-from-s3' | 'bulk-put-items';
  /** Whether it would do this load's job. */
  serves: boolean;
  /** Why it serves or does not, in one sentence. */
  why: string;
  /** What it would not do that ddb-spread does. */
  wouldNot: string;
  /** Its price as found, or that none was found. */
  cost: string;
}

/**
 * Import from S3's price per GB of uncompressed source data, us-east-1 (AWS prices it per GB of the
 * uncompressed source read; the figure renders client-side on https://aws.amazon.com/dynamodb/pricing/ and
 * could not be checked there when this was written: treat it as indicative).
 */
export const IMPORT_FROM_S3_USD_PER_GB = 0.15;

const GB = 1024 ** 3;

/**
 * Where AWS's managed loaders would serve this load, and what they would not do. Import from S3 (Developer
 * Guide, S3DataImport.HowItWorks): a NEW table only; CSV, DynamoDB JSON or Ion, uncompressed, GZIP or ZSTD;
 * no write capacity used; priced per GB of uncompressed source. Bulk put items (StartBulkPutItems;
 * BulkPutItems.Format, .Considerations, .Tiers): an S3 prefix into an EXISTING table; DynamoDB JSON or Ion
 * only (GZIP, ZSTD or none); per-item conditions; not a global table; puts only; priced by performance tier,
 * with no figure on the pages found. Pure.
 */
export function adviseManagedPaths(input: ManagedPathInput): ManagedPath[] {
  return [importFromS3(input), bulkPutItems(input)];
}

function importFromS3(input: ManagedPathInput): ManagedPath {
  const formatOk = input.kind !== 'other';
  const serves = input.tableIsEmpty !== false && formatOk && !input.deletes;
  const why =
    input.tableIsEmpty === false
      ? 'it creates a new table and cannot load into this one, which holds items'
      : !formatOk
        ? 'it reads CSV, DynamoDB JSON or Ion, not this input as it is (ddb-spread could be made to write DynamoDB JSON of it first)'
        : input.deletes
          ? 'it only puts items, and this load deletes some'
          : `the table ${input.tableIsEmpty === 'unknown' ? 'may be empty (its item count is unknown)' : 'is empty'}: it loads the input into a NEW table it creates, using no write capacity, so this table would be replaced`;
  const size = input.inputBytes;
  const cost =
    size === undefined
      ? `priced per GB of uncompressed source data (about $${IMPORT_FROM_S3_USD_PER_GB} per GB in us-east-1; check the pricing page); the input's size is unknown`
      : `priced per GB of uncompressed source data: about ${formatMoney((size / GB) * IMPORT_FROM_S3_USD_PER_GB)} for ${formatBytes(size)}${input.compressed ? ' as read (compressed: the uncompressed size it bills is larger)' : ''} at about $${IMPORT_FROM_S3_USD_PER_GB} per GB in us-east-1 (check the pricing page), against ${formatMoney(input.onDemandUsd)} of on-demand writes`;
  return {
    name: 'import-from-s3',
    serves,
    why,
    wouldNot: "load an existing table, pace by key, delete, keep a CSV's types (every non-key column becomes a string), or read Parquet",
    cost,
  };
}

function bulkPutItems(input: ManagedPathInput): ManagedPath {
  const formatOk = input.kind === 'dynamodb-json' || input.kind === 'ion';
  const serves = formatOk && !input.deletes && !input.globalTable;
  const why = input.globalTable
    ? 'it does not write to a global table, and this one has replicas'
    : !formatOk
      ? 'it reads only DynamoDB JSON or Ion items from S3, not CSV, Parquet or plain JSON'
      : input.deletes
        ? 'it only puts items, and this load deletes some'
        : `it loads DynamoDB JSON or Ion from an S3 prefix into this existing table${input.inS3 ? '' : ' (the input would have to be copied to S3 first)'}, asynchronously, with per-item conditions`;
  return {
    name: 'bulk-put-items',
    serves,
    why,
    wouldNot:
      'pace per partition key (its guide warns that input sorted by key makes a rolling hot partition, and says to shuffle it first), delete, read CSV or Parquet, or write a global table',
    cost: 'priced by performance tier (STANDARD or ACCELERATED); no public per-unit price was found, so none is given: see https://aws.amazon.com/dynamodb/pricing/',
  };
}
