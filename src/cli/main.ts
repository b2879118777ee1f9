import { Command, Option } from 'commander';
import { LoaderError } from '../shared/errors.js';
import { INPUT_FORMATS } from '../reading/inputFormat.js';
import { DEFAULT_WINDOW_ROWS, ORDER_MODES } from '../ordering/order.js';
import { EMPTY_POLICIES } from '../typing/typeMap.js';
import { TIMESTAMP_MODES } from '../typing/temporal.js';
import { load } from '../load/load.js';
import { estimate } from '../estimating/estimate.js';
import { DEFAULT_PRICES } from '../estimating/costEstimate.js';
import { BROKEN_CHAIN_RISK } from '../reading/exportChain.js';
import { estimateJson, formatEstimate } from '../estimating/estimateReport.js';
import type { LoadResult } from '../reporting/result.js';
import type { LoadEvent } from '../reporting/events.js';
import { heapForOrder } from './heap.js';
import type { CallerFiles } from '../load/outputFiles.js';
import { attachConfigOption } from './config.js';
import { ignoreClosedPipe } from './closedPipes.js';
import { createProgressBar } from '../reporting/progressBar.js';
import { formatCount } from '../shared/format.js';
import {
  DEFAULT_CONCURRENCY,
  DEFAULT_MAX_ATTEMPTS,
  DEFAULT_REQUEST_TIMEOUT_MS,
  parseColumnsOption,
  parseDelimiterOption,
  parseDurationOption,
  parseIntegerOption,
  parseMemoryOption,
  parseGsiOption,
  parseKeyOption,
  parsePriceOption,
  parseRateOption,
  parseSegmentOption,
  parseWcuOption,
  toEstimateOptions,
  parseShardOption,
  parseShardBaseOption,
  parseTypesOption,
  toLoadOptions,
  type LoadFlags,
} from './options.js';

import { EXIT, exitCodeForError, exitCodeForResult, exitCodeForUsage } from './exitCodes.js';
import { startupNotices } from './runtimeNotices.js';
import { createEventRenderer } from './renderEvents.js';
import { addReadCommands } from './readCommands.js';
import { packageVersion, writeReport } from './report.js';
import { handleStopSignals, type StopSignal } from './signals.js';
import { Terminal, type CliIo } from './terminal.js';

/** Exit codes, documented in --help and the README (the table is in exitCodes.ts). */
export { EXIT };
export type { CliIo };

const LOAD_EXAMPLES = `
Examples:
  # CSV export with a header row; numbers and flags typed, everything else a string
  $ ddb-spread load orders.csv --table Orders --types total:N,paid:BOOL,items:JSON

  # JSON Lines from a pipe, with the result as JSON for a script
  $ gunzip -c users.jsonl.gz | ddb-spread load - --input-format jsonl --table Users --json

  # A DynamoDB S3 export (DynamoDB JSON) into DynamoDB Local
  $ ddb-spread load export.json.gz --input-format ddb-json --table Orders --endpoint-url http://localhost:8000

  # A hot customer: shard it 8 ways by a hash of the sort key, keep the original key for a GSI
  $ ddb-spread load orders.csv --table Orders --shard hash:8 --shard-keys cust-0007 --keep-original-key customerKey

  # Daily buckets then 4 hash shards: user-1#2024-01-15#3
  $ ddb-spread load events.jsonl --table Events --shard time:day:createdAt --shard hash:4:eventId

  # Use 80% of a provisioned table's write capacity; no key above 500 WCU/s
  $ ddb-spread load orders.csv --table Orders --wcu auto --key-wcu 500

  # A 20 GB export on a laptop: order it with 1 GB of memory and temporary files on a big disk
  $ ddb-spread load export.csv.gz --table Orders --order spread --memory 1GB --temp-dir /mnt/scratch

  # Header-less, semicolon-separated, stop at the first bad row
  $ ddb-spread load data.csv --table T --columns pk,sk,qty --delimiter ";" --types qty:N --strict

Exit codes (sysexits.h; the README has the full table):
  0    every row was written (or superseded by a later row with the same key)
  2    the load finished, but some rows were rejected (see the reject file)
  75   worth retrying later: endpoint unreachable, throttled past --max-attempts, credentials not yet available
  64 usage, 65 bad data or --max-rejects, 66 input missing, 73 cannot write an output file,
  77 access denied, 78 no such table or checkpoint of another load: no retry will help
  1    other failures; 130 stopped by Ctrl-C (143 for SIGTERM), rows already read were written first

Credentials come from the AWS SDK's default chain (environment, --profile/AWS_PROFILE, SSO, instance
or task role); they are never printed.`;

