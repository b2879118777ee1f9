import { addStatusCommand } from './statusCommand.js';
import { Command } from 'commander';
import { LoaderError } from '../shared/errors.js';
import { testSeamsFromEnv } from './testSeams.js';
import type { LoadResult } from '../reporting/result.js';
import type { LoadEvent } from '../reporting/events.js';
import { heapForOrder } from './heap.js';
import type { CallerFiles } from '../load/outputFiles.js';
import { attachConfigOption } from './config.js';
import { ignoreClosedPipe } from './closedPipes.js';
import { createProgressBar } from '../reporting/progressBar.js';
import { toEstimateOptions, toLoadOptions, type LoadFlags } from './options.js';
import { addTableOptions, tableHelp } from './commandOptions.js';

import { EXIT, exitCodeForError, exitCodeForEstimate, exitCodeForResult, exitCodeForUsage } from './exitCodes.js';
import { startupNotices } from './runtimeNotices.js';
import { stdinHint, terminalStdinNote } from './stdinHint.js';
import { createEventRenderer } from './renderEvents.js';
import { addReadCommands } from './readCommands.js';
import { packageVersion } from '../load/toolVersion.js';
import { readEstimateBeside, wantsReport, writeReport, type ReportPaths } from './report.js';
import { handleStopSignals, type StopSignal } from './signals.js';
import { Terminal, type CliIo } from './terminal.js';
import { runVerify, type VerifyFlags } from './verifyCommand.js';

/** Exit codes, documented in --help and docs/REFERENCE.md (the table is in exitCodes.ts). */
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

Exit codes (sysexits.h; docs/REFERENCE.md has the full table):
  0    every row was written (or superseded by a later row with the same key)
  2    the load finished, but some rows were rejected (see the reject file)
  3    --max-cost: refused before the first write (the first rows price the input above it); 4: stopped by it
  75   worth retrying later: endpoint unreachable, throttled past --max-attempts, credentials not yet available
  64 usage, 65 bad data or --max-rejects, 66 input missing, 73 cannot write an output file,
  77 access denied, 78 no such table, no credentials, an endpoint that is not DynamoDB, or a checkpoint
  of another load: no retry will help
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

Exit codes (load --dry-run too): 0 estimated, no row would be rejected; 2 estimated, but rows would be
rejected, as the load would exit (see the report and the reject file); 3 --max-cost would refuse or stop
the load; could not estimate: the codes of load (64 usage, 66 input missing, 75 worth retrying, 77 access
denied, 78 no such table, 1 other).`;

const VERIFY_EXAMPLES = `
Examples:
  # After a load: the same command line, verify instead of load
  $ ddb-spread verify orders.csv --table Orders --types total:N --rcu 200

  # A load run from a job file, checked with it; 1% of the keys, the same ones on every run
  $ ddb-spread verify --config job.json --sample 1% --json

Exit codes: 0 every key checked is as the input leaves it; 5 some are not (see the differences file,
in the reject file's format); otherwise the codes of load (64 usage, 66 input missing, 75 worth retrying,
77 access denied, 78 no such table, 1 other). docs/VERIFY.md says what is compared.`;

/**
 * The commander program. Output and exit handling are set on the root before any command is added,
 * because commander copies them into each command when it is created.
 */
export function buildProgram(
  run: (input: Inputs, flags: LoadFlags) => Promise<void>,
  io?: Pick<CliIo, 'stdout' | 'stderr'>,
  runEstimate: (input: Inputs, flags: LoadFlags) => Promise<void> = run,
  verify: (input: Inputs, flags: VerifyFlags) => Promise<void> = run,
): Command {
  const program = new Command('ddb-spread');
  if (io) {
    program.exitOverride();
    program.configureOutput({ writeOut: (s) => void io.stdout.write(s), writeErr: (s) => void io.stderr.write(s) });
  }
  program
    .description(
      'Bulk-load CSV, JSON Lines, Parquet, Ion and DynamoDB exports (files, folders, globs, S3, stdin) into Amazon DynamoDB without melting a partition.',
    )
    .version(packageVersion(), '-V, --version')
    .showHelpAfterError('(add --help for usage and examples)')
    // Set before the commands are added, which copy it: defaults from the option table, printed once.
    .configureHelp(tableHelp)
    .addHelpText(
      'after',
      `
