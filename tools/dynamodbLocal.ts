/**
 * Embedded DynamoDB Local harness for the demo, the integration tests and the benchmark.
 *
 * The DynamoDB Local jar is taken from the npm package `amplify-dynamodb-simulator`
 * (pinned, integrity-checked), without installing that package's dependency tree:
 * we `npm pack` the tarball and extract only `package/emulator/`.
 *
 *   tsx tools/dynamodbLocal.ts fetch   # download + extract, print the emulator folder
 *   tsx tools/dynamodbLocal.ts start   # start on a free loopback port, print the endpoint
 *
 * Env:
 *   DDB_LOCAL_DIR      folder that holds (or will hold) `emulator/`
 *   DDB_LOCAL_VERBOSE  set to 1 to echo DynamoDB Local's own output to stderr
 */
import { execFile, spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { createHash } from 'node:crypto';
import { createReadStream, existsSync } from 'node:fs';
import { mkdir, mkdtemp, readdir, rename, rm, stat } from 'node:fs/promises';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { DynamoDBClient, ListTablesCommand } from '@aws-sdk/client-dynamodb';
import { downloadProgress, type DownloadProgress, type ProgressOutput } from './downloadProgress.js';

const execFileP = promisify(execFile);

export const SIMULATOR_PACKAGE = 'amplify-dynamodb-simulator';
export const SIMULATOR_VERSION = '2.9.30';
export const SIMULATOR_INTEGRITY = 'sha512-xTeeRLvzEfqyd5lh3bH4c0kHvSHHmmhD5ZDsHFKAQ5g2Zl6JqlFdutaQhCLHzxEp6Ry1o7TB6niIoXuQAnSewQ==';
/** The tarball's size: fixed by the integrity above, so the download's progress has its total. */
export const SIMULATOR_TARBALL_BYTES = 56_573_501;
/** How often the download's progress is looked at. */
const PROGRESS_POLL_MS = 500;

const JAR = 'DynamoDBLocal.jar';
const LIB = 'DynamoDBLocal_lib';
const TMP_PREFIX = '.emulator-tmp-';
const OUTPUT_LINES = 50;
// 30 s was not enough on a busy 2-CPU box (measured 15-25 s start-ups under load).
const READY_TIMEOUT_MS = 60_000;
const POLL_MS = 100;
const KILL_GRACE_MS = 3_000;

export interface DynamoDBLocalOptions {
  /** Folder that holds (or will hold) `emulator/`. Default: $DDB_LOCAL_DIR or <repo>/.cache/dynamodb-local/<version>. */
  cacheDir?: string;
  log?: (msg: string) => void;
  /**
   * Where the download's progress goes: a line rewritten on a terminal, a line per quarter otherwise.
   * Default: stderr whenever `log` is given; none without it.
   */
  progress?: ProgressOutput;
  /** startDynamoDBLocal only: how long to wait for the first ListTables answer. Default 60 s. */
  readyTimeoutMs?: number;
}

export interface RunningDynamoDBLocal {
  endpoint: string;
  port: number;
  stop(): Promise<void>;
}

/** How to keep a DynamoDB Local of your own running and load into it: the demo's last lines. */
export const OWN_DYNAMODB_LOCAL: readonly string[] = [
  'your own DynamoDB Local, kept running: npx tsx tools/dynamodbLocal.ts start   (prints its endpoint; Ctrl-C stops it)',
  'then, in another shell: export AWS_ACCESS_KEY_ID=local AWS_SECRET_ACCESS_KEY=local AWS_REGION=us-east-1',
  '  aws dynamodb create-table --cli-input-json file://samples/orders.table.json --endpoint-url <endpoint>',
  '  node bin/ddb-spread.js load samples/orders.csv --table Orders --types total:N,gift:BOOL,items:JSON --endpoint-url <endpoint>',
];

const thisFile = fileURLToPath(import.meta.url);
const repoRoot = resolve(dirname(thisFile), '..');

export function defaultCacheDir(): string {
  const fromEnv = process.env['DDB_LOCAL_DIR'];
  if (fromEnv !== undefined && fromEnv !== '') return resolve(fromEnv);
  return join(repoRoot, '.cache', 'dynamodb-local', SIMULATOR_VERSION);
}

const noop = (_msg: string): void => {};

function errCode(err: unknown): string | undefined {
  if (typeof err === 'object' && err !== null && 'code' in err) {
    const code = (err as { code: unknown }).code;
    return typeof code === 'string' ? code : undefined;
  }
  return undefined;
}

function errMessage(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}

async function sha512Base64(file: string): Promise<string> {
  const hash = createHash('sha512');
  for await (const chunk of createReadStream(file)) hash.update(chunk as Buffer);
  return hash.digest('base64');
}

/** Removes temp folders left behind by crashed extractions (older than an hour). */
async function sweepStaleTemps(cacheDir: string): Promise<void> {
  let names: string[];
  try {
    names = await readdir(cacheDir);
  } catch {
    return;
  }
  const cutoff = Date.now() - 60 * 60 * 1000;
  for (const name of names) {
    if (!name.startsWith(TMP_PREFIX)) continue;
    const p = join(cacheDir, name);
    try {
      if ((await stat(p)).mtimeMs < cutoff) await rm(p, { recursive: true, force: true });
    } catch {
      /* another process may be sweeping too */
    }
  }
}

/**
 * Makes sure `<cacheDir>/emulator/` holds DynamoDBLocal.jar and DynamoDBLocal_lib/,
 * downloading and extracting it if needed. Returns the emulator folder.
 */
export async function ensureDynamoDBLocal(opts: DynamoDBLocalOptions = {}): Promise<string> {
  const log = opts.log ?? noop;
  const cacheDir = opts.cacheDir !== undefined ? resolve(opts.cacheDir) : defaultCacheDir();
  const emulatorDir = join(cacheDir, 'emulator');
  if (existsSync(join(emulatorDir, JAR))) return emulatorDir;

  await mkdir(cacheDir, { recursive: true });
  await sweepStaleTemps(cacheDir);

  const spec = `${SIMULATOR_PACKAGE}@${SIMULATOR_VERSION}`;
  const packDir = await mkdtemp(join(tmpdir(), 'ddb-local-pack-'));
  const extractDir = await mkdtemp(join(cacheDir, TMP_PREFIX));
  try {
    log(`Downloading DynamoDB Local (npm pack ${spec}, ${(SIMULATOR_TARBALL_BYTES / 1024 / 1024).toFixed(1)} MB) ...`);
    const started = Date.now();
    const output = opts.progress ?? (opts.log ? { write: (text: string) => void process.stderr.write(text), tty: process.stderr.isTTY === true } : undefined);
    const watch = output ? await watchDownload(downloadProgress('Downloading DynamoDB Local', SIMULATOR_TARBALL_BYTES, output), started) : undefined;
    try {
      // --loglevel=error rather than --silent: quiet on success, but keeps npm's reason on failure.
      await execFileP('npm', ['pack', spec, '--pack-destination', packDir, '--loglevel=error'], {
        cwd: packDir,
        maxBuffer: 16 * 1024 * 1024,
        timeout: 10 * 60 * 1000,
      });
      watch?.stop(true);
    } catch (err) {
      watch?.stop(false);
      if (errCode(err) === 'ENOENT') {
        throw new Error(
          `Cannot fetch DynamoDB Local: 'npm' is not on PATH. Install Node.js/npm, or set DDB_LOCAL_DIR ` +
            `to a folder holding emulator/${JAR} and emulator/${LIB}/.`,
          { cause: err },
        );
      }
      const stderr = (err as { stderr?: unknown }).stderr;
      const npmLines = typeof stderr === 'string' ? stderr.split(/\r?\n/).filter((l) => l.trim() !== '') : [];
      const detail = npmLines.length > 0 ? npmLines.slice(0, 6).join('\n') : errMessage(err);
      throw new Error(
        `Cannot fetch DynamoDB Local: 'npm pack ${spec}' failed (no access to the npm registry?). ` +
          `Fix registry access, or set DDB_LOCAL_DIR to a folder holding emulator/${JAR} and ` +
          `emulator/${LIB}/ (e.g. extracted from that package's tarball).\n${detail}`,
        { cause: err },
      );
    }

    const tarballs = (await readdir(packDir)).filter((f) => f.endsWith('.tgz'));
    const tarballName = tarballs[0];
    if (tarballs.length !== 1 || tarballName === undefined) {
      throw new Error(`npm pack ${spec} did not produce exactly one .tgz in ${packDir} (got: ${tarballs.join(', ') || 'none'})`);
    }
    const tarball = join(packDir, tarballName);
    const size = (await stat(tarball)).size;
    log(`Downloaded ${(size / 1024 / 1024).toFixed(1)} MB in ${((Date.now() - started) / 1000).toFixed(1)} s; verifying ...`);

    const expected = SIMULATOR_INTEGRITY.slice('sha512-'.length);
    const actual = await sha512Base64(tarball);
    if (actual !== expected) {
      throw new Error(
        `Integrity check failed for ${spec}: expected sha512-${expected}, got sha512-${actual}. ` +
          `Refusing to use it (registry mirror serving a different file?).`,
      );
    }

    try {
      await execFileP('tar', ['-xzf', tarball, '--no-same-owner', '-C', extractDir, 'package/emulator'], {
        maxBuffer: 16 * 1024 * 1024,
      });
    } catch (err) {
      if (errCode(err) === 'ENOENT') {
        throw new Error(`Cannot extract DynamoDB Local: 'tar' is not on PATH (apt-get install -y tar).`, { cause: err });
      }
      const stderr = (err as { stderr?: unknown }).stderr;
      throw new Error(`Extracting package/emulator from ${tarball} failed: ${typeof stderr === 'string' ? stderr.trim() : errMessage(err)}`, { cause: err });
    }
    const extracted = join(extractDir, 'package', 'emulator');
    if (!existsSync(join(extracted, JAR)) || !existsSync(join(extracted, LIB))) {
      throw new Error(`${spec} does not contain package/emulator/${JAR} and ${LIB}/ as expected`);
    }

    // Publish atomically. If another process got there first, keep theirs.
    try {
      await rename(extracted, emulatorDir);
    } catch (err) {
      const code = errCode(err);
      if (existsSync(join(emulatorDir, JAR))) {
        log('Another process finished the download first; using its copy.');
      } else if (code === 'ENOTEMPTY' || code === 'EEXIST' || code === 'EPERM') {
        // A broken emulator/ without the jar (manual tinkering?): replace it.
        await rm(emulatorDir, { recursive: true, force: true });
        await rename(extracted, emulatorDir);
      } else {
        throw err;
      }
    }
    log(`DynamoDB Local ready in ${emulatorDir}`);
    return emulatorDir;
  } finally {
    await rm(extractDir, { recursive: true, force: true }).catch(() => {});
    await rm(packDir, { recursive: true, force: true }).catch(() => {});
  }
}

/**
 * npm pack says nothing while it downloads; npm's cache (cacache) writes the tarball to its tmp folder as
 * the bytes come, so the largest file there that is newer than the download is how far it got. A cache
 * that already holds the tarball downloads nothing, and nothing is shown.
 */
async function watchDownload(progress: DownloadProgress, since: number): Promise<{ stop(finished: boolean): void }> {
  let tmp: string;
  try {
    const { stdout } = await execFileP('npm', ['config', 'get', 'cache'], { timeout: 30_000 });
    tmp = join(stdout.trim(), '_cacache', 'tmp');
  } catch {
    return { stop: () => progress.done() };
  }
  let seen = 0;
  const poll = async () => {
    const names = await readdir(tmp).catch(() => [] as string[]);
    for (const name of names) {
      const info = await stat(join(tmp, name)).catch(() => undefined);
      if (info?.isFile() && info.mtimeMs >= since - 1000) seen = Math.max(seen, info.size);
    }
    progress.update(seen);
  };
  const timer = setInterval(() => void poll(), PROGRESS_POLL_MS);
  return {
    stop(finished) {
      clearInterval(timer);
      // Downloaded: the last poll may have missed the end (the file is moved into the cache when complete).
      if (finished && seen > 0) progress.update(SIMULATOR_TARBALL_BYTES);
      progress.done();
    },
  };
}

function assertJava(): void {
  const res = spawnSync('java', ['-version'], { stdio: 'ignore' });
  if (res.error !== undefined) {
    if (errCode(res.error) === 'ENOENT') {
      throw new Error('Java 17+ is needed to run DynamoDB Local: apt-get install -y openjdk-17-jre-headless');
    }
    throw new Error(`Cannot run 'java -version': ${res.error.message}`);
  }
}

function freePort(): Promise<number> {
  return new Promise((resolvePort, reject) => {
    const srv = createServer();
    srv.unref();
    srv.once('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const addr = srv.address();
      const port = typeof addr === 'object' && addr !== null ? addr.port : 0;
      srv.close((err) => (err ? reject(err) : port > 0 ? resolvePort(port) : reject(new Error('no port assigned'))));
    });
  });
}

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

