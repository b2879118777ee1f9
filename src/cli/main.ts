import { Command, Option } from 'commander';
import { readFileSync } from 'node:fs';
import { LoaderError } from '../shared/errors.js';
import { INPUT_FORMATS } from '../load/options.js';
import { DEFAULT_WINDOW_ROWS, ORDER_MODES } from '../ordering/order.js';
import { EMPTY_POLICIES } from '../typing/typeMap.js';
import { load } from '../load/load.js';
import { estimate } from '../estimating/estimate.js';
import { DEFAULT_PRICES } from '../estimating/costEstimate.js';
import { estimateJson, formatEstimate } from '../reporting/estimateReport.js';
import type { LoadEvent } from '../reporting/events.js';
import type { RateChange } from '../pacing/rateControl.js';
import type { LoadResult } from '../reporting/result.js';
import { fingerprintFile, writeJsonAtomically } from '../reporting/reportFile.js';
import type { CallerFiles } from '../load/outputFiles.js';
import { attachConfigOption } from './config.js';
import { ignoreClosedPipe } from './closedPipes.js';
import { formatProgressLine, progressFields } from '../reporting/logLine.js';
import { createProgressBar } from '../reporting/progressBar.js';
import { formatSummary, summaryJson } from '../reporting/summary.js';
import { formatCount, formatPercent, formatRate, rowExcerpt } from '../reporting/format.js';
import {
  DEFAULT_CONCURRENCY,
  DEFAULT_MAX_ATTEMPTS,
  DEFAULT_REQUEST_TIMEOUT_MS,
  parseColumnsOption,
  parseDelimiterOption,
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
  parseTypesOption,
  toLoadOptions,
  type LoadFlags,
} from './options.js';

import { EXIT, exitCodeForError, exitCodeForResult, exitCodeForUsage } from './exitCodes.js';
import { startupNotices } from './runtimeNotices.js';

/** Exit codes, documented in --help and the README (the table is in exitCodes.ts). */
export { EXIT };

export interface CliIo {
  stdout: NodeJS.WritableStream;
  stderr: NodeJS.WriteStream | NodeJS.WritableStream;
  stdin: NodeJS.ReadableStream;
}

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
  run: (input: string, flags: LoadFlags) => Promise<void>,
  io?: Pick<CliIo, 'stdout' | 'stderr'>,
  runEstimate: (input: string, flags: LoadFlags) => Promise<void> = run,
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
    .addHelpText('after', `
Examples:
  $ ddb-spread load orders.csv --table Orders --types total:N,paid:BOOL
  $ ddb-spread load --help     all options of load, with more examples and the exit codes`);

  const load = program
    .command('load')
    .description('Load a CSV or JSONL file (optionally gzipped, or - for stdin) into a DynamoDB table.')
    .argument('<file>', 'input file, or - to read stdin')
    .requiredOption('-t, --table <name>', 'target table (its key schema is read with DescribeTable)')
    .option('--dry-run', 'write nothing: print the estimate of this load instead (same as ddb-spread estimate)');
  attachConfigOption(addLoadOptions(load).addHelpText('after', LOAD_EXAMPLES).action(run));

  const estimateCommand = program
    .command('estimate')
    .description('Predict a load without writing: duration, cost, hot keys, partitions, shard advice (works offline with --partition-key).')
    .argument('<file>', 'input file, or - to read stdin')
    .option('-t, --table <name>', 'the table, read with DescribeTable unless --partition-key describes it offline (default name: estimate)');
  attachConfigOption(addLoadOptions(estimateCommand).addHelpText('after', ESTIMATE_EXAMPLES).action(runEstimate));
  return program;
}