const ESTIMATE_EXAMPLES = `
Examples:
  # Against the real table (DescribeTable only; nothing is written)
  $ ddb-spread estimate orders.csv --table Orders --types total:N --wcu auto

  # Offline, no AWS account: describe the table with flags
  $ ddb-spread estimate orders.csv --partition-key customerId:S --sort-key orderId:S \\
      --billing provisioned --table-wcu 1000 --gsi byStatus:status:S:orderId:S:KEYS_ONLY

  # The same, as JSON for a script (fields in docs/ESTIMATE.md)
  $ ddb-spread estimate orders.csv --partition-key customerId:S --json

  # What sharding the hot key would change
  $ ddb-spread estimate orders.csv --table Orders --shard hash:8 --shard-keys cust-0007

Exit codes: 0 estimated (rows may have been rejected: see the report and the reject file); could not
estimate: the codes of load (64 usage, 66 input missing, 75 worth retrying, 77 access denied, 78 no such table, 1 other).`;

/**
 * The commander program. Output and exit handling are set on the root before any command is added,
 * because commander copies them into each command when it is created.
 */
export function buildProgram(
  run: (input: Inputs, flags: LoadFlags) => Promise<void>,
  io?: Pick<CliIo, 'stdout' | 'stderr'>,
  runEstimate: (input: Inputs, flags: LoadFlags) => Promise<void> = run,
): Command {
  const program = new Command('ddb-spread');
  if (io) {
    program.exitOverride();
    program.configureOutput({ writeOut: (s) => void io.stdout.write(s), writeErr: (s) => void io.stderr.write(s) });
  }
  program
    .description('Bulk-load CSV and JSON Lines into Amazon DynamoDB without melting a partition.')
    .version(packageVersion(), '-V, --version')
    .showHelpAfterError('(add --help for usage and examples)')
    .addHelpText(
      'after',
      `
Examples:
  $ ddb-spread load orders.csv --table Orders --types total:N,paid:BOOL
  $ ddb-spread load --help     all options of load, with more examples and the exit codes`,
    );

  const load = program
    .command('load')
    .description('Load CSV or JSONL files (optionally gzipped, or - for stdin), folders, S3 objects or DynamoDB exports into a DynamoDB table.')
    .argument('<file...>', INPUTS_HELP)
    .requiredOption('-t, --table <name>', 'target table (its key schema is read with DescribeTable)')
    .option('--dry-run', 'write nothing: print the estimate of this load instead (same as ddb-spread estimate)');
  attachConfigOption(addLoadOptions(load).addHelpText('after', LOAD_EXAMPLES).action(oneOrMany(run)));

  const estimateCommand = program
    .command('estimate')
    .description('Predict a load without writing: duration, cost, hot keys, partitions, shard advice (works offline with --partition-key).')
    .argument('<file...>', INPUTS_HELP)
    .option('-t, --table <name>', 'the table, read with DescribeTable unless --partition-key describes it offline (default name: estimate)');
  attachConfigOption(addLoadOptions(estimateCommand).addHelpText('after', ESTIMATE_EXAMPLES).action(oneOrMany(runEstimate)));
  return program;
}

/** One input as a string (as before issue 16), several as a list. */
export type Inputs = string | string[];

