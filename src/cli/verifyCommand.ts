import type { LoaderError } from '../shared/errors.js';
import type { VerifyOptions } from '../verifying/verify.js';
import { EXIT, exitCodeForError } from './exitCodes.js';
import { toLoadOptions, type LoadFlags } from './options.js';
import { handleStopSignals } from './signals.js';
import type { CliIo } from './terminal.js';
import { testSeamsFromEnv } from './testSeams.js';

/** The flags of `ddb-spread verify`: every flag of load, and its own. */
export interface VerifyFlags extends LoadFlags {
  rcu?: number | string;
  consistentRead: boolean;
  sample?: number;
  differences?: string;
  scan?: number;
}

/** Maps verify's flags to verify() options: the load's, as load would take them, and the verify's own. */
export async function toVerifyOptions(inputs: string | string[], flags: VerifyFlags): Promise<VerifyOptions> {
  const options: VerifyOptions = await toLoadOptions(inputs, { ...flags, dryRun: false });
  if (flags.rcu !== undefined) options.rcu = flags.rcu;
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
  try {
    const options = await toVerifyOptions(inputs, flags);
    const [{ verify }, { formatVerify, verifyJson }] = await Promise.all([import('../verifying/verify.js'), import('../verifying/verifyReport.js')]);
    const result = await verify(options, {
      signal: controller.signal,
      onEvent: (event) => {
        if (event.type === 'warning' && !flags.quiet) io.stderr.write(`ddb-spread: warning: ${event.message}\n`);
      },
      ...testSeamsFromEnv(process.env),
    });
    io.stdout.write(flags.json ? verifyJson(result, { excerpts: flags.excerpts }) : formatVerify(result, { excerpts: flags.excerpts }));
    return result.differing === 0 ? EXIT.OK : EXIT.DIFFERENT;
  } catch (error) {
    const loaderError = (error as Partial<LoaderError>).code !== undefined ? (error as LoaderError) : undefined;
    if (flags.json) io.stdout.write(`${JSON.stringify({ complete: false, error: { code: loaderError?.code ?? 'BUG', message: (error as Error).message } })}\n`);
    io.stderr.write(`ddb-spread: error: ${(error as Error).message}\n`);
    if (flags.verbose && (error as Error).stack) io.stderr.write(`${(error as Error).stack}\n`);
    if (loaderError?.code === 'ABORTED' && signals.exitCode !== undefined) return signals.exitCode;
    return exitCodeForError(loaderError?.code);
  } finally {
    signals.dispose();
  }
}