/** The options load and estimate share: input, typing, order, sharding, rate, AWS, output. */
function addLoadOptions(command: Command): Command {
  return command
    .option('--region <region>', 'AWS region (default: AWS_REGION, AWS_DEFAULT_REGION or the profile)')
    .option('--profile <name>', 'named profile from the AWS config files')
    .option('--endpoint-url <url>', 'DynamoDB endpoint, e.g. http://localhost:8000 for DynamoDB Local')
    .option('--ca-bundle <file>', 'PEM file of CA certificates to trust (a TLS-inspecting proxy); default: AWS_CA_BUNDLE')
    .addOption(new Option('--input-format <format>', 'input format (default: from the file extension)').choices([...INPUT_FORMATS]))
    .option('--delimiter <char>', 'CSV field delimiter; "tab" for tabs (default: "," or tab for .tsv)', parseDelimiterOption)
    .option('--columns <names>', 'attribute names for a CSV file without a header row, comma-separated', parseColumnsOption)
    .option('--types <list>', 'attribute types, e.g. price:N,active:BOOL,tags:SS,meta:JSON,blob:B (repeatable)', parseTypesOption)
    .option('--schema <file>', 'JSON file of attribute types, e.g. {"price":"N"}; --types wins over it')
    .option('--infer', 'infer N, BOOL, M and L from CSV cells, never losing digits ("007" stays a string)')
    .addOption(new Option('--empty <policy>', 'what an empty CSV cell becomes: omit the attribute, NULL, or ""').choices([...EMPTY_POLICIES]).default('omit'))
    .option('--wcu <rate>', 'target write capacity units per second for the whole load, GSIs included: a number, auto (80% of the provisioned WCU, or of an on-demand table\'s warm throughput, growing as DynamoDB allows) or auto:P% (default: no target; throttles slow the load)', parseWcuOption)
    .option('--key-wcu <rate>', 'no partition key is written faster than this, in WCU/s (default 1000, the partition ceiling)', parseRateOption)
    .option('--segment <i/N>', 'load only segment i of N (0-based) of the partition keys: one of N workers over the same file; each key stays on one worker', parseSegmentOption)
    .option('--total-wcu <rate>', 'with --segment: the rate of all N workers together (each takes 1/N), instead of --wcu for this worker', parseRateOption)
    .option('--no-pacing', 'no rate control: no --wcu/--key-wcu pacing and no slowing on throttles, only backoff (as other loaders do; for comparison)')
    .option('-c, --concurrency <n>', `BatchWriteItem calls in flight (default ${DEFAULT_CONCURRENCY}, measured by npm run bench)`, parseIntegerOption(1, 256), DEFAULT_CONCURRENCY)
    .option('--max-attempts <n>', 'sends per item before it is rejected (backoff with full jitter between)', parseIntegerOption(1, 100), DEFAULT_MAX_ATTEMPTS)
    .option('--request-timeout <ms>', 'timeout of one BatchWriteItem call; timed-out calls are retried', parseIntegerOption(100, 600_000), DEFAULT_REQUEST_TIMEOUT_MS)
    .addOption(new Option('--order <mode>', 'write order: round-robin (one write per key in turn), spread (each key evenly over the whole load), window (round-robin within --window rows, streaming), input (as read) (default: round-robin, window for stdin)').choices([...ORDER_MODES]))
    .option('--window <rows>', `rows held by --order window (default ${formatCount(DEFAULT_WINDOW_ROWS)})`, parseIntegerOption(2, 100_000_000))
    .option('--memory <size>', 'memory the write order may hold, e.g. 512MB or 2GB; larger inputs are ordered through temporary files (default 128MB)', parseMemoryOption)
    .option('--temp-dir <dir>', 'folder for those temporary files, removed afterwards (default: the system temporary folder)')
    .option('--shard <rule>', 'add a shard suffix to the partition key: random:N, hash:N[:attribute] (default attribute: the sort key), time:hour|day|month[:attribute]; repeat to combine, in order', parseShardOption)
    .option('--shard-separator <text>', 'between the key and each suffix (default "#")')
    .option('--shard-keys <values>', 'shard only these partition key values (the hot keys), comma-separated (default: every key)', parseColumnsOption)
    .option('--shard-keys-file <file>', 'shard only the partition key values listed in this file, one per line')
    .option('--keep-original-key <attribute>', 'store the unsharded partition key value in this attribute (a GSI on it serves unified reads)')
    .option('--shard-seed <n>', 'seed of random:N, for the same suffixes on a repeated load (default: random, recorded in the manifest)', parseIntegerOption(0, 0xffffffff))
    .option('--shard-manifest <path>', 'where to write the shard manifest (default: <input>.shards.json next to the input, <input>.seg-i-of-N.shards.json with --segment)')
    .option('--rejects <path>', 'reject file, one JSON line per rejected row, locked while the load runs (default: <input>.rejects.jsonl next to the input; .seg-i-of-N.rejects.jsonl with --segment, .dry-run.rejects.jsonl for a dry run)')
    .option('--max-rejects <n>', 'stop the load once this many rows are rejected (default: no limit)', parseIntegerOption(1, Number.MAX_SAFE_INTEGER))
    .option('--strict', 'stop at the first rejected row (same as --max-rejects 1)')
    .option('--json', 'print the summary as one JSON object on stdout')
    .option('--no-progress', 'no progress bar (it is only drawn when stderr is a terminal)')
    .option('-q, --quiet', 'print only errors and the summary')
    .option('--no-excerpts', 'do not show row contents in error messages on the terminal (the reject file keeps them)')
    .option('--verbose', 'show stack traces and retry lines')
    .option('--log-interval <seconds>', 'without a terminal: a progress line every this many seconds (default 10)', parseIntegerOption(1, 86_400), 10)
    .addOption(new Option('--log-format <format>', 'messages on stderr as text, or as one JSON object per line (progress, warnings, rejects, rate, summary)').choices(['text', 'json']).default('text'))
    .option('--checkpoint <path>', 'keep a durable record of progress here; after a crash, kill -9 or a stop, run the same command to resume (file inputs only)')
    .option('--stop-timeout <seconds>', 'on SIGINT/SIGTERM, wait at most this long for the batches in flight (default 30)', parseIntegerOption(1, 3600), 30)
    .option('--report <path>', 'write the final summary as a JSON file (counters, rate, rejects by reason, input fingerprint, version, timings), atomically')
    .option('--partition-key <name:type>', 'estimate offline: the table\'s partition key, e.g. customerId:S (no DescribeTable)', parseKeyOption('--partition-key'))
    .option('--sort-key <name:type>', 'estimate offline: the table\'s sort key, e.g. orderId:S', parseKeyOption('--sort-key'))
    .addOption(new Option('--billing <mode>', 'estimate offline: billing mode (default on-demand)').choices(['provisioned', 'on-demand']))
    .option('--table-wcu <n>', 'estimate offline: provisioned WCU, or an on-demand table\'s warm write throughput', parseRateOption)
    .option('--table-rcu <n>', 'estimate offline: provisioned RCU (they count in the partition formula)', parseIntegerOption(0, 40_000_000))
    .option('--gsi <spec>', 'estimate offline: a GSI as name:pk:TYPE[:sk:TYPE][:ALL|KEYS_ONLY|INCLUDE=a+b] (repeatable)', parseGsiOption)
    .option('--item-count <n>', 'estimate offline: items already in the table (0: a new table, for the Import from S3 note)', parseIntegerOption(0, Number.MAX_SAFE_INTEGER))
    .option('--price-write-request <usd>', `estimate: on-demand price per million write request units (default ${DEFAULT_PRICES.onDemandPerMillionWrites}, ${DEFAULT_PRICES.region}, ${DEFAULT_PRICES.date})`, parsePriceOption)
    .option('--price-wcu-hour <usd>', `estimate: provisioned price per WCU-hour (default ${DEFAULT_PRICES.provisionedPerWcuHour}, ${DEFAULT_PRICES.region}, ${DEFAULT_PRICES.date})`, parsePriceOption);
}