const INPUTS_HELP =
  'input files, folders, globs, s3://bucket/key or s3://bucket/prefix/, DynamoDB export folders (local or S3), read as one load; or - for stdin';

function oneOrMany(run: (input: Inputs, flags: LoadFlags) => Promise<void>) {
  return (inputs: string[], flags: LoadFlags) => run(inputs.length === 1 ? inputs[0]! : inputs, flags);
}

/** The inputs in one string, for messages and --report. */
const inputsText = (input: Inputs) => (typeof input === 'string' ? input : input.join(' '));

/**
 * The options load and estimate share: input, typing, order, sharding, rate, AWS, output. Over 100 lines
 * because it is the option table itself (one chained `.option()` per flag, in --help order), not logic.
 */
function addLoadOptions(command: Command): Command {
  return command
    .option('--region <region>', 'AWS region (default: AWS_REGION, AWS_DEFAULT_REGION or the profile)')
    .option('--profile <name>', 'named profile from the AWS config files')
    .option('--endpoint-url <url>', 'DynamoDB endpoint, e.g. http://localhost:8000 for DynamoDB Local')
    .option('--ca-bundle <file>', 'PEM file of CA certificates to trust (a TLS-inspecting proxy); default: AWS_CA_BUNDLE')
    .option('--s3-endpoint-url <url>', 'S3 endpoint for s3:// inputs, e.g. an S3-compatible server (default: AWS_ENDPOINT_URL_S3, AWS_ENDPOINT_URL)')
    .option('--s3-path-style', 'path-style S3 addressing (bucket in the path), for S3-compatible servers')
    .option(
      '--allow-broken-export-chain',
      `load DynamoDB exports in the order given even when their manifests say they are not one chain (out of order, a gap or overlap, two full exports, several tables): ${BROKEN_CHAIN_RISK}`,
    )
    .option('--delete', 'every row is a delete of its key (a delete list): DeleteRequest instead of PutRequest; other attributes are ignored')
    .option('--operation-column <name>', 'attribute that says "put" or "delete" for each row (dropped from the item); empty means put (delete with --delete)')
    .addOption(new Option('--input-format <format>', 'input format (default: from the file extension, else from the first bytes)').choices([...INPUT_FORMATS]))
    .option(
      '--delimiter <char>',
      'CSV field delimiter for every file; "tab" for tabs (default: each file by its name: tab for .tsv, .tsv.gz, .tsv.zst…, else ",")',
      parseDelimiterOption,
    )
    .option('--columns <names>', 'attribute names for a CSV file without a header row, comma-separated', parseColumnsOption)
    .option('--types <list>', 'attribute types, e.g. price:N,active:BOOL,tags:SS,meta:JSON,blob:B (repeatable)', parseTypesOption)
    .option('--schema <file>', 'JSON file of attribute types, e.g. {"price":"N"}; --types wins over it')
    .option('--infer', 'infer N, BOOL, M and L from CSV cells, never losing digits ("007" stays a string)')
    .addOption(
      new Option('--empty <policy>', 'what an empty CSV cell or a Parquet null becomes: omit the attribute, NULL, or ""')
        .choices([...EMPTY_POLICIES])
        .default('omit'),
    )
    .addOption(
      new Option('--timestamps <mode>', 'Parquet and Ion timestamps and dates: ISO-8601 text, or exact epoch seconds or milliseconds (N)').choices([
        ...TIMESTAMP_MODES,
      ]),
    )
    .option(
      '--wcu <rate>',
      "target write capacity units per second for the whole load, GSIs included: a number, auto (80% of the provisioned WCU, or of an on-demand table's warm throughput, growing as DynamoDB allows) or auto:P% (default: no target; throttles slow the load)",
      parseWcuOption,
    )
    .option('--key-wcu <rate>', 'no partition key is written faster than this, in WCU/s (default 1000, the partition ceiling)', parseRateOption)
    .option(
      '--segment <i/N>',
      'load only segment i of N (0-based) of the partition keys: one of N workers over the same file; each key stays on one worker',
      parseSegmentOption,
    )
    .option(
      '--listing <path|s3-url>',
      'with --segment over a folder, glob or S3 prefix: the listing all workers of the load share (a file on a shared volume or s3://bucket/key); the first worker writes it, every worker loads exactly its parts',
    )
    .option('--total-wcu <rate>', 'with --segment: the rate of all N workers together (each takes 1/N), instead of --wcu for this worker', parseRateOption)
    .option('--no-pacing', 'no rate control: no --wcu/--key-wcu pacing and no slowing on throttles, only backoff (as other loaders do; for comparison)')
    .option(
      '-c, --concurrency <n>',
      `BatchWriteItem calls in flight (default ${DEFAULT_CONCURRENCY}, measured by npm run bench)`,
      parseIntegerOption(1, 256),
      DEFAULT_CONCURRENCY,
    )
    .option(
      '--max-attempts <n>',
      'sends per item before it is rejected as RETRIES_EXHAUSTED (backoff with full jitter between); calls without an answer or with a 5xx do not count (--outage-timeout)',
      parseIntegerOption(1, 100),
      DEFAULT_MAX_ATTEMPTS,
    )
    .option(
      '--request-timeout <ms>',
      'timeout of one BatchWriteItem call; timed-out calls are retried',
      parseIntegerOption(100, 600_000),
      DEFAULT_REQUEST_TIMEOUT_MS,
    )
    .option(
      '--outage-timeout <duration>',
      'when every call fails without an answer (or with a 5xx), stop sending and wait this long for the endpoint (90, 90s, 5m); then exit 75, no row rejected (default 5m)',
      parseDurationOption,
    )
    .addOption(
      new Option(
        '--order <mode>',
        'write order: round-robin (one write per key in turn), spread (each key evenly over the whole load), window (round-robin within --window rows, streaming), input (as read) (default: round-robin, window for stdin)',
      ).choices([...ORDER_MODES]),
    )
    .option('--window <rows>', `rows held by --order window (default ${formatCount(DEFAULT_WINDOW_ROWS)})`, parseIntegerOption(2, 100_000_000))
    .option(
      '--memory <size>',
      'memory the write order may hold, e.g. 512MB or 2GB; larger inputs are ordered through temporary files (default 128MB)',
      parseMemoryOption,
    )
    .option('--temp-dir <dir>', 'folder for those temporary files, removed afterwards (default: the system temporary folder)')
    .option(
      '--shard <rule>',
      'add a shard suffix to the partition key: random:N, hash:N[:attribute] (default attribute: the sort key), time:hour|day|month[:attribute]; repeat to combine, in order',
      parseShardOption,
    )
    .option('--shard-separator <text>', 'between the key and each suffix (default "#")')
    .option('--shard-keys <values>', 'shard only these partition key values (the hot keys), comma-separated (default: every key)', parseColumnsOption)
    .option('--shard-keys-file <file>', 'shard only the partition key values listed in this file, one per line')
    .option('--keep-original-key <attribute>', 'store the unsharded partition key value in this attribute (a GSI on it serves unified reads)')
    .option(
      '--shard-seed <n>',
      'seed of random:N, for the same suffixes on a repeated load (default: random, recorded in the manifest)',
      parseIntegerOption(0, 0xffffffff),
    )
    .option('--shard-base <0|1>', 'the first number suffix of random:N and hash:N: 0 (key#0 … key#N-1) or 1 (key#1 … key#N) (default 0)', parseShardBaseOption)
    .option(
      '--shard-manifest <path>',
      'where to write the shard manifest, which ddb-spread query and get read (default: <input>.<table>.shards.json next to the input, <input>.<table>.seg-i-of-N.shards.json with --segment)',
    )
    .option(
      '--rejects <path>',
      'reject file, one JSON line per rejected row, locked while the load runs (default: <input>.rejects.jsonl next to the input; .seg-i-of-N.rejects.jsonl with --segment, .dry-run.rejects.jsonl for a dry run)',
    )
    .option('--max-rejects <n>', 'stop the load once this many rows are rejected (default: no limit)', parseIntegerOption(1, Number.MAX_SAFE_INTEGER))
    .option('--strict', 'stop at the first rejected row (same as --max-rejects 1)')
    .option('--json', 'print the summary as one JSON object on stdout')
    .option('--no-progress', 'no progress bar (it is only drawn when stderr is a terminal)')
    .option('-q, --quiet', 'print only errors and the summary')
    .option('--no-excerpts', 'do not show row contents in error messages on the terminal (the reject file keeps them)')
    .option('--verbose', 'show stack traces and retry lines')
    .option('--log-interval <seconds>', 'without a terminal: a progress line every this many seconds (default 10)', parseIntegerOption(1, 86_400), 10)
    .addOption(
      new Option('--log-format <format>', 'messages on stderr as text, or as one JSON object per line (progress, warnings, rejects, rate, summary)')
        .choices(['text', 'json'])
        .default('text'),
    )
    .option(
      '--checkpoint <path>',
      'keep a durable record of progress here; after a crash, kill -9 or a stop, run the same command to resume (file inputs only)',
    )
    .option('--stop-timeout <seconds>', 'on SIGINT/SIGTERM, wait at most this long for the batches in flight (default 30)', parseIntegerOption(1, 3600), 30)
    .option('--report <path>', 'write the final summary as a JSON file (counters, rate, rejects by reason, input fingerprint, version, timings), atomically')
    .option(
      '--partition-key <name:type>',
      "estimate offline: the table's partition key, e.g. customerId:S (no DescribeTable)",
      parseKeyOption('--partition-key'),
    )
    .option('--sort-key <name:type>', "estimate offline: the table's sort key, e.g. orderId:S", parseKeyOption('--sort-key'))
    .addOption(new Option('--billing <mode>', 'estimate offline: billing mode (default on-demand)').choices(['provisioned', 'on-demand']))
    .option('--table-wcu <n>', "estimate offline: provisioned WCU, or an on-demand table's warm write throughput", parseRateOption)
    .option('--table-rcu <n>', 'estimate offline: provisioned RCU (they count in the partition formula)', parseIntegerOption(0, 40_000_000))
    .option('--gsi <spec>', 'estimate offline: a GSI as name:pk:TYPE[:sk:TYPE][:ALL|KEYS_ONLY|INCLUDE=a+b] (repeatable)', parseGsiOption)
    .option(
      '--new-table',
      "estimate offline: the provisioned table is created for the load at --wcu, and set back to --table-wcu afterwards (seed 004's bulk load: 11,000 WCU, 11 partitions)",
    )
    .option(
      '--item-count <n>',
      'estimate offline: items already in the table (0: a new table, for the Import from S3 note)',
      parseIntegerOption(0, Number.MAX_SAFE_INTEGER),
    )
    .option(
      '--price-write-request <usd>',
      `estimate: on-demand price per million write request units (default ${DEFAULT_PRICES.onDemandPerMillionWrites}, ${DEFAULT_PRICES.region}, ${DEFAULT_PRICES.date})`,
      parsePriceOption,
    )
    .option(
      '--price-wcu-hour <usd>',
      `estimate: provisioned price per WCU-hour (default ${DEFAULT_PRICES.provisionedPerWcuHour}, ${DEFAULT_PRICES.region}, ${DEFAULT_PRICES.date})`,
      parsePriceOption,
    );
}

