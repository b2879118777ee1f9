/**
 * Every flag of every command, declared once (npm-check-updates' cli-options): its spelling, what it
 * means, its default as help and the reference print it, its parser, the commands that take it, its
 * group in --help, and the load() option it becomes. The commands' commander options (commandOptions.ts),
 * the config file's keys (config.ts reads them off those options) and the Markdown reference
 * (optionReference.ts, `npm run docs:options`) are all made from this array; test/unit/cli/optionTable.test.ts
 * fails when one of them drifts from it.
 *
 * Parsers only turn text into values for commander (and say what the text should look like); the ranges
 * and cross-option rules of the library live in normalizeOptions (src/load/options.ts), the one validator.
 */
import { INPUT_FORMATS } from '../reading/inputFormat.js';
import { DEFAULT_CONCURRENCY, DEFAULT_MAX_ATTEMPTS, DEFAULT_REQUEST_TIMEOUT_MS, INTEGER_RANGES, type LoadOptions } from '../load/options.js';
import { DEFAULT_WINDOW_ROWS, ORDER_MODES } from '../ordering/order.js';
import { DEFAULT_KEY_WCU } from '../pacing/rateControl.js';
import { EMPTY_POLICIES, TIMESTAMP_MODES } from '../typing/typeNames.js';
import { DEFAULT_PRICES } from '../estimating/costEstimate.js';
import { DEFAULT_READ_PRICES } from '../pacing/unitPrices.js';
import { BROKEN_CHAIN_RISK } from '../reading/exportChain.js';
import { formatCount } from '../shared/format.js';
import {
  parseColumnsOption,
  parseDelimiterOption,
  parseDurationOption,
  parseGsiOption,
  parseIntegerOption,
  parseKeyOption,
  parseMemoryOption,
  parsePriceOption,
  parseRateOption,
  parseSegmentOption,
  parseShardBaseOption,
  parseShardOption,
  parseTypesOption,
  parseValueOption,
  parseWcuOption,
  parseRcuOption,
  parseKeyRcuOption,
  parseSampleOption,
  parseScanOption,
} from './flagParsers.js';

export const COMMANDS = ['load', 'estimate', 'query', 'get', 'verify'] as const;
export type CommandName = (typeof COMMANDS)[number];

/** The groups of --help and of the reference, in the order they are shown. */
export const OPTION_GROUPS = {
  input: 'Input',
  aws: 'Table and AWS',
  rate: 'Rate',
  order: 'Order',
  sharding: 'Sharding',
  job: 'Job',
  output: 'Output',
  estimate: 'Estimate only (estimate, and load --dry-run)',
  read: 'What to read',
  verify: "Verify (estimate: the verify's price)",
} as const;
export type OptionGroup = keyof typeof OPTION_GROUPS;

/** What one command says differently about a flag it shares (query and get read a load's sharding). */
export interface OptionVariant {
  description?: string;
  /** null: no default worth printing on this command. */
  defaultText?: string | null;
}

export interface OptionSpec {
  /** commander's spelling: short form, long form and value name, e.g. '-c, --concurrency <n>'. */
  flags: string;
  /** The camelCase key commander (and a config file) gives the value; checked against `flags` by a test. */
  key: string;
  /**
   * The load() option (a LoadOptions field) the flag becomes, when there is one. Where the names differ
   * (--rejects: rejectsPath, --memory: memoryBytes, --endpoint-url: endpoint, --shard-base:
   * shardSuffixBase, --request-timeout: requestTimeoutMs), this is the one place that says so; the
   * library's names are public and stay.
   */
  option?: keyof LoadOptions;
  group: OptionGroup;
  commands: readonly CommandName[];
  /** Help text, lower case, without the default. */
  description: string;
  /** The default as help (once, as "(default: …)") and the reference print it. */
  defaultText?: string;
  /** The value commander starts with, when the CLI (not load()) applies the default. */
  default?: unknown;
  /** commander's argParser: text to value; a second parameter makes the flag repeatable. */
  parse?: (value: string, previous: never) => unknown;
  choices?: readonly string[];
  /** The commands where commander requires the flag. */
  required?: readonly CommandName[];
  variants?: Partial<Record<CommandName, OptionVariant>>;
  /** The reference's "Type" column. */
  type: string;
  /** The reference's "Meaning" column, when it says more than the help text (Markdown). */
  doc?: string;
}

/** verify takes every option of load, so a load's command line or --config checks its own result unchanged. */
const LOAD: readonly CommandName[] = ['load', 'estimate', 'verify'];
const ALL: readonly CommandName[] = COMMANDS;
const READ: readonly CommandName[] = ['query', 'get'];
/** The same variant on query and get. */
const onRead = (variant: OptionVariant): Partial<Record<CommandName, OptionVariant>> => ({ query: variant, get: variant });
const loadsOwn = (flag: string, more = '') => onRead({ description: `without --manifest: the load's ${flag}${more}` });

/** An integer flag: commander's parser and the reference's type, from one range. */
function integer([min, max]: readonly [number, number]): Pick<OptionSpec, 'parse' | 'type'> {
  return { parse: parseIntegerOption(min, max), type: max === Number.MAX_SAFE_INTEGER ? `≥ ${formatCount(min)}` : `${formatCount(min)}–${formatCount(max)}` };
}

const priceDefault = (price: number) => `${price}, ${DEFAULT_PRICES.region}, ${DEFAULT_PRICES.date}`;

