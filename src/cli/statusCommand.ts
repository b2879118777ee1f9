import type { Command } from 'commander';
import type { StatusReport } from '../load/readStatus.js';
import type { WorkerStatus } from '../load/loadStatus.js';
import { LoaderError, type LoaderErrorCode } from '../shared/errors.js';
import { formatBytes, formatCount, formatDuration } from '../shared/format.js';
import { EXIT, exitCodeForError, PERMANENT_EXIT_CODES } from './exitCodes.js';
import type { CliIo } from './terminal.js';

interface StatusFlags {
  json?: boolean;
  table?: string;
  region?: string;
  profile?: string;
  s3EndpointUrl?: string;
  s3PathStyle?: boolean;
  caBundle?: string;
}

const STATUS_HELP = `
Reads the listing the workers share (--listing of their load) and the state each worker keeps beside it
(<listing>.worker-<i>-of-<N>.json, written when it starts, every 10 s, and when it ends). Writes nothing.

Examples:
  $ ddb-spread status /state/orders.listing.json
  $ ddb-spread status s3://migrations/orders/listing.json --json
  $ ddb-spread status /state/orders.listing.json --table orders-v2   (the same listing loaded again into orders-v2)

Exit codes: 0 complete (every worker read its share to the end, every row written); 2 every worker
finished, rows were rejected (they are in the reject files named); 75 not complete yet (a worker not
started, running, stopped or silent: start the ones named again, they resume from their checkpoints);
64 usage; 66 no listing there.`;

/** Adds `status` to the program; `done` receives its exit code. */
export function addStatusCommand(program: Command, io: Pick<CliIo, 'stdout' | 'stderr'>, done: (code: number) => void): void {
  program
    .command('status')
    .description('Say whether a load run by several workers (--segment, --listing) is complete: totals, rate, each worker, every reject file.')
    .argument('<listing>', "the workers' --listing: a file on their shared volume, or s3://bucket/key")
    .option('--json', 'print the status as one JSON object')
    .option('--table <name>', 'the load into this table (one listing can serve loads into several); default: the table of the worker started last')
    .option('--region <region>', 'AWS region of the S3 listing')
    .option('--profile <name>', 'AWS profile for the S3 listing')
    .option('--s3-endpoint-url <url>', 'S3 endpoint (an S3-compatible server)')
    .option('--s3-path-style', 'bucket in the path, for S3-compatible servers')
    .option('--ca-bundle <file>', 'PEM file of CA certificates to trust for S3')
    .addHelpText('after', STATUS_HELP)
    .action(async (listing: string, flags: StatusFlags) => done(await runStatus(io, listing, flags)));
}

async function runStatus(io: Pick<CliIo, 'stdout' | 'stderr'>, listing: string, flags: StatusFlags): Promise<number> {
  try {
    // Loaded when the command runs: the other commands, --help and --version never need it.
    const { readStatus } = await import('../load/readStatus.js');
    const report = await readStatus(
      listing,
      {
        region: flags.region,
        profile: flags.profile,
        endpoint: flags.s3EndpointUrl,
        forcePathStyle: flags.s3PathStyle === true,
        caBundle: flags.caBundle,
      },
      Date.now,
      flags.table,
    );
    io.stdout.write(flags.json ? `${JSON.stringify(report)}\n` : statusText(report));
    return statusExitCode(report);
  } catch (error) {
    io.stderr.write(`ddb-spread: error: ${(error as Error).message}\n`);
    return exitCodeForError(error instanceof LoaderError ? error.code : undefined);
  }
}

/**
 * 0 complete; 2 finished with rejected rows; a worker's permanent code when one stopped on what no retry
 * fixes (a bad option, a changed input...); 75 otherwise: not complete yet, and starting the workers named
 * again gets it there.
 */
export function statusExitCode(report: Pick<StatusReport, 'complete' | 'finished' | 'workers'>): number {
  if (report.complete) return EXIT.OK;
  if (report.finished) return EXIT.REJECTED;
  return report.workers.map(permanentCode).find((code) => code !== undefined) ?? EXIT.TEMP_FAIL;
}

/** The exit code of a worker that stopped on what no retry fixes; undefined otherwise. */
function permanentCode(w: WorkerStatus): number | undefined {
  if (w.state !== 'stopped' || w.doc?.stopCode === undefined) return undefined;
  const code = exitCodeForError(w.doc.stopCode as LoaderErrorCode);
  return (PERMANENT_EXIT_CODES as readonly number[]).includes(code) ? code : undefined;
}