/** Runs the CLI; returns the exit code instead of calling process.exit, so it can be tested in-process. */
export async function main(argv: string[], io: CliIo = { stdout: process.stdout, stderr: process.stderr, stdin: process.stdin }): Promise<number> {
  let exitCode: number = EXIT.OK;
  // A reader that closes early (| head -1) ends that stream only, never the load (issue 11.11).
  ignoreClosedPipe(io.stdout);
  ignoreClosedPipe(io.stderr);
  const run = async (input: Inputs, flags: LoadFlags, command: 'load' | 'estimate') => {
    exitCode = await runCommand(io, input, flags, command);
  };
  const program = buildProgram(
    (input, flags) => run(input, flags, 'load'),
    io,
    (input, flags) => run(input, flags, 'estimate'),
  );
  addReadCommands(program, io, (code) => {
    exitCode = code;
  });
  try {
    await program.parseAsync(argv);
  } catch (error) {
    const { exitCode: code, code: reason } = error as { exitCode?: unknown; code?: unknown };
    return typeof code === 'number' ? exitCodeForUsage(code, typeof reason === 'string' ? reason : undefined) : EXIT.FATAL;
  }
  return exitCode;
}

/** One load or estimate: wires signals, the terminal and the event renderer to load() or estimate(); returns the exit code. */
async function runCommand(io: CliIo, inputs: Inputs, flags: LoadFlags, command: 'load' | 'estimate'): Promise<number> {
  const input = inputsText(inputs);
  const estimating = command === 'estimate' || flags.dryRun === true;
  const terminal = new Terminal(io, { jsonLog: flags.logFormat === 'json' });
  const controller = new AbortController();
  const startedAt = new Date();
  const tty = 'isTTY' in io.stderr && io.stderr.isTTY === true;
  const bar = flags.progress && tty && !flags.quiet && !flags.json ? createProgressBar(io.stderr as NodeJS.WriteStream) : undefined;
  const renderer = createEventRenderer(terminal, flags, estimating, bar);
  const signals = handleStopSignals(
    flags.stopTimeout,
    (name) => {
      // The stop is news: the progress display ends here, and what it held is printed.
      bar?.stop();
      terminal.release();
      terminal.say(
        `\nddb-spread: ${name} received; finishing the batches in flight (press Ctrl-C again to quit at once${flags.checkpoint ? '; the checkpoint stays consistent' : ''})\n`,
      );
      controller.abort(new Error(name));
    },
    (name, code) => quitAfterStopTimeout(terminal, input, flags, estimating ? undefined : renderer.snapshot(), startedAt, name, code),
  );
  if (!flags.quiet)
    for (const notice of startupNotices(process.env, process.versions.node, flags.maxAttempts))
      terminal.note(`ddb-spread: ${notice}\n`, { type: 'warning', message: notice });
  const onEvent = (event: LoadEvent) => {
    // A global order holds much of the input: V8's own heap growth suits it better (src/cli/heap.ts).
    if (event.type === 'reading') heapForOrder(event.order);
    renderer.onEvent(event);
  };
  const deps = { signal: controller.signal, onEvent, stdin: io.stdin as never, files: callerFiles(flags, estimating) };
  try {
    if (estimating) {
      const result = await estimate(await toEstimateOptions(inputs, flags), deps);
      bar?.stop();
      terminal.release();
      const color = 'isTTY' in io.stdout && (io.stdout as NodeJS.WriteStream).isTTY === true && !process.env['NO_COLOR'];
      io.stdout.write(flags.json ? estimateJson(result, { excerpts: flags.excerpts }) : formatEstimate(result, { color, excerpts: flags.excerpts }));
      return EXIT.OK;
    }
    const result = await load(await toLoadOptions(inputs, flags), deps);
    bar?.stop();
    terminal.release();
    if (flags.report) await writeReport(flags.report, input, result, startedAt, undefined, flags.excerpts);
    terminal.summary(result, { json: flags.json === true, excerpts: flags.excerpts });
    return exitCodeForResult(result);
  } catch (error) {
    bar?.stop();
    terminal.release();
    return await reportFailure(terminal, io, input, flags, estimating, startedAt, error, signals.exitCode);
  } finally {
    signals.dispose();
  }
}

