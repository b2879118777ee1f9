import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));

/** The built CLI: `bin/ddb-spread.js`, which imports dist/cli/main.js. */
export const BIN = join(ROOT, 'bin', 'ddb-spread.js');

export interface RunOptions {
  cwd: string;
  env: NodeJS.ProcessEnv;
  /** Written to the child's stdin, which is then closed. Without it stdin is ignored (/dev/null). */
  stdin?: Buffer | string;
  /** 'ignore' discards stdout (it then reads as ''). @default 'pipe' */
  stdout?: 'pipe' | 'ignore';
  /**
   * Sends `signal` after `afterMs`, or as soon as `when()` holds (checked every 25 ms): a condition on
   * the run's progress, where a fixed delay would be too early on a slow machine and too late on a fast
   * one. The run may finish first.
   */
  kill?: { signal: NodeJS.Signals; afterMs?: number; when?: () => boolean };
  /** A run that hangs is killed with SIGKILL after this long (code null); null for no limit. @default 45_000 */
  timeoutMs?: number | null;
}

export interface ProcessRun {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
}

/** Spawns `command args` and collects its exit code, signal, stdout and stderr. */
export function runProcess(command: string, args: string[], options: RunOptions): Promise<ProcessRun> {
  const { kill, stdin } = options;
  const timeoutMs = options.timeoutMs === undefined ? 45_000 : options.timeoutMs;
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, {
      cwd: options.cwd,
      env: options.env,
      stdio: [stdin === undefined ? 'ignore' : 'pipe', options.stdout ?? 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout?.setEncoding('utf8').on('data', (s: string) => (stdout += s));
    child.stderr?.setEncoding('utf8').on('data', (s: string) => (stderr += s));
    const killer =
      kill?.when !== undefined
        ? setInterval(() => {
            // Once: a second SIGINT or SIGTERM means "quit at once" to the loader.
            if (kill.when!()) {
              clearInterval(killer);
              child.kill(kill.signal);
            }
          }, 25)
        : kill?.afterMs !== undefined
          ? setTimeout(() => child.kill(kill.signal), kill.afterMs)
          : undefined;
    const guard = timeoutMs === null ? undefined : setTimeout(() => child.kill('SIGKILL'), timeoutMs);
    child.on('error', reject);
    child.on('close', (code, signal) => {
      clearTimeout(guard);
      clearTimeout(killer);
      clearInterval(killer);
      resolve({ code, signal, stdout, stderr });
    });
    if (stdin !== undefined) {
      child.stdin?.on('error', () => undefined);
      child.stdin?.end(stdin);
    }
  });
}

/** Runs `node bin/ddb-spread.js ...args` (see runProcess for the options). */
export function runCli(args: string[], options: RunOptions): Promise<ProcessRun> {
  return runProcess(process.execPath, [BIN, ...args], options);
}

/** Fails with the remedy when dist/ is missing: the CLI tests run the built bin. Use as a beforeAll. */
export function assertCliBuilt(): void {
  if (!existsSync(join(ROOT, 'dist', 'cli', 'main.js'))) {
    throw new Error('dist/cli/main.js is missing: the CLI tests run the built bin; run `npm run build` first (`npm test` does).');
  }
}