/** Runs the CLI; returns the exit code instead of calling process.exit, so it can be tested in-process. */
export async function main(argv: string[], io: CliIo = { stdout: process.stdout, stderr: process.stderr, stdin: process.stdin }): Promise<number> {
  let exitCode: number = EXIT.OK;
  // A reader that closes early (| head -1) ends that stream only, never the load (issue 11.11).
  ignoreClosedPipe(io.stdout);
  ignoreClosedPipe(io.stderr);
  /** Messages printed while a progress bar is drawn would break it (it restores the cursor it saved): held until it stops. */
  let held: string[] | undefined;
  const say = (text: string) => (held ? held.push(text) : io.stderr.write(text));
  const release = () => {
    const lines = held ?? [];
    held = undefined;
    for (const line of lines) io.stderr.write(line);
  };

  const run = async (input: string, flags: LoadFlags, command: 'load' | 'estimate' = 'load') => {
    const estimating = command === 'estimate' || flags.dryRun === true;
    const controller = new AbortController();
    let signalExit: number | undefined;
    let stopTimer: NodeJS.Timeout | undefined;
    const onSignal = (name: 'SIGINT' | 'SIGTERM') => () => {
      if (signalExit !== undefined) process.exit(name === 'SIGINT' ? EXIT.SIGINT : EXIT.SIGTERM);
      signalExit = name === 'SIGINT' ? EXIT.SIGINT : EXIT.SIGTERM;
      // The stop is news: the progress display ends here, and what it held is printed.
      bar?.stop();
      release();
      say(`\nddb-spread: ${name} received; finishing the batches in flight (press Ctrl-C again to quit at once${flags.checkpoint ? '; the checkpoint stays consistent' : ''})\n`);
      controller.abort(new Error(name));
      // In-flight batches get --stop-timeout seconds; the checkpoint is saved atomically, so quitting
      // after that leaves it consistent (the batches still in flight are sent again on resume).
      const exitCode = signalExit;
      stopTimer = setTimeout(() => {
        say(`ddb-spread: batches still in flight after ${flags.stopTimeout} s (--stop-timeout); quitting${flags.checkpoint ? `; resume with the same command (checkpoint ${flags.checkpoint})` : ''}\n`);
        // The summary still comes out, with the counters at this moment: the batches in flight are
        // neither written nor rejected, so they count as not written (issue 11.16).
        const current = snapshot?.();
        if (current && !estimating) {
          const failure = { code: 'ABORTED', message: `stopped on ${name}; batches still in flight after ${flags.stopTimeout} s (--stop-timeout) are counted as not written` };
          if (flags.json) io.stdout.write(summaryJson(current, failure, flags.excerpts));
          else if (jsonLog) note('', { type: 'summary', ...(JSON.parse(summaryJson(current, failure, flags.excerpts)) as object) });
          else say(formatSummary(current, failure.message, flags.excerpts));
          if (flags.report) {
            void writeReport(flags.report, input, current, startedAt, failure, flags.excerpts)
              .catch((e: Error) => say(`ddb-spread: error: ${e.message}\n`))
              .finally(() => process.exit(exitCode));
            return;
          }
        }
        process.exit(exitCode);
      }, flags.stopTimeout * 1000).unref();
    };
    const sigint = onSignal('SIGINT');
    const sigterm = onSignal('SIGTERM');
    process.on('SIGINT', sigint);
    process.on('SIGTERM', sigterm);

    const tty = 'isTTY' in io.stderr && io.stderr.isTTY === true;
    const jsonLog = flags.logFormat === 'json';
    /** One message on stderr: a text line, or with --log-format json one JSON object with a time. */
    const note = (text: string, fields: Record<string, unknown>) => {
      if (jsonLog) say(`${JSON.stringify({ time: new Date().toISOString(), ...fields })}\n`);
      else say(text);
    };
    if (!flags.quiet) for (const notice of startupNotices(process.env, process.versions.node, flags.maxAttempts)) note(`ddb-spread: ${notice}\n`, { type: 'warning', message: notice });
    const startedAt = new Date();
    let lastLog = performance.now();
    const bar = flags.progress && tty && !flags.quiet && !flags.json ? createProgressBar(io.stderr as NodeJS.WriteStream) : undefined;
    let shownRejects = 0;
    /** The counters so far as a result, once the load has started (for the summary at --stop-timeout). */
    let snapshot: (() => LoadResult) | undefined;
    const onEvent = (event: LoadEvent) => {
      if (event.type === 'started') snapshot = event.snapshot;
      bar?.onEvent(event);
      if (bar && event.type === 'started') held = [];
      if (flags.quiet) return;
      if (event.type === 'resumed') note(`ddb-spread: resuming from checkpoint ${event.checkpoint}: ${formatCount(event.batchesDone)} batches (${formatCount(event.written)} rows) were written before; reading the input again to continue after them\n`, { type: 'resumed', checkpoint: event.checkpoint, batchesDone: event.batchesDone, written: event.written });
      if (event.type === 'warning') note(`ddb-spread: warning: ${event.message}\n`, { type: 'warning', message: event.message });
      if (event.type === 'progress' && !bar && !estimating && performance.now() - lastLog >= flags.logInterval * 1000) {
        lastLog = performance.now();
        say(formatProgressLine(progressFields(event.counters, event.totalBytes, event.elapsedMs, event.rate), jsonLog ? 'json' : 'text', new Date().toISOString()));
      }
      if (event.type === 'ordering' && !bar && !estimating) note(`ddb-spread: read ${formatCount(event.rows)} rows; writing them in ${event.mode} order${event.spilled ? ' (ordered through temporary files)' : ''}\n`, { type: 'ordering', rows: event.rows, mode: event.mode, spilled: event.spilled });
      if (event.type === 'rowRejected' && shownRejects < 10) {
        shownRejects++;
        const { origin, code, message, field } = event.row;
        // Messages quote cell values, so without excerpts only the location and the reason code are shown.
        if (jsonLog) note('', { type: 'rejected', file: origin.file, line: origin.line, code, ...(field === undefined ? {} : { field }), ...(flags.excerpts ? { message } : {}) });
        else if (flags.excerpts) say(`${origin.file}:${origin.line}: ${code}: ${message}\n    ${rowExcerpt(origin.raw)}\n`);
        else say(`${origin.file}:${origin.line}: ${code}${field === undefined ? '' : ` (field "${field}")`}\n`);
        if (shownRejects === 10) note('ddb-spread: further rejected rows go to the reject file only\n', { type: 'message', message: 'further rejected rows go to the reject file only' });
      }
      if (event.type === 'rateChosen' && !estimating) note(`ddb-spread: rate: ${event.reason}${event.keyWcu === undefined ? '' : `; no partition key above ${formatRate(event.keyWcu)} WCU/s`}\n`, { type: 'rate', reason: event.reason, targetWcu: event.targetWcu, keyWcu: event.keyWcu });
      if (event.type === 'rateChanged' && !bar && (event.change.scope === 'table' || flags.verbose)) note(`ddb-spread: ${describeRateChange(event.change)}\n`, { type: 'rateChanged', scope: event.change.scope, toWcu: Math.round(event.change.toWcu), ...('reason' in event.change ? { reason: event.change.reason } : {}) });
      if (event.type === 'retrying' && flags.verbose) say(`ddb-spread: retrying ${event.items} items (${event.reason}), attempt ${event.attempt + 1} in ${event.delayMs} ms\n`);
    };

    try {
      if (estimating) {
        const result = await estimate(await toEstimateOptions(input, flags), { signal: controller.signal, onEvent, stdin: io.stdin as never, files: callerFiles(flags, true) });
        bar?.stop();
      release();
        const color = 'isTTY' in io.stdout && (io.stdout as NodeJS.WriteStream).isTTY === true && !process.env['NO_COLOR'];
        io.stdout.write(flags.json ? estimateJson(result, { excerpts: flags.excerpts }) : formatEstimate(result, { color, excerpts: flags.excerpts }));
        exitCode = EXIT.OK;
        return;
      }
      const options = await toLoadOptions(input, flags);
      const result = await load(options, { signal: controller.signal, onEvent, stdin: io.stdin as never, files: callerFiles(flags, false) });
      bar?.stop();
      release();
      if (flags.report) await writeReport(flags.report, input, result, startedAt, undefined, flags.excerpts);
      if (flags.json) io.stdout.write(summaryJson(result, undefined, flags.excerpts));
      else if (jsonLog) note('', { type: 'summary', ...(JSON.parse(summaryJson(result, undefined, flags.excerpts)) as object) });
      else say(formatSummary(result, undefined, flags.excerpts));
      exitCode = exitCodeForResult(result);
    } catch (error) {
      bar?.stop();
      release();
      const loaderError = error instanceof LoaderError ? error : undefined;
      const stoppedBySignal = loaderError?.code === 'ABORTED' && signalExit !== undefined;
      if (loaderError?.code === 'CHECKPOINT_COMPLETE' && loaderError.result) {
        // A rerun of a finished load (a restarted job) reports its outcome again, exit code included.
        const again = loaderError.result;
        note(`ddb-spread: ${loaderError.message}\n`, { type: 'alreadyComplete', message: loaderError.message });
        if (flags.json) io.stdout.write(`${JSON.stringify({ ...(JSON.parse(summaryJson(again, undefined, flags.excerpts)) as object), alreadyComplete: true })}\n`);
        else if (jsonLog) note('', { type: 'summary', ...(JSON.parse(summaryJson(again, undefined, flags.excerpts)) as object), alreadyComplete: true });
        else say(formatSummary(again, undefined, flags.excerpts));
        exitCode = again.rejected > 0 ? EXIT.REJECTED : EXIT.OK;
        return;
      }
      if (loaderError?.result) {
        const failure = { code: loaderError.code, message: loaderError.message };
        if (flags.report && !estimating) await writeReport(flags.report, input, loaderError.result, startedAt, failure, flags.excerpts).catch((e: Error) => say(`ddb-spread: error: ${e.message}\n`));
        if (flags.json) io.stdout.write(summaryJson(loaderError.result, failure, flags.excerpts));
        else if (jsonLog) note('', { type: 'summary', ...(JSON.parse(summaryJson(loaderError.result, failure, flags.excerpts)) as object) });
        else say(formatSummary(loaderError.result, loaderError.message, flags.excerpts));
      } else if (flags.json) {
        // Refused before any counter meant anything (a locked or mismatched checkpoint, a bad option): a
        // script reading stdout still gets one JSON object saying why.
        io.stdout.write(`${JSON.stringify({ complete: false, error: { code: loaderError?.code ?? 'BUG', message: (error as Error).message } })}\n`);
      }
      if (loaderError?.code === 'CHECKPOINT_COMPLETE') {
        say(`ddb-spread: ${loaderError.message}\n`);
        exitCode = EXIT.OK;
        return;
      }
      if (stoppedBySignal) {
        exitCode = signalExit!;
        if (flags.checkpoint) say(`ddb-spread: stopped; checkpoint ${flags.checkpoint} saved: run the same command to resume\n`);
      } else {
        say(`ddb-spread: error: ${(error as Error).message}\n`);
        if (flags.verbose && (error as Error).stack) say(`${(error as Error).stack}\n`);
        exitCode = exitCodeForError(loaderError?.code, loaderError?.result);
      }
    } finally {
      // main() runs in-process in tests and for library callers: no exit may fire after it returned.
      clearTimeout(stopTimer);
      process.off('SIGINT', sigint);
      process.off('SIGTERM', sigterm);
    }
  };

  const program = buildProgram(run, io, (input, flags) => run(input, flags, 'estimate'));
  try {
    await program.parseAsync(argv);
  } catch (error) {
    const { exitCode: code, code: reason } = error as { exitCode?: unknown; code?: unknown };
    return typeof code === 'number' ? exitCodeForUsage(code, typeof reason === 'string' ? reason : undefined) : EXIT.FATAL;
  }
  return exitCode;
}