/**
 * --stop-timeout passed with batches still in flight: the summary still comes out, with the counters at
 * this moment (the batches in flight are neither written nor rejected, so they count as not written,
 * issue 11.16), then the process exits with the signal's code.
 */
function quitAfterStopTimeout(
  terminal: Terminal,
  input: string,
  flags: LoadFlags,
  current: LoadResult | undefined,
  startedAt: Date,
  name: StopSignal,
  exitCode: number,
): void {
  terminal.say(
    `ddb-spread: batches still in flight after ${flags.stopTimeout} s (--stop-timeout); quitting${flags.checkpoint ? `; resume with the same command (checkpoint ${flags.checkpoint})` : ''}\n`,
  );
  if (current) {
    const failure = {
      code: 'ABORTED',
      message: `stopped on ${name}; batches still in flight after ${flags.stopTimeout} s (--stop-timeout) are counted as not written`,
    };
    terminal.summary(current, { json: flags.json === true, excerpts: flags.excerpts, failure });
    if (flags.report) {
      void writeReport(flags.report, input, current, startedAt, failure, flags.excerpts)
        .catch((e: Error) => terminal.say(`ddb-spread: error: ${e.message}\n`))
        .finally(() => process.exit(exitCode));
      return;
    }
  }
  process.exit(exitCode);
}

