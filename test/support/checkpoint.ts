import { readFileSync } from 'node:fs';
import { runCli, type ProcessRun, type RunOptions } from './cli.js';

/** Batches the checkpoint at `path` records as done (0 while there is none): progress read as the loader saves it. */
export function batchesDone(path: string): number {
  try {
    return (JSON.parse(readFileSync(path, 'utf8')) as { batchesDone: number }).batchesDone;
  } catch {
    return 0;
  }
}

/**
 * The CLI with `args`, killed with SIGKILL once the checkpoint at `checkpoint` records `kill` batches done
 * (or run to its end when `kill` is left out): the same command run again resumes it.
 */
export function killableCli(args: string[], checkpoint: string, options: Pick<RunOptions, 'cwd' | 'env'>): (kill?: number) => Promise<ProcessRun> {
  return (kill) =>
    runCli(args, {
      ...options,
      stdout: 'ignore',
      timeoutMs: 120_000,
      ...(kill ? { kill: { signal: 'SIGKILL' as const, when: () => batchesDone(checkpoint) >= kill } } : {}),
    });
}