/** Every option, in --help order within each group. `--config` is here too; config.ts attaches it. */
export const OPTION_TABLE: readonly OptionSpec[] = [
  // Input
  {
    flags: '--input-format <format>',
    key: 'inputFormat',
    option: 'inputFormat',
    group: 'input',
    commands: LOAD,
    description: 'input format',
    defaultText: 'from the file extension, else from the first bytes',
    choices: INPUT_FORMATS,
    type: INPUT_FORMATS.map((f) => `\`${f}\``).join(' \\| '),
    doc: '`.csv`/`.tsv` → csv, `.jsonl`/`.ndjson`/`.json` → jsonl, `.parquet`/`.pq` → parquet, `.ion` → ion (also with `.gz`, `.gzip`, `.zst`, `.zstd`, `.bz2`, `.bzip2`); otherwise the first bytes decide (`PAR1` Parquet, `$ion_1_0` Ion, `{"Item":` DynamoDB JSON, `{` JSON Lines); a JSON array or `aws dynamodb scan` output is read as a document, whatever the name ([Types](#types)); required for stdin',
  },
  {
    flags: '--delimiter <char>',
    key: 'delimiter',
    option: 'delimiter',
    group: 'input',
    commands: LOAD,
    description: 'CSV field delimiter for every file; "tab" for tabs',
    defaultText: 'each file by its name: tab for .tsv, .tsv.gz, .tsv.zst…, else ","',
    parse: parseDelimiterOption,
    type: 'string',
  },
  {
    flags: '--columns <names>',
    key: 'columns',
    option: 'columns',
    group: 'input',
    commands: LOAD,
    description: 'attribute names for a CSV file without a header row, comma-separated',
    defaultText: 'the header row',
    parse: parseColumnsOption,
    type: 'list',
  },
  {
    flags: '--types <list>',
    key: 'types',
    option: 'types',
    group: 'input',
    commands: LOAD,
    description: 'attribute types, e.g. price:N,active:BOOL,tags:SS,meta:JSON,blob:B (repeatable)',
    parse: parseTypesOption,
    type: '`name:TYPE,...`',
    doc: 'Attribute types (repeatable), see [Types](#types)',
  },
  {
    flags: '--schema <file>',
    key: 'schema',
    group: 'input',
    commands: LOAD,
    description: 'JSON file of attribute types, e.g. {"price":"N"}; --types wins over it',
    type: 'JSON file',
  },
  {
    flags: '--infer',
    key: 'infer',
    option: 'infer',
    group: 'input',
    commands: LOAD,
    description: 'infer N, BOOL, M and L from CSV cells, never losing digits ("007" stays a string)',
    type: 'flag',
  },
  {
    flags: '--empty <policy>',
    key: 'empty',
    option: 'empty',
    group: 'input',
    commands: LOAD,
    description: 'what an empty CSV cell or a Parquet null becomes: omit the attribute, NULL, or ""',
    defaultText: 'omit',
    default: 'omit',
    choices: EMPTY_POLICIES,
    type: EMPTY_POLICIES.map((p) => `\`${p}\``).join(' \\| '),
  },
  {
    flags: '--timestamps <mode>',
    key: 'timestamps',
    option: 'timestamps',
    group: 'input',
    commands: LOAD,
    description: 'Parquet and Ion timestamps and dates: ISO-8601 text, or exact epoch seconds or milliseconds (N)',
    defaultText: 'iso',
    choices: TIMESTAMP_MODES,
    type: TIMESTAMP_MODES.map((m) => `\`${m}\``).join(' \\| '),
  },
  {
    flags: '--delete',
    key: 'delete',
    option: 'delete',
    group: 'input',
    commands: LOAD,
    description: 'every row is a delete of its key (a delete list): DeleteRequest instead of PutRequest; other attributes are ignored',
    type: 'flag',
  },
  {
    flags: '--operation-column <name>',
    key: 'operationColumn',
    option: 'operationColumn',
    group: 'input',
    commands: LOAD,
    description: 'attribute that says "put" or "delete" for each row (dropped from the item); empty means put (delete with --delete)',
    type: 'name',
  },
  {
    flags: '--skip-expired <attribute>',
    key: 'skipExpired',
    option: 'skipExpired',
    group: 'input',
    commands: LOAD,
    description:
      "the table's TTL attribute: rows whose value is a Number of epoch seconds already past at the load time (and no more than 5 years past, as DynamoDB's TTL) are not written, counted as expired",
    type: 'name',
    doc: "The table's TTL attribute: a row whose value is a Number of epoch seconds before the load time (fixed when the load starts, kept by its checkpoint) and no more than five years before it is not written, and is counted as `skippedExpired`; strings, sets, a missing attribute and deletes are written as DynamoDB's TTL would keep them, see [Expired rows](#expired-rows)",
  },
  {
    flags: '--if-not-exists',
    key: 'ifNotExists',
    option: 'ifNotExists',
    group: 'input',
    commands: LOAD,
    description:
      'write a row only where its key is absent: each row goes as one PutItem (DeleteItem) with attribute_not_exists on the partition key; a row whose key exists is counted as conditionFailed, not written',
    type: 'flag',
    doc: 'Each row is one PutItem (a delete one DeleteItem) with `attribute_not_exists(#pk)` instead of a BatchWriteItem request, and no row supersedes another of its key: each is tried in input order. A failed condition is counted as `conditionFailed` (neither written nor rejected, never retried). See [Conditional writes](#conditional-writes).',
  },
  {
    flags: '--if-newer <attribute>',
    key: 'ifNewer',
    option: 'ifNewer',
    group: 'input',
    commands: LOAD,
    description:
      'write a row only where the stored item has no such attribute or a smaller value (Numbers numerically, Strings such as ISO-8601 times by their characters); a row without it, or of another type, is rejected',
    type: 'name',
    doc: "Each row is one PutItem (DeleteItem) with `attribute_not_exists(#a) OR #a < :v`, `:v` the row's own value: Numbers compare numerically, Strings by their UTF-8 bytes (ISO-8601 times in one format and zone order as time). A row whose attribute is missing or neither a Number nor a String is rejected (`IF_NEWER_VALUE`) before any write. Failed conditions are counted as `conditionFailed`. See [Conditional writes](#conditional-writes).",
  },
  {
    flags: '--condition <expression>',
    key: 'condition',
    option: 'conditionExpression',
    group: 'input',
    commands: LOAD,
    description:
      "a DynamoDB condition expression every row's PutItem (DeleteItem) carries, e.g. 'attribute_not_exists(#s) OR #s <> :locked'; a false one is counted as conditionFailed, not written",
    type: 'string',
    doc: 'Placeholders from `--condition-names` and `--condition-values`, each given one used (checked before the first write). Each row goes as one call and none supersedes another, as with `--if-not-exists`. See [Conditional writes](#conditional-writes).',
  },
  {
    flags: '--condition-names <json>',
    key: 'conditionNames',
    option: 'conditionNames',
    group: 'input',
    commands: LOAD,
    description: 'the --condition expression\'s attribute names, e.g. \'{"#s": "status"}\'',
    type: 'JSON',
  },
  {
    flags: '--condition-values <json>',
    key: 'conditionValues',
    option: 'conditionValues',
    group: 'input',
    commands: LOAD,
    description: 'the --condition expression\'s values in DynamoDB JSON, e.g. \'{":locked": {"S": "locked"}}\'',
    type: 'JSON',
  },
  {
    flags: '--item-conditions',
    key: 'itemConditions',
    option: 'itemConditions',
    group: 'input',
    commands: LOAD,
    description:
      'apply the condition a DynamoDB JSON line carries beside its Item (ConditionExpression, ExpressionAttributeNames, ExpressionAttributeValues, as in a PutItem request): each row goes as one PutItem (DeleteItem) with its own; a false one is counted as conditionFailed, not written',
    type: 'flag',
    doc: 'A line `{"Item": {...}, "ConditionExpression": "attribute_not_exists(pk) OR #v < :v", "ExpressionAttributeNames": {"#v": "version"}, "ExpressionAttributeValues": {":v": {"N": "7"}}}` is written only where its condition holds; a line without one is put unconditionally, still as its own call in input order. A condition DynamoDB would refuse, or any other field beside `Item`, rejects the row (`INVALID_CONDITION`). Without this flag a line that carries a condition is rejected (`ITEM_CONDITION`), never written without it. Not with `--if-not-exists`, `--if-newer`, `--condition` or `--transform`. See [Conditional writes](#conditional-writes).',
  },
  {
    flags: '--transform <module>',
    key: 'transform',
    option: 'transform',
    group: 'input',
    commands: LOAD,
    description:
      'a JavaScript (or TypeScript, where Node.js strips types) module whose exported function takes each typed item and its origin and returns an item, several, or nothing to skip the row; must be deterministic',
    type: 'path',
    doc: "The module's default export, applied after typing and before `--shard`; its items are checked as rows are (keys, GSI keys, 400 KB). A throw rejects the row (`TRANSFORM_FAILED`), an invalid return too (`TRANSFORM_OUTPUT_INVALID`); skipped rows are counted as `skippedByTransform`. A checkpoint pins the module's SHA-256. See [Transforms](#transforms).",
  },
  {
    flags: '--allow-broken-export-chain',
    key: 'allowBrokenExportChain',
    option: 'allowBrokenExportChain',
    group: 'input',
    commands: LOAD,
    description: `load DynamoDB exports in the order given even when their manifests say they are not one chain (out of order, a gap or overlap, two full exports, several tables): ${BROKEN_CHAIN_RISK}`,
    type: 'flag',
  },

  // Table and AWS
  {
    flags: '-t, --table <name>',
    key: 'table',
    option: 'table',
    group: 'aws',
    commands: ALL,
    required: ['load', 'query', 'get', 'verify'],
    description: 'target table (its key schema is read with DescribeTable)',
    variants: {
      estimate: { description: 'the table, read with DescribeTable unless --partition-key describes it offline', defaultText: 'estimate' },
      ...onRead({ description: 'the table the load wrote' }),
    },
    type: 'string',
    doc: 'Target table (required; for `estimate`, or `--partition-key` describes it offline)',
  },
  {
    flags: '--region <region>',
    key: 'region',
    option: 'region',
    group: 'aws',
    commands: ALL,
    description: 'AWS region',
    defaultText: 'AWS_REGION, AWS_DEFAULT_REGION or the profile',
    type: 'string',
  },
  {
    flags: '--profile <name>',
    key: 'profile',
    option: 'profile',
    group: 'aws',
    commands: ALL,
    description: 'named profile from the AWS config files',
    defaultText: 'the SDK chain',
    type: 'string',
  },
  {
    flags: '--endpoint-url <url>',
    key: 'endpointUrl',
    option: 'endpoint',
    group: 'aws',
    commands: ALL,
    description: 'DynamoDB endpoint, e.g. http://localhost:8000 for DynamoDB Local',
    type: 'URL',
  },
  {
    flags: '--ca-bundle <file>',
    key: 'caBundle',
    option: 'caBundle',
    group: 'aws',
    commands: ALL,
    description: 'PEM file of CA certificates to trust (a TLS-inspecting proxy)',
    defaultText: 'AWS_CA_BUNDLE',
    type: 'PEM file',
    doc: "CA certificates to trust for DynamoDB's TLS (a TLS-inspecting proxy), see [Corporate networks](#corporate-networks)",
  },
  {
    flags: '--s3-endpoint-url <url>',
    key: 's3EndpointUrl',
    option: 's3Endpoint',
    group: 'aws',
    commands: LOAD,
    description: 'S3 endpoint for s3:// inputs, e.g. an S3-compatible server',
    defaultText: 'AWS_ENDPOINT_URL_S3, AWS_ENDPOINT_URL',
    type: 'URL',
  },
  {
    flags: '--s3-path-style',
    key: 's3PathStyle',
    option: 's3PathStyle',
    group: 'aws',
    commands: LOAD,
    description: 'path-style S3 addressing (bucket in the path), for S3-compatible servers',
    type: 'flag',
  },

  // Rate
  {
    flags: '--wcu <rate>',
    key: 'wcu',
    option: 'wcu',
    group: 'rate',
    commands: LOAD,
    description:
      "target write capacity units per second for the whole load, GSIs included: a number, auto (80% of the provisioned WCU, or of an on-demand table's warm throughput, growing as DynamoDB allows) or auto:P%",
    defaultText: 'no target; throttles slow the load',
    parse: parseWcuOption,
    type: 'number \\| `auto` \\| `auto:P%`',
    doc: 'Target write units per second for the whole load, GSIs included, see [Rate control](#rate-control)',
  },
  {
    flags: '--key-wcu <rate>',
    key: 'keyWcu',
    option: 'keyWcu',
    group: 'rate',
    commands: LOAD,
    description: 'no partition key is written faster than this, in WCU/s',
    defaultText: `${DEFAULT_KEY_WCU}, the partition ceiling`,
    parse: parseRateOption,
    type: '≥ 1',
  },
  {
    flags: '--no-pacing',
    key: 'pacing',
    option: 'pacing',
    group: 'rate',
    commands: LOAD,
    description: 'no rate control: no --wcu/--key-wcu pacing and no slowing on throttles, only backoff (as other loaders do; for comparison)',
    type: 'flag',
  },
  {
    flags: '--prewarm',
    key: 'prewarm',
    option: 'prewarm',
    group: 'rate',
    commands: LOAD,
    description:
      "before the first write, raise an on-demand table's and its GSIs' warm write throughput to the load's target (--wcu or --total-wcu; never lowered) and wait until they are ACTIVE; billed by AWS. estimate and --dry-run say what it would do",
    type: 'flag',
  },
  {
    flags: '-c, --concurrency <n>',
    key: 'concurrency',
    option: 'concurrency',
    group: 'rate',
    commands: LOAD,
    description: 'BatchWriteItem calls in flight',
    defaultText: `${DEFAULT_CONCURRENCY}, measured by npm run bench`,
    default: DEFAULT_CONCURRENCY,
    ...integer(INTEGER_RANGES.concurrency),
    doc: '`BatchWriteItem` batches in flight; one more per slow batch (4× the usual time), up to 8× n (256 at most)',
  },
  {
    flags: '--max-attempts <n>',
    key: 'maxAttempts',
    option: 'maxAttempts',
    group: 'rate',
    commands: LOAD,
    description:
      'sends per item before it is rejected as RETRIES_EXHAUSTED (backoff with full jitter between); calls without an answer or with a 5xx do not count (--outage-timeout)',
    defaultText: String(DEFAULT_MAX_ATTEMPTS),
    default: DEFAULT_MAX_ATTEMPTS,
    ...integer(INTEGER_RANGES.maxAttempts),
  },
  {
    flags: '--request-timeout <ms>',
    key: 'requestTimeout',
    option: 'requestTimeoutMs',
    group: 'rate',
    commands: LOAD,
    description:
      'timeout of one BatchWriteItem call, and of an S3 read waiting for its answer or its next byte; timed-out calls are retried, an S3 read from the byte where it stopped',
    defaultText: String(DEFAULT_REQUEST_TIMEOUT_MS),
    default: DEFAULT_REQUEST_TIMEOUT_MS,
    ...integer(INTEGER_RANGES.requestTimeoutMs),
  },
  // Order
  {
    flags: '--order <mode>',
    key: 'order',
    option: 'order',
    group: 'order',
    commands: LOAD,
    description:
      'write order: auto (decided from the data: stripes where a file can be cut and its keys come in runs; otherwise streamed through the window, which goes over to round-robin if the keys turn out to come in runs), stripes (the file read at many points at once, the next write from the stripe furthest behind), round-robin (one write per key in turn), spread (each key evenly over the whole load), window (round-robin within --window rows, streaming), input (as read)',
    defaultText: 'auto',
    choices: ORDER_MODES,
    type: ORDER_MODES.map((m) => `\`${m}\``).join(' \\| '),
    doc: 'Write order, see [Write order](#write-order)',
  },
  {
    flags: '--window <rows>',
    key: 'window',
    option: 'window',
    group: 'order',
    commands: LOAD,
    description: "rows held by --order window; the most the auto order's window grows to",
    defaultText: formatCount(DEFAULT_WINDOW_ROWS),
    ...integer(INTEGER_RANGES.window),
  },
  {
    flags: '--memory <size>',
    key: 'memory',
    option: 'memoryBytes',
    group: 'order',
    commands: LOAD,
    description: 'memory the write order may hold, e.g. 512MB or 2GB; larger inputs are ordered through temporary files',
    defaultText: '128MB',
    parse: parseMemoryOption,
    type: '≥ 64KB',
  },
  {
    flags: '--temp-dir <dir>',
    key: 'tempDir',
    option: 'tempDir',
    group: 'order',
    commands: LOAD,
    description: "folder for temporary files (the order's, and local copies of S3 bytes a load reads twice), removed afterwards",
    defaultText: 'the system temporary folder',
    type: 'path',
  },

  // Sharding
  {
    flags: '--shard <rule>',
    key: 'shard',
    option: 'shard',
    group: 'sharding',
    commands: ALL,
    description:
      'add a shard suffix to the partition key: random:N, hash:N[:attribute] (default attribute: the sort key), time:hour|day|month[:attribute]; repeat to combine, in order',
    parse: parseShardOption,
    variants: loadsOwn('--shard rules', ', in order (repeatable)'),
    type: '`random:N` \\| `hash:N[:attr]` \\| `time:hour\\|day\\|month[:attr]`',
    doc: 'Add a shard suffix to the partition key (repeatable, applied in order), see [Write sharding](#write-sharding)',
  },
  {
    flags: '--shard-separator <text>',
    key: 'shardSeparator',
    option: 'shardSeparator',
    group: 'sharding',
    commands: ALL,
    description: 'between the key and each suffix',
    defaultText: '"#"',
    variants: loadsOwn('--shard-separator'),
    type: 'string',
    doc: 'Between the key and each suffix; not ending with a digit when a `random` or `hash` rule is given',
  },
  {
    flags: '--shard-keys <values>',
    key: 'shardKeys',
    option: 'shardKeys',
    group: 'sharding',
    commands: ALL,
    description: 'shard only these partition key values (the hot keys), comma-separated',
    defaultText: 'every key',
    parse: parseColumnsOption,
    variants: loadsOwn('--shard-keys', ', comma-separated'),
    type: 'list',
  },
  {
    flags: '--shard-keys-file <file>',
    key: 'shardKeysFile',
    option: 'shardKeys',
    group: 'sharding',
    commands: LOAD,
    description: 'shard only the partition key values listed in this file, one per line',
    type: 'file',
    doc: 'Same, one value per line (`#` lines are comments)',
  },
  {
    flags: '--keep-original-key <attribute>',
    key: 'keepOriginalKey',
    option: 'keepOriginalKey',
    group: 'sharding',
    commands: ALL,
    description: 'store the unsharded partition key value in this attribute (a GSI on it serves unified reads)',
    variants: loadsOwn('--keep-original-key', " (only items it names as the key's are printed)"),
    type: 'name',
  },
  {
    flags: '--shard-seed <n>',
    key: 'shardSeed',
    option: 'shardSeed',
    group: 'sharding',
    commands: ALL,
    description: 'seed of random:N, for the same suffixes on a repeated load',
    defaultText: 'random, recorded in the manifest',
    ...integer(INTEGER_RANGES.shardSeed),
    variants: onRead({ description: "without --manifest: the load's --shard-seed (random:N needs it)", defaultText: null }),
  },
  {
    flags: '--shard-base <0|1>',
    key: 'shardBase',
    option: 'shardSuffixBase',
    group: 'sharding',
    commands: ALL,
    description: 'the first number suffix of random:N and hash:N: 0 (key#0 … key#N-1) or 1 (key#1 … key#N)',
    defaultText: '0',
    parse: parseShardBaseOption,
    variants: loadsOwn('--shard-base'),
    type: '0 or 1',
  },
  {
    flags: '--shard-manifest <path>',
    key: 'shardManifest',
    option: 'shardManifestPath',
    group: 'sharding',
    commands: LOAD,
    description: 'where to write the shard manifest, which ddb-spread query and get read',
    defaultText: '<input>.<table>.shards.json next to the input, <input>.<table>.seg-i-of-N.shards.json with --segment',
    type: 'path',
    doc: 'Where the shard manifest goes ([Output files](#output-files)); `ddb-spread query`/`get` read it',
  },

  // Job
  {
    flags: '--dry-run',
    key: 'dryRun',
    group: 'job',
    commands: ['load'],
    description: 'write nothing: print the estimate of this load instead (same as ddb-spread estimate)',
    type: 'flag',
    doc: 'Write nothing; print the estimate of this load (see [Estimate](#estimate))',
  },
  {
    flags: '--checkpoint <path>',
    key: 'checkpoint',
    option: 'checkpointPath',
    group: 'job',
    commands: LOAD,
    description: 'keep a durable record of progress here; after a crash, kill -9 or a stop, run the same command to resume (file inputs only)',
    type: 'path',
  },
  {
    flags: '--segment <i/N>',
    key: 'segment',
    option: 'segment',
    group: 'job',
    commands: LOAD,
    description: 'load only segment i of N (0-based) of the partition keys: one of N workers over the same file; each key stays on one worker',
    parse: parseSegmentOption,
    type: '`0/4` …',
  },
  {
    flags: '--listing <path|s3-url>',
    key: 'listing',
    option: 'listing',
    group: 'job',
    commands: LOAD,
    description:
      'with --segment over a folder, glob or S3 prefix: the listing all workers of the load share (a file on a shared volume or s3://bucket/key); the first worker writes it, every worker loads exactly its parts',
    type: 'file or `s3://bucket/key`',
  },
  {
    flags: '--parts-disjoint',
    key: 'partsDisjoint',
    option: 'partsDisjoint',
    group: 'job',
    commands: LOAD,
    description:
      'with --segment and --listing (or estimate --workers): no primary key is in two parts, nor twice in one file, so each worker reads only its share of the parts (dealt by size) instead of every part; fewer plain CSV or JSON Lines parts than workers (one large file) are cut into byte ranges at record starts, one worker a range; one DynamoDB export is divided by part without it, and an export chain export by export when every worker has --checkpoint',
    type: 'flag',
  },
  {
    flags: '--total-wcu <rate>',
    key: 'totalWcu',
    option: 'totalWcu',
    group: 'job',
    commands: LOAD,
    description:
      "with --segment (or estimate --workers): the rate of all N workers together, a number or auto / auto:P% of the table (--wcu auto with --segment means the same), shared by those running (1/N each while all run; a finished worker's part goes to the others when they share a --listing), instead of --wcu for this worker",
    parse: parseWcuOption,
    type: '≥ 1, `auto`, `auto:P%`',
  },
  {
    flags: '--workers <n>',
    key: 'workers',
    group: 'job',
    commands: ['estimate'],
    description:
      'estimate the whole load as n workers would run it (--segment 0/n … n-1/n): how they divide the parts, the bytes they read together, and the time and cost at the rate of all of them (--total-wcu, or n times --wcu)',
    ...integer([1, 10_000]),
  },
  {
    flags: '--stop-timeout <seconds>',
    key: 'stopTimeout',
    group: 'job',
    commands: LOAD,
    description: 'on SIGINT/SIGTERM, wait at most this long for the batches in flight',
    defaultText: '30',
    default: 30,
    ...integer([1, 3600]),
  },
  {
    flags: '--outage-timeout <duration>',
    key: 'outageTimeout',
    option: 'outageTimeoutMs',
    group: 'job',
    commands: LOAD,
    description:
      'when every call fails without an answer (or with a 5xx), stop sending and wait this long for the endpoint (90, 90s, 5m); then exit 75, no row rejected',
    defaultText: '5m',
    parse: parseDurationOption,
    type: '0.1 s–24 h (`90`, `90s`, `5m`, `1h`)',
    doc: 'How long to wait for an endpoint that cannot be reached, see [Retries](#retries); then exit 75, no row rejected',
  },

  {
    flags: '--max-rejects <n>',
    key: 'maxRejects',
    option: 'maxRejects',
    group: 'job',
    commands: LOAD,
    description: 'stop the load once this many rows are rejected',
    defaultText: 'no limit',
    ...integer(INTEGER_RANGES.maxRejects),
  },
  {
    flags: '--strict',
    key: 'strict',
    option: 'maxRejects',
    group: 'job',
    commands: LOAD,
    description: 'stop at the first rejected row (same as --max-rejects 1)',
    type: 'flag',
  },
  {
    flags: '--accept-rejects',
    key: 'acceptRejects',
    group: 'job',
    // verify takes it (and ignores it): the load's own command line checks its table.
    commands: ['load', 'verify'],
    description:
      'exit 0, not 2, when the load finished with rejected rows, every one in the reject file (a Job then succeeds); --max-rejects reached, a stop, a failure and 75 keep their codes',
    type: 'flag',
    doc: 'Exit 0, not 2, when the load finished with its rejected rows in the reject file, so a Job succeeds; --max-rejects, stops, failures and 75 keep their codes, see [Rejected rows and exit codes](#rejected-rows-and-exit-codes)',
  },
  {
    flags: '--max-cost <usd>',
    key: 'maxCost',
    option: 'maxCostUsd',
    group: 'job',
    commands: LOAD,
    description:
      'cost guard: refuse to start when the first rows price the whole input above this many USD (exit 3), stop before the write units counted would pass it (checkpoint saved, exit 4); counted from the start of the whole load, resumes included',
    defaultText: 'no limit',
    parse: parsePriceOption,
    type: 'USD',
    doc: 'The cost guard: refuses to start (exit 3) when the first rows price the whole input above it, and stops before the write units counted would pass it (exit 4, checkpoint saved); counted from the start of the whole load, a resume included, at --price-write-request or --price-wcu-hour, see [Cost guard](#cost-guard)',
  },
  {
    flags: '--price-write-request <usd>',
    key: 'priceWriteRequest',
    option: 'prices',
    group: 'job',
    commands: LOAD,
    description: 'estimate and --max-cost: on-demand price per million write request units',
    defaultText: priceDefault(DEFAULT_PRICES.onDemandPerMillionWrites),
    parse: parsePriceOption,
    type: 'USD',
  },
  {
    flags: '--price-wcu-hour <usd>',
    key: 'priceWcuHour',
    option: 'prices',
    group: 'job',
    commands: LOAD,
    description: 'estimate and --max-cost: provisioned price per WCU-hour',
    defaultText: priceDefault(DEFAULT_PRICES.provisionedPerWcuHour),
    parse: parsePriceOption,
    type: 'USD',
  },
  {
    flags: '--price-read-request <usd>',
    key: 'priceReadRequest',
    option: 'prices',
    group: 'job',
    commands: LOAD,
    description: "estimate's verify section: on-demand price per million read request units",
    defaultText: priceDefault(DEFAULT_READ_PRICES.onDemandPerMillionReads),
    parse: parsePriceOption,
    type: 'USD',
  },
  {
    flags: '--price-rcu-hour <usd>',
    key: 'priceRcuHour',
    option: 'prices',
    group: 'job',
    commands: LOAD,
    description: "estimate's verify section: provisioned price per RCU-hour",
    defaultText: priceDefault(DEFAULT_READ_PRICES.provisionedPerRcuHour),
    parse: parsePriceOption,
    type: 'USD',
  },
  {
    flags: '--config <file>',
    key: 'config',
    group: 'job',
    commands: LOAD,
    description:
      'read options from a JSON file: the long option names as keys, "input" for the file, e.g. {"table": "Orders", "wcu": 500, "shard": ["hash:4"], "pacing": false}; flags given here win',
    type: 'JSON',
  },

  // Output
  {
    flags: '--rejects <path>',
    key: 'rejects',
    option: 'rejectsPath',
    group: 'output',
    commands: LOAD,
    description: 'reject file, one JSON line per rejected row, locked while the load runs',
    defaultText: '<input>.rejects.jsonl next to the input; .seg-i-of-N.rejects.jsonl with --segment, .dry-run.rejects.jsonl for a dry run',
    variants: { verify: { description: "the load's reject file: the rows DynamoDB refused are expected absent (read, never written)" } },
    type: 'path',
    doc: 'Reject file (created only if a row is rejected; locked while the load runs), see [Output files](#output-files)',
  },
  {
    flags: '--condition-failures <path>',
    key: 'conditionFailures',
    option: 'conditionFailuresPath',
    group: 'output',
    commands: LOAD,
    description:
      "with a condition: write each row whose condition was false as one JSON line (file, line, key, CONDITION_FAILED, the condition, the row's text), 0600; with --segment, .seg-i-of-N before .jsonl",
    variants: {
      verify: {
        description: "the load's file (read, never written): a key whose last row tried is in it is not compared, as the table kept its item (conditionKept)",
      },
    },
    type: 'path',
    doc: "Only with `--if-not-exists`, `--if-newer` or `--condition`. One line per `conditionFailed` row, in the reject file's format (code `CONDITION_FAILED`, `condition` the option that failed); created at the first one, private (0600). A checkpoint records its length and SHA-256: a resume cuts lines written after the last save and refuses a file changed or gone. See [Conditional writes](#conditional-writes).",
  },
  {
    flags: '--report <path>',
    key: 'report',
    group: 'output',
    commands: LOAD,
    description:
      "write the final summary as a JSON file (counters, rate, rejects by reason, input fingerprint, version, timings, and the load's course, a bucket every few seconds: timeline), atomically",
    variants: {
      verify: {
        description: 'write the --json object (counts per outcome, reads, read units) with the version and timings as a JSON file, private, atomically',
      },
    },
    type: 'path',
  },
  {
    flags: '--html-report <path>',
    key: 'htmlReport',
    group: 'output',
    commands: LOAD,
    description:
      'write the same report as one self-contained HTML page to open in a browser (charts of the rate, throttles, rows and hottest keys; rejects by reason; the plan beside what happened; no network), atomically',
    type: 'path',
  },
  {
    flags: '--compare-estimate <file>',
    key: 'compareEstimate',
    group: 'output',
    // verify takes it (and ignores it): the load's own command line checks its table.
    commands: ['load', 'verify'],
    description:
      'an `estimate --json` output: --report and --html-report set its predictions (duration, write units, rate, throttled requests, rejected rows) beside what the load did',
    type: 'path',
  },
  { flags: '--json', key: 'json', group: 'output', commands: LOAD, description: 'print the summary as one JSON object on stdout', type: 'flag' },
  {
    flags: '--no-progress',
    key: 'progress',
    group: 'output',
    commands: LOAD,
    description: 'no progress bar (it is only drawn when stderr is a terminal)',
    type: 'flag',
  },
  { flags: '-q, --quiet', key: 'quiet', group: 'output', commands: LOAD, description: 'print only errors and the summary', type: 'flag' },
  {
    flags: '--no-excerpts',
    key: 'excerpts',
    group: 'output',
    commands: LOAD,
    description: 'do not show row contents in error messages on the terminal (the reject file keeps them)',
    type: 'flag',
  },
  {
    flags: '--verbose',
    key: 'verbose',
    group: 'output',
    commands: ALL,
    description: 'show stack traces and retry lines',
    variants: onRead({ description: 'show stack traces' }),
    type: 'flag',
  },
  {
    flags: '--log-interval <seconds>',
    key: 'logInterval',
    group: 'output',
    commands: LOAD,
    description: 'without a terminal: a progress line every this many seconds',
    defaultText: '10',
    default: 10,
    ...integer([1, 86_400]),
  },
  {
    flags: '--log-format <format>',
    key: 'logFormat',
    group: 'output',
    commands: LOAD,
    description: 'messages on stderr as text, or as one JSON object per line (progress, warnings, rejects, rate, summary)',
    defaultText: 'text',
    default: 'text',
    choices: ['text', 'json'],
    type: '`text` \\| `json`',
  },

  // Estimate only
  {
    flags: '--partition-key <name:type>',
    key: 'partitionKey',
    group: 'estimate',
    commands: LOAD,
    description: "estimate offline: the table's partition key, e.g. customerId:S (no DescribeTable)",
    parse: parseKeyOption('--partition-key'),
    type: '`name:TYPE`',
  },
  {
    flags: '--sort-key <name:type>',
    key: 'sortKey',
    group: 'estimate',
    commands: LOAD,
    description: "estimate offline: the table's sort key, e.g. orderId:S",
    parse: parseKeyOption('--sort-key'),
    type: '`name:TYPE`',
  },
  {
    flags: '--billing <mode>',
    key: 'billing',
    group: 'estimate',
    commands: LOAD,
    description: 'estimate offline: billing mode',
    defaultText: 'on-demand',
    choices: ['provisioned', 'on-demand'],
    type: '`provisioned` \\| `on-demand`',
  },
  {
    flags: '--table-wcu <n>',
    key: 'tableWcu',
    group: 'estimate',
    commands: LOAD,
    description: "estimate offline: provisioned WCU, or an on-demand table's warm write throughput",
    parse: parseRateOption,
    type: '≥ 1',
  },
  {
    flags: '--table-rcu <n>',
    key: 'tableRcu',
    group: 'estimate',
    commands: LOAD,
    description: 'estimate offline: provisioned RCU (they count in the partition formula)',
    ...integer([0, 40_000_000]),
  },
  {
    flags: '--gsi <spec>',
    key: 'gsi',
    group: 'estimate',
    commands: LOAD,
    description: 'estimate offline: a GSI as name:pk:TYPE[:sk:TYPE][:ALL|KEYS_ONLY|INCLUDE=a+b] (repeatable)',
    parse: parseGsiOption,
    type: 'spec',
  },
  {
    flags: '--item-count <n>',
    key: 'itemCount',
    group: 'estimate',
    commands: LOAD,
    description: 'estimate offline: items already in the table (0: a new table, for the Import from S3 note)',
    ...integer([0, Number.MAX_SAFE_INTEGER]),
  },
  {
    flags: '--new-table',
    key: 'newTable',
    group: 'estimate',
    commands: LOAD,
    description:
      'estimate offline: the provisioned table is created for the load at --wcu, and set back to --table-wcu afterwards (a bulk load that starts at 11,000 WCU gets 11 partitions)',
    type: 'flag',
  },

  // What to read (query, get)
  {
    flags: '-k, --key <value>',
    key: 'key',
    group: 'read',
    commands: READ,
    required: READ,
    description: 'the logical (unsharded) partition key value',
    type: 'string',
  },
  {
    flags: '-m, --manifest <file>',
    key: 'manifest',
    group: 'read',
    commands: READ,
    description: 'the shard manifest the load wrote',
    defaultText: '<input>.<table>.shards.json next to its input',
    type: 'file',
  },
  {
    flags: '--sort <value>',
    key: 'sort',
    group: 'read',
    commands: ['get'],
    description: "the item's sort key value (numbers as digits, binary as base64)",
    type: 'string',
  },
  {
    flags: '--value <attribute=value>',
    key: 'value',
    group: 'read',
    commands: ['get'],
    description: 'the value of an attribute a hash or time rule takes its suffix from, when not the sort key (repeatable)',
    parse: parseValueOption,
    type: '`attribute=value`',
  },
  {
    flags: '--consistent-read',
    key: 'consistentRead',
    group: 'read',
    commands: READ,
    description: 'strongly consistent reads (twice the read units)',
    type: 'flag',
  },
  {
    flags: '--concurrency <n>',
    key: 'concurrency',
    group: 'read',
    commands: ['query'],
    description: 'queries in flight',
    defaultText: '16',
    ...integer([1, 256]),
  },
  {
    flags: '--page-size <n>',
    key: 'pageSize',
    group: 'read',
    commands: ['query'],
    description: 'items per Query page',
    defaultText: 'as many as fit in 1 MB',
    ...integer([1, 1_000_000]),
  },
  {
    flags: '--ddb-json',
    key: 'ddbJson',
    group: 'read',
    commands: READ,
    description: 'print DynamoDB JSON ({"S": "..."}) instead of plain JSON',
    type: 'flag',
  },
  // Verify only
  {
    flags: '--rcu <units|auto[:P%]>',
    key: 'rcu',
    group: 'verify',
    commands: ['verify', 'estimate'],
    variants: {
      estimate: {
        description: "the read rate the verify section's times and provisioned price assume (auto: as verify takes it)",
        defaultText: "80% of the table's read capacity",
      },
    },
    description:
      "read units per second the verify's reads may use (1 per 4 KB strongly consistent, half that eventually); auto: 80% (auto:P%: P%) of the table's provisioned RCU, or on demand of its warm read throughput (12,000 when unreported); with --segment and --listing, the rate of all N workers together, shared by those running (a finished worker's part goes to the others)",
    defaultText: 'unpaced',
    parse: parseRcuOption,
    type: 'number > 0, `auto`, `auto:50%`',
  },
  {
    flags: '--key-rcu <rate>',
    key: 'keyRcu',
    group: 'verify',
    commands: ['verify'],
    description: 'no partition key is read faster than this, in read units per second (a partition serves at most 3,000)',
    defaultText: '3000, the partition ceiling',
    parse: parseKeyRcuOption,
    type: '≥ 1',
  },
  {
    flags: '--no-consistent-read',
    key: 'consistentRead',
    group: 'verify',
    commands: ['verify', 'estimate'],
    variants: { estimate: { description: 'price the verify section with eventually consistent reads (half the read units)' } },
    description: 'eventually consistent reads: half the read units, but an item written a moment ago may read as it was',
    type: 'flag',
  },
  {
    flags: '--sample <percent>',
    key: 'sample',
    group: 'verify',
    commands: ['verify', 'estimate'],
    variants: { estimate: { description: 'price the verify section for this share of the keys' } },
    description: 'check only this share of the keys, chosen by a hash of the key (a rerun checks the same keys); the summary says what the sample proves',
    defaultText: '100%',
    parse: parseSampleOption,
    type: 'percent',
  },
  {
    flags: '--scan <segments|auto>',
    key: 'scan',
    group: 'verify',
    commands: ['verify', 'estimate'],
    variants: { estimate: { description: "the Scan's segments in the verify section (auto: one per 2 GB)", defaultText: 'one per 2 GB of the table' } },
    description:
      "read the table by a parallel Scan in this many segments instead of BatchGetItem of the input's keys (paced by --rcu), which also finds items no row writes (extra); auto: whichever of the two costs fewer read units, as estimate prices them",
    defaultText: 'BatchGetItem of the keys',
    parse: parseScanOption,
    type: '1–1,000,000, `auto`',
  },
  {
    flags: '--differences <path>',
    key: 'differences',
    group: 'verify',
    commands: ['verify'],
    description: "file of the keys that differ, in the reject file's format (file, line, code, message, key, raw), private",
    defaultText: '<input>.differences.jsonl next to the input',
    type: 'path',
  },
];