Examples:
  $ ddb-spread load orders.csv --table Orders --types total:N,paid:BOOL
  $ ddb-spread load --help     all options of load, with more examples and the exit codes`,
    );

  const load = program
    .command('load')
    .description(
      'Load CSV, JSON Lines, Parquet or Ion files (gzip, zstd or bzip2 compressed, or - for stdin), folders, globs, S3 objects or DynamoDB exports into a DynamoDB table.',
    )
    .argument('<file...>', INPUTS_HELP);
  attachConfigOption(addTableOptions(load, 'load').addHelpText('after', LOAD_EXAMPLES).action(oneOrMany(run)));

  const estimateCommand = program
    .command('estimate')
    .description('Predict a load without writing: duration, cost, hot keys, partitions, shard advice (works offline with --partition-key).')
    .argument('<file...>', INPUTS_HELP);
  attachConfigOption(addTableOptions(estimateCommand, 'estimate').addHelpText('after', ESTIMATE_EXAMPLES).action(oneOrMany(runEstimate)));

  const verifyCommand = program
    .command('verify')
    .description(
      "Check a table against what loading the input would leave: every key read back (BatchGetItem, paced by --rcu), attribute by attribute; takes the load's own options or --config. Never writes.",
    )
    .argument('<file...>', 'the inputs the load read, given as the load was given them');
  attachConfigOption(
    addTableOptions(verifyCommand, 'verify')
      .addHelpText('after', VERIFY_EXAMPLES)
      .action((inputs: string[], flags: VerifyFlags) => verify(inputs.length === 1 ? inputs[0]! : inputs, flags)),
  );
  return program;
}

/** One input as a string (as before several inputs were accepted), several as a list. */
export type Inputs = string | string[];

const INPUTS_HELP =
  'input files, folders, globs, s3://bucket/key or s3://bucket/prefix/, DynamoDB export folders (local or S3), read as one load; or - for stdin';

function oneOrMany(run: (input: Inputs, flags: LoadFlags) => Promise<void>) {
  return (inputs: string[], flags: LoadFlags) => run(inputs.length === 1 ? inputs[0]! : inputs, flags);
}

/** The inputs in one string, for messages and --report. */
const inputsText = (input: Inputs) => (typeof input === 'string' ? input : input.join(' '));

/** `ddb-spread verify` with the load's arguments, each quoted for a POSIX shell where it needs it. */
export function verifyCommandLine(loadArgs: readonly string[]): string {
  const quoted = loadArgs.map((arg) => (/^[A-Za-z0-9_./:=,@%+-]+$/.test(arg) ? arg : `'${arg.replace(/'/g, `'\\''`)}'`));
  return ['ddb-spread', 'verify', ...quoted].join(' ');
}

