import type { LoaderError } from '../shared/errors.js';
import type { VerifyOptions } from '../verifying/verify.js';
import { EXIT, exitCodeForError } from './exitCodes.js';
import { toLoadOptions, type LoadFlags } from './options.js';
import { handleStopSignals } from './signals.js';
import type { CliIo } from './terminal.js';
import { testSeamsFromEnv } from './testSeams.js';
import { writeJsonAtomically } from '../files/privateFiles.js';
import { packageVersion } from '../load/toolVersion.js';
import type { VerifyProgressEvent } from '../verifying/verify.js';

/** The flags of `ddb-spread verify`: every flag of load, and its own. */
export interface VerifyFlags extends LoadFlags {
  rcu?: number | string;
  keyRcu?: number;
  consistentRead: boolean;
  sample?: number;
  differences?: string;
  scan?: number | 'auto';
}

/** Maps verify's flags to verify() options: the load's, as load would take them, and the verify's own. */
export async function toVerifyOptions(inputs: string | string[], flags: VerifyFlags): Promise<VerifyOptions> {
  const options: VerifyOptions = await toLoadOptions(inputs, { ...flags, dryRun: false });
  if (flags.rcu !== undefined) options.rcu = flags.rcu;
  if (flags.keyRcu !== undefined) options.keyRcu = flags.keyRcu;
  if (!flags.consistentRead) options.consistentRead = false;
  if (flags.sample !== undefined) options.sample = flags.sample;
  if (flags.differences) options.differencesPath = flags.differences;
  if (!flags.excerpts) options.excerpts = false;
  if (flags.scan !== undefined) options.scanSegments = flags.scan;
  return options;
}

/** `ddb-spread verify`: runs verify(), prints its summary (or JSON), and returns the exit code (0 all matched, 5 differences). */
export async function runVerify(io: CliIo, inputs: string | string[], flags: VerifyFlags): Promise<number> {
  const controller = new AbortController();
  const signals = handleStopSignals(
    flags.stopTimeout,
    (name) => {
      io.stderr.write(`\nddb-spread: ${name} received; stopping the verify\n`);
      controller.abort(new Error(name));
    },
    (_name, code) => process.exit(code),
  );
  const startedAt = new Date();
  let progress: ProgressLine | undefined;
  try {
    const options = await toVerifyOptions(inputs, flags);
    const [{ verify }, { formatVerify, formatVerifyProgress, verifyJson }] = await Promise.all([
      import('../verifying/verify.js'),
      import('../verifying/verifyReport.js'),
    ]);
    progress = flags.quiet || !flags.progress ? undefined : new ProgressLine(io, flags, formatVerifyProgress);
    const result = await verify(options, {
      signal: controller.signal,
      onEvent: (event) => {
        if (event.type === 'warning' && !flags.quiet) io.stderr.write(`ddb-spread: warning: ${event.message}\n`);
      },
      ...(progress ? { onProgress: progress.update } : {}),
      ...testSeamsFromEnv(process.env),
    });
    progress?.end();
    const json = verifyJson(result, { excerpts: flags.excerpts });
    if (flags.report) await writeVerifyReport(flags.report, JSON.parse(json) as Record<string, unknown>, startedAt);
    io.stdout.write(flags.json ? json : formatVerify(result, { excerpts: flags.excerpts }));
    return result.differing === 0 ? EXIT.OK : EXIT.DIFFERENT;
  } catch (error) {
    progress?.end();
    const loaderError = (error as Partial<LoaderError>).code !== undefined ? (error as LoaderError) : undefined;
    if (flags.report)
      await writeVerifyReport(
        flags.report,
        { complete: false, error: { code: loaderError?.code ?? 'BUG', message: (error as Error).message } },
        startedAt,
      ).catch((failure: unknown) => io.stderr.write(`ddb-spread: error: ${(failure as Error).message}\n`));
    if (flags.json) io.stdout.write(`${JSON.stringify({ complete: false, error: { code: loaderError?.code ?? 'BUG', message: (error as Error).message } })}\n`);
    io.stderr.write(`ddb-spread: error: ${(error as Error).message}\n`);
    if (flags.verbose && (error as Error).stack) io.stderr.write(`${(error as Error).stack}\n`);
    if (loaderError?.code === 'ABORTED' && signals.exitCode !== undefined) return signals.exitCode;
    return exitCodeForError(loaderError?.code);
  } finally {
    signals.dispose();
  }
}

/**
 * --report: the verify's --json object with the version and the timings, written atomically and private
 * (0600); a verify that failed or was stopped writes `complete: false` and its error.
 */
async function writeVerifyReport(path: string, summary: Record<string, unknown>, startedAt: Date): Promise<void> {
  const finishedAt = new Date();
  await writeJsonAtomically(
    path,
    {
      command: 'verify',
      version: packageVersion(),
      startedAt: startedAt.toISOString(),
      finishedAt: finishedAt.toISOString(),
      durationMs: finishedAt.getTime() - startedAt.getTime(),
      ...summary,
    },
    '--report',
  );
}

/**
 * The verify's progress on stderr: on a terminal one line redrawn every second; otherwise (a log) a line
 * every --log-interval seconds, as text or, with --log-format json, one JSON object per line.
 */
class ProgressLine {
  #last = 0;
  #drawn = false;
  readonly #tty: boolean;
  readonly #everyMs: number;

  constructor(
    private readonly io: CliIo,
    private readonly flags: Pick<VerifyFlags, 'logInterval' | 'logFormat'>,
    private readonly format: (p: VerifyProgressEvent) => string,
  ) {
    this.#tty = (io.stderr as Partial<NodeJS.WriteStream>).isTTY === true && flags.logFormat !== 'json';
    this.#everyMs = this.#tty ? 1000 : Math.max(1, flags.logInterval) * 1000;
  }

  update = (p: VerifyProgressEvent): void => {
    const now = performance.now();
    if (p.phase !== 'done' && now - this.#last < this.#everyMs && this.#last !== 0) return;
    if (p.phase === 'done' && !this.#tty) return;
    this.#last = now;
    if (this.flags.logFormat === 'json') this.io.stderr.write(`${JSON.stringify({ type: 'verifyProgress', ...p })}\n`);
    else if (this.#tty) {
      this.io.stderr.write(`\r\x1b[2K${this.format(p)}`);
      this.#drawn = true;
    } else this.io.stderr.write(`ddb-spread: ${this.format(p)}\n`);
  };

  end(): void {
    if (this.#drawn) this.io.stderr.write('\n');
    this.#drawn = false;
  }
}