/** The long flag of a spec, e.g. "--concurrency". */
export const longFlag = (spec: OptionSpec): string => /--[a-z0-9-]+/.exec(spec.flags)![0];

/**
 * The specs a command takes, in table order (which groups them); query and get show what to read first,
 * since those flags are the ones every read needs.
 */
export function optionsOf(command: CommandName): OptionSpec[] {
  const specs = OPTION_TABLE.filter((spec) => spec.commands.includes(command));
  if (command === 'load' || command === 'estimate') return specs;
  return [...specs.filter((spec) => spec.group === 'read'), ...specs.filter((spec) => spec.group !== 'read')];
}

/** The spec of `--long` on a command. */
export function specOf(command: CommandName, long: string): OptionSpec {
  const spec = optionsOf(command).find((s) => longFlag(s) === long);
  if (!spec) throw new Error(`${long} is not an option of ${command} in the option table`);
  return spec;
}

/** A spec as one command shows it: description and default, with that command's variant applied. */
export function describedFor(spec: OptionSpec, command: CommandName): { description: string; defaultText: string | undefined } {
  const variant = spec.variants?.[command];
  const defaultText = variant?.defaultText === null ? undefined : (variant?.defaultText ?? spec.defaultText);
  return { description: variant?.description ?? spec.description, defaultText };
}