/** Runs the CLI; returns the exit code instead of calling process.exit, so it can be tested in-process. */
export async function main(argv: string[], io: CliIo = { stdout: process.stdout, stderr: process.stderr, stdin: process.stdin }): Promise<number> {
  let exitCode: number = EXIT.OK;
  // A reader that closes early (| head -1) ends that stream only, never the load.
  ignoreClosedPipe(io.stdout);
  ignoreClosedPipe(io.stderr);
  const run = async (input: Inputs, flags: LoadFlags, command: 'load' | 'estimate') => {
    exitCode = await runCommand(io, input, flags, command);
    // A load that finished (clean or with rejects) says how to check the table against its input.
    const plainText = !flags.json && !flags.quiet && flags.logFormat !== 'json';
    if (command === 'load' && !flags.dryRun && plainText && (exitCode === EXIT.OK || exitCode === EXIT.REJECTED) && argv[2] === 'load')
      io.stderr.write(`ddb-spread: to check the table against the input: ${verifyCommandLine(argv.slice(3))}\n`);
  };
  const program = buildProgram(
    (input, flags) => run(input, flags, 'load'),
    io,
    (input, flags) => run(input, flags, 'estimate'),
    async (input, flags) => {
      exitCode = await runVerify(io, input, flags);
    },
  );
  addReadCommands(program, io, (code) => {
    exitCode = code;
  });
  addStatusCommand(program, io, (code) => {
    exitCode = code;
  });
  try {
    await program.parseAsync(argv);
  } catch (error) {
    const { exitCode: code, code: reason } = error as { exitCode?: unknown; code?: unknown };
    const hint =
      reason === 'commander.missingArgument'
        ? stdinHint(
            argv.slice(2).find((arg) => !arg.startsWith('-')),
            io.stdin,
          )
        : undefined;
    if (hint) io.stderr.write(hint);
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
  // --compare-estimate is read before the load, once known good.
  let reports: ReportPaths = { report: flags.report, htmlReport: flags.htmlReport };
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
    (name, code) => quitAfterStopTimeout(terminal, input, flags, reports, estimating ? undefined : renderer.snapshot(), startedAt, name, code),
  );
  if (!flags.quiet)
    for (const notice of startupNotices(process.env, process.versions.node, flags.maxAttempts))
      terminal.note(`ddb-spread: ${notice}\n`, { type: 'warning', message: notice });
  const typed = flags.quiet ? undefined : terminalStdinNote(inputs, io.stdin);
  if (typed) terminal.note(`ddb-spread: ${typed}\n`, { type: 'message', message: typed });
  const onEvent = (event: LoadEvent) => {
    // A global order holds much of the input: V8's own heap growth suits it better (src/cli/heap.ts).
    if (event.type === 'reading') heapForOrder(event.order);
    renderer.onEvent(event);
  };
  const deps = { signal: controller.signal, onEvent, stdin: io.stdin as never, files: callerFiles(flags, estimating), ...testSeamsFromEnv(process.env) };
  try {
    // What the command runs is loaded here, not at start-up: --version, --help and a usage error need
    // none of it, and a load never needs the estimate's code.
    if (estimating) {
      const options = await toEstimateOptions(inputs, flags);
      const [{ estimate }, { estimateJson, formatEstimate }] = await Promise.all([
        import('../estimating/estimate.js'),
        import('../estimating/estimateReport.js'),
      ]);
      const result = await estimate(options, deps);
      bar?.stop();
      terminal.release();
      const color = 'isTTY' in io.stdout && (io.stdout as NodeJS.WriteStream).isTTY === true && !process.env['NO_COLOR'];
      io.stdout.write(flags.json ? estimateJson(result, { excerpts: flags.excerpts }) : formatEstimate(result, { color, excerpts: flags.excerpts }));
      // --max-cost: the load this estimate prices would be refused or stopped by its cost guard.
      if (result.costGuard?.over) return EXIT.COST_REFUSED;
      return exitCodeForEstimate(result.input.rejected, { acceptRejects: flags.acceptRejects });
    }
    if (flags.compareEstimate) reports = { ...reports, estimate: await readEstimateBeside(flags.compareEstimate) };
    const options = await toLoadOptions(inputs, flags);
    // --max-cost with --compare-estimate: the estimate's count of every row's units is the guard's first word.
    if (options.maxCostUsd !== undefined && reports.estimate)
      options.maxCostEstimate = { writeUnits: reports.estimate.writeUnits, source: flags.compareEstimate! };
    const { load } = await import('../load/load.js');
    const result = await load(options, deps);
    bar?.stop();
    terminal.release();
    if (wantsReport(reports)) await writeReport(reports, input, result, startedAt, undefined, flags.excerpts);
    terminal.summary(result, { json: flags.json === true, excerpts: flags.excerpts });
    return exitCodeForResult(result, { acceptRejects: flags.acceptRejects });
  } catch (error) {
    bar?.stop();
    terminal.release();
    return await reportFailure(terminal, io, input, flags, reports, estimating, startedAt, error, signals.exitCode);
  } finally {
    signals.dispose();
  }
}

/**
 * --stop-timeout passed with batches still in flight: the summary still comes out, with the counters at
 * this moment (the batches in flight are neither written nor rejected, so they count as not written),
 * on stdout under --json too, then the process exits with the signal's code.
 */
function quitAfterStopTimeout(
  terminal: Terminal,
  input: string,
  flags: LoadFlags,
  reports: ReportPaths,
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
    if (wantsReport(reports)) {
      void writeReport(reports, input, current, startedAt, failure, flags.excerpts)
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
  reports: ReportPaths,
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
    return exitCodeForResult({ ...again, checkpointPath: flags.checkpoint }, { acceptRejects: flags.acceptRejects });
  }
  if (loaderError?.result) {
    const failure = { code: loaderError.code, message: loaderError.message };
    if (wantsReport(reports) && !estimating)
      await writeReport(reports, input, loaderError.result, startedAt, failure, flags.excerpts).catch((e: Error) =>
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

/** The files the CLI reads besides the input, and the report it writes: load() checks them with its own outputs, so no output overwrites an input. */
function callerFiles(flags: LoadFlags, estimating: boolean): CallerFiles {
  const reads = (['schema', 'shardKeysFile', 'config', 'compareEstimate'] as const).flatMap((name) =>
    flags[name] ? [{ option: `--${name.replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`)}`, path: flags[name] }] : [],
  );
  const reports = [
    { option: '--report', path: flags.report },
    { option: '--html-report', path: flags.htmlReport },
  ].flatMap(({ option, path }) => (path !== undefined && !estimating ? [{ option, path, code: 'REPORT_UNWRITABLE' as const }] : []));
  return { reads, writes: reports };
}