/** A load or estimate that threw: its summary (when counters meant something), the error, and the exit code. */
async function reportFailure(
  terminal: Terminal,
  io: CliIo,
  input: string,
  flags: LoadFlags,
  estimating: boolean,
  startedAt: Date,
  error: unknown,
  signalExit: number | undefined,
): Promise<number> {
  const loaderError = error instanceof LoaderError ? error : undefined;
  const json = flags.json === true;
  if (loaderError?.code === 'CHECKPOINT_COMPLETE' && loaderError.result) {
    // A rerun of a finished load (a restarted job) reports its outcome again, exit code included.
    const again = loaderError.result;
    terminal.note(`ddb-spread: ${loaderError.message}\n`, { type: 'alreadyComplete', message: loaderError.message });
    terminal.summary(again, { json, excerpts: flags.excerpts, alreadyComplete: true });
    return again.rejected > 0 ? EXIT.REJECTED : EXIT.OK;
  }
  if (loaderError?.result) {
    const failure = { code: loaderError.code, message: loaderError.message };
    if (flags.report && !estimating)
      await writeReport(flags.report, input, loaderError.result, startedAt, failure, flags.excerpts).catch((e: Error) =>
        terminal.say(`ddb-spread: error: ${e.message}\n`),
      );
    terminal.summary(loaderError.result, { json, excerpts: flags.excerpts, failure });
  } else if (json) {
    // Refused before any counter meant anything (a locked or mismatched checkpoint, a bad option): a
    // script reading stdout still gets one JSON object saying why.
    io.stdout.write(`${JSON.stringify({ complete: false, error: { code: loaderError?.code ?? 'BUG', message: (error as Error).message } })}\n`);
  }
  if (loaderError?.code === 'CHECKPOINT_COMPLETE') {
    terminal.say(`ddb-spread: ${loaderError.message}\n`);
    return EXIT.OK;
  }
  if (loaderError?.code === 'ABORTED' && signalExit !== undefined) {
    if (flags.checkpoint) terminal.say(`ddb-spread: stopped; checkpoint ${flags.checkpoint} saved: run the same command to resume\n`);
    return signalExit;
  }
  terminal.say(`ddb-spread: error: ${(error as Error).message}\n`);
  if (flags.verbose && (error as Error).stack) terminal.say(`${(error as Error).stack}\n`);
  return exitCodeForError(loaderError?.code, loaderError?.result);
}

/** The files the CLI reads besides the input, and the report it writes: load() checks them with its own outputs (issue 11.1). */
function callerFiles(flags: LoadFlags, estimating: boolean): CallerFiles {
  const reads = (['schema', 'shardKeysFile', 'config'] as const).flatMap((name) =>
    flags[name] ? [{ option: `--${name.replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`)}`, path: flags[name] }] : [],
  );
  return { reads, writes: flags.report && !estimating ? [{ option: '--report', path: flags.report, code: 'REPORT_UNWRITABLE' as const }] : [] };
}