/** Starts an in-memory DynamoDB Local on a free port and waits until it answers ListTables. */
export async function startDynamoDBLocal(opts: DynamoDBLocalOptions = {}): Promise<RunningDynamoDBLocal> {
  const log = opts.log ?? noop;
  assertJava();
  const emulatorDir = await ensureDynamoDBLocal(opts);
  const port = await freePort();
  const endpoint = `http://127.0.0.1:${port}`;
  const verbose = process.env['DDB_LOCAL_VERBOSE'] === '1';
  const readyTimeoutMs = opts.readyTimeoutMs ?? READY_TIMEOUT_MS;

  const started = Date.now();
  const child: ChildProcess = spawn(
    'java',
    [
      `-Djava.library.path=${join(emulatorDir, LIB)}`,
      '-jar',
      join(emulatorDir, JAR),
      '-inMemory',
      '-sharedDb',
      // The bundled build (1.25.x) ships with telemetry on; keep tests off the network.
      '-disableTelemetry',
      '-port',
      String(port),
    ],
    { cwd: emulatorDir, stdio: ['ignore', 'pipe', 'pipe'] },
  );

  // Keep the tail of its output for error messages.
  const lines: string[] = [];
  const partial = { stdout: '', stderr: '' };
  const collect = (which: 'stdout' | 'stderr') => (chunk: Buffer) => {
    const text = partial[which] + chunk.toString('utf8');
    const parts = text.split(/\r?\n/);
    partial[which] = parts.pop() ?? '';
    for (const line of parts) {
      lines.push(line);
      if (verbose) process.stderr.write(`[dynamodb-local] ${line}\n`);
    }
    if (lines.length > OUTPUT_LINES) lines.splice(0, lines.length - OUTPUT_LINES);
  };
  child.stdout?.on('data', collect('stdout'));
  child.stderr?.on('data', collect('stderr'));
  const output = (): string =>
    [...lines, partial.stdout, partial.stderr]
      .filter((l) => l !== '')
      .slice(-OUTPUT_LINES)
      .join('\n') || '(no output)';

  let exited = false;
  let exitInfo = '';
  let spawnError: Error | undefined;
  const exitPromise = new Promise<void>((r) => {
    child.once('exit', (code, signal) => {
      exited = true;
      exitInfo = signal !== null ? `signal ${signal}` : `code ${String(code)}`;
      r();
    });
    child.once('error', (err) => {
      spawnError = err;
      if (child.pid === undefined) {
        exited = true;
        exitInfo = `spawn error: ${err.message}`;
        r();
      }
    });
  });

  // If the parent goes away, take java with it (synchronously, 'exit' allows nothing else).
  const onParentExit = (): void => {
    if (!exited) {
      try {
        child.kill('SIGKILL');
      } catch {
        /* already gone */
      }
    }
  };
  process.on('exit', onParentExit);

  let stopping: Promise<void> | undefined;
  const stop = (): Promise<void> => {
    stopping ??= (async () => {
      if (!exited) {
        child.kill('SIGTERM');
        const timer = setTimeout(() => {
          if (!exited) child.kill('SIGKILL');
        }, KILL_GRACE_MS);
        await exitPromise;
        clearTimeout(timer);
      }
      process.off('exit', onParentExit);
    })();
    return stopping;
  };

  const client = new DynamoDBClient({
    endpoint,
    region: 'us-east-1',
    credentials: { accessKeyId: 'local', secretAccessKey: 'local' },
    maxAttempts: 1,
    requestHandler: { connectionTimeout: 1_000 },
  });
  try {
    const deadline = started + readyTimeoutMs;
    let lastError = '';
    for (;;) {
      if (exited) {
        throw new Error(`DynamoDB Local exited before it was ready (${exitInfo}${spawnError ? `; ${spawnError.message}` : ''}). Output:\n${output()}`);
      }
      try {
        // The first request to a cold JVM can take seconds on a busy machine: give each
        // attempt up to 10 s (bounded by the overall deadline) rather than a short timeout.
        const attemptMs = Math.max(500, Math.min(10_000, deadline - Date.now()));
        await client.send(new ListTablesCommand({ Limit: 1 }), { abortSignal: AbortSignal.timeout(attemptMs) });
        break;
      } catch (err) {
        lastError = errMessage(err);
      }
      if (Date.now() >= deadline) {
        throw new Error(
          `DynamoDB Local did not answer ListTables on ${endpoint} within ${readyTimeoutMs / 1000} s ` + `(last error: ${lastError}). Output:\n${output()}`,
        );
      }
      await Promise.race([sleep(POLL_MS), exitPromise]);
    }
  } catch (err) {
    await stop();
    throw err;
  } finally {
    client.destroy();
  }

  log(`DynamoDB Local listening on ${endpoint} (pid ${String(child.pid)}, up in ${((Date.now() - started) / 1000).toFixed(1)} s)`);
  return { endpoint, port, stop };
}

async function main(argv: string[]): Promise<void> {
  const cmd = argv[0];
  const log = (msg: string): void => {
    process.stderr.write(`${msg}\n`);
  };
  if (cmd === 'fetch') {
    process.stdout.write(`${await ensureDynamoDBLocal({ log })}\n`);
  } else if (cmd === 'start') {
    const local = await startDynamoDBLocal({ log });
    process.stdout.write(`${local.endpoint}\n`);
    log('Press Ctrl+C to stop.');
    const shutdown = (): void => {
      void local.stop().then(() => process.exit(0));
    };
    process.once('SIGINT', shutdown);
    process.once('SIGTERM', shutdown);
  } else {
    process.stderr.write('usage: tsx tools/dynamodbLocal.ts fetch|start\n');
    for (const line of OWN_DYNAMODB_LOCAL) process.stderr.write(`${line}\n`);
    process.exitCode = 2;
  }
}

if (process.argv[1] !== undefined && resolve(process.argv[1]) === thisFile) {
  main(process.argv.slice(2)).catch((err: unknown) => {
    process.stderr.write(`${errMessage(err)}\n`);
    process.exit(1);
  });
}