/** The status for a person. Pure. */
export function statusText(report: StatusReport): string {
  const verdict = report.complete ? 'COMPLETE' : report.finished ? 'FINISHED WITH REJECTED ROWS' : 'NOT COMPLETE';
  const running = report.workers.filter((w) => w.state === 'running').length;
  const reasons = Object.entries(report.rejectedByReason)
    .map(([reason, n]) => `${reason} ${formatCount(n)}`)
    .join(', ');
  const lines = [
    `ddb-spread: load of ${report.listing}${report.table !== undefined ? ` into ${report.table}` : ''} (listed ${report.listedAt}: ${formatCount(report.parts)} parts, ${formatBytes(report.bytes)}; ${report.workers.length} workers): ${verdict}`,
    `  rows read     ${formatCount(report.rows)}`,
    `  written       ${formatCount(report.written)}`,
    `  superseded    ${formatCount(report.superseded)}`,
    `  rejected      ${formatCount(report.rejected)}${reasons ? `  (${reasons})` : ''}`,
    ...(report.skippedExpired > 0 ? [`  expired       ${formatCount(report.skippedExpired)}  (--skip-expired: TTL past at the load time)`] : []),
    ...(report.conditionFailed > 0
      ? [`  condition failed ${formatCount(report.conditionFailed)}  (the table kept its item: --if-not-exists, --if-newer)`]
      : []),
    `  not written   ${formatCount(report.notWritten)}`,
    ...(report.skippedByTransform !== undefined
      ? [
          `  transform     ${formatCount(report.skippedByTransform)} rows skipped (neither written nor rejected), ${formatCount(report.splitWrites ?? 0)} extra items of split rows (in rows read)`,
        ]
      : []),
    `  rate          ${formatCount(Math.round(report.wcu))} WCU/s  (${running} of ${report.workers.length} workers running)`,
    ...report.workers.map((w) => `  worker ${w.segment.padEnd(7)}${workerLine(w)}`),
    ...report.rejectFiles.map((f) => `  rejects       ${f.path}  (worker ${f.segment}: ${formatCount(f.rejected)} rows)`),
    ...(report.conditionFailuresFiles ?? []).map((f) => `  condition failures ${f.path}  (worker ${f.segment}: ${formatCount(f.conditionFailed)} rows)`),
  ];
  return `${lines.join('\n')}\n`;
}

function workerLine(w: WorkerStatus): string {
  const doc = w.doc;
  if (!doc)
    return w.otherTable !== undefined
      ? `not started into this table: its state is of a load of this listing into ${w.otherTable}; start it with this load's --table`
      : 'not started: start it (its checkpoint, if it has one, resumes it)';
  const counts = `${formatCount(doc.written)} written, ${formatCount(doc.rejected)} rejected`;
  const share =
    doc.division?.by === 'parts' || doc.division?.by === 'chain' || doc.division?.by === 'ranges'
      ? `; its share ${formatCount(doc.division.parts)} ${doc.division.by === 'ranges' ? 'byte ranges' : 'parts'}, ${formatBytes(doc.division.bytes)}`
      : '';
  // A chain's worker: how far it has got (one waiting at the barrier between exports is running).
  const chain =
    doc.settledExports !== undefined && w.state === 'running'
      ? `; exports written: the first ${formatCount(doc.settledExports)}${doc.barrier ? `; waiting for ${doc.barrier.waitingFor.length === 1 ? 'worker' : 'workers'} ${doc.barrier.waitingFor.join(', ')} to write them before export ${doc.barrier.next + 1}` : ''}`
      : '';
  const heard = formatDuration((w.quietMs ?? 0) / 1000);
  switch (w.state) {
    case 'finished':
      return `finished${doc.complete ? ', complete' : ' with rejected rows'}: ${counts}${share}`;
    case 'running':
      return `running on ${doc.host}: ${counts}, heard ${heard} ago${share}${chain}`;
    case 'silent':
      return `silent for ${heard} (said it was running on ${doc.host}): killed or its machine lost; start it again, it resumes from its checkpoint`;
    default:
      return permanentCode(w) !== undefined
        ? `stopped (${doc.stopCode}) after ${counts}: no retry fixes this; its log says what to change`
        : `stopped${doc.stopCode ? ` (${doc.stopCode})` : ''} after ${counts}: start it again, it resumes from its checkpoint`;
  }
}