/** --report: the summary, the input's fingerprint, the version and the timings, written atomically. */
async function writeReport(path: string, input: string, result: LoadResult, startedAt: Date, error?: { code: string; message: string }, excerpts = true): Promise<void> {
  const summary = JSON.parse(summaryJson(result, error, excerpts)) as Record<string, unknown>;
  await writeJsonAtomically(
    path,
    {
      reportVersion: 1,
      ddbSpreadVersion: packageVersion(),
      startedAt: startedAt.toISOString(),
      finishedAt: new Date().toISOString(),
      ...summary,
      inputFingerprint: (await fingerprintFile(input).catch(() => undefined)) ?? null,
    },
    '--report',
  );
}

/** The files the CLI reads besides the input, and the report it writes: load() checks them with its own outputs (issue 11.1). */
function callerFiles(flags: LoadFlags, estimating: boolean): CallerFiles {
  const reads = (['schema', 'shardKeysFile', 'config'] as const).flatMap((name) => (flags[name] ? [{ option: `--${name.replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`)}`, path: flags[name] }] : []));
  return { reads, writes: flags.report && !estimating ? [{ option: '--report', path: flags.report, code: 'REPORT_UNWRITABLE' as const }] : [] };
}

function describeRateChange(change: RateChange): string {
  const to = formatCount(change.toWcu);
  if (change.scope === 'key') return `throttled on one partition key; that key slowed to ${to} WCU/s`;
  if (change.kind === 'restored') return `errors independent of the rate: rate kept at ${to} WCU/s (throttled ${formatPercent(change.lowShare)} at the lower rate, ${formatPercent(change.highShare)} at this one; retried)`;
  const from = change.fromWcu === undefined ? '' : `from ${formatCount(change.fromWcu)} `;
  if (change.reason === 'probe') return `throttled; rate cut ${from}to ${to} WCU/s to test whether the throttles follow the rate`;
  return `throttles rose with the rate: capacity; rate cut ${from}to ${to} WCU/s (it grows back after 2 s without throttles)`;
}

function packageVersion(): string {
  try {
    return (JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { version: string }).version;
  } catch {
    return 'unknown';
  }
}
