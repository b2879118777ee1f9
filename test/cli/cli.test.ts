/**
 * The built CLI (`node bin/ddb-spread.js`, from dist/) spawned against DynamoDB Local: exit codes, what
 * goes to stdout and stderr, and what never does (stack traces, SDK warnings, credentials).
 */
import { readFileSync } from 'node:fs';
import { writeFile } from 'node:fs/promises';
import { createServer, type Socket } from 'node:net';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { beforeAll, describe, expect, it } from 'vitest';
import { assertCliBuilt, runCli, type ProcessRun } from '../support/cli.js';
import { scanAll, type TableKeys } from '../support/ddb.js';
import { localEnv } from '../support/env.js';
import { useLocalAws } from '../support/localAws.js';
import { readRejects } from '../support/rejects.js';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const sample = (name: string) => join(ROOT, 'samples', name);
const SECRET = 'SECRETSECRET123';
const SESSION_TOKEN = 'SESSIONTOKEN456';

/** The key schema of samples/orders.table.json, so the samples load as documented. */
function ordersKeys(): TableKeys {
  const spec = JSON.parse(readFileSync(sample('orders.table.json'), 'utf8')) as {
    AttributeDefinitions: Array<{ AttributeName: string; AttributeType: 'S' | 'N' | 'B' }>;
    KeySchema: Array<{ AttributeName: string; KeyType: 'HASH' | 'RANGE' }>;
  };
  const attr = (role: 'HASH' | 'RANGE') => {
    const name = spec.KeySchema.find((k) => k.KeyType === role)?.AttributeName;
    const type = spec.AttributeDefinitions.find((d) => d.AttributeName === name)?.AttributeType;
    return name && type ? { name, type } : undefined;
  };
  const sortKey = attr('RANGE');
  return { partitionKey: attr('HASH')!, ...(sortKey ? { sortKey } : {}) };
}

beforeAll(assertCliBuilt);
const { endpoint, client, dir, newTable } = useLocalAws({ name: 'cli' });
let seq = 0;

async function ordersTable(): Promise<string> {
  return newTable(ordersKeys());
}

function cliEnv(): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { ...localEnv(endpoint), AWS_SECRET_ACCESS_KEY: SECRET, AWS_SESSION_TOKEN: SESSION_TOKEN };
  // The bin silences the SDK's Node version notice itself; the caller's environment must not do it for it.
  delete env['AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED'];
  delete env['NODE_NO_WARNINGS'];
  return env;
}

/** Runs `node bin/ddb-spread.js ...args` in the temp dir; a run that hangs is killed after 45 s (code null). */
function cli(args: string[], options: { stdin?: Buffer | string; env?: NodeJS.ProcessEnv } = {}): Promise<ProcessRun> {
  return runCli(args, { cwd: dir(), env: options.env ?? cliEnv(), stdin: options.stdin ?? '' });
}

const nonEmptyLines = (text: string) => text.split('\n').filter((l) => l.trim() !== '');
const STACK_FRAME = /^\s+at /m;
/** Our one line on a Node.js older than 22. */
const RUNTIME_NOTICE = /^ddb-spread: Node\.js \d+ is past end of life/;

const ORDER_TYPES = 'total:N,gift:BOOL,items:JSON';

describe('ddb-spread load', () => {
  it('loads samples/orders.csv, exits 0 and prints the summary on stderr', async () => {
    const table = await ordersTable();
    const run = await cli(['load', sample('orders.csv'), '--table', table, '--types', ORDER_TYPES]);
    expect(run.stderr).toContain(`load into ${table} complete`);
    expect(run.code).toBe(0);
    expect(run.stdout).toBe('');
    const written = /written\s+([\d,]+)/.exec(run.stderr)?.[1]?.replace(/,/g, '');
    expect(run.stderr).toMatch(/rows read\s+256\b/);
    expect(Number(written)).toBe(256);
    const items = await scanAll(client(), table);
    expect(items.length).toBe(256);
    const first = items.find((i) => i['customerId']?.S === 'cust-0001' && i['orderId']?.S === '2024-02-08#00002');
    expect(first).toMatchObject({ total: { N: '24.74' }, gift: { BOOL: true }, items: { L: expect.any(Array) }, note: { S: 'leave at door' } });
  });

  it('--json prints exactly one JSON object on stdout and no summary on stderr', async () => {
    const table = await ordersTable();
    const run = await cli(['load', sample('orders.csv'), '--table', table, '--types', ORDER_TYPES, '--json']);
    expect(run.code).toBe(0);
    const lines = nonEmptyLines(run.stdout);
    expect(lines.length).toBe(1);
    const summary = JSON.parse(lines[0]!) as Record<string, unknown>;
    expect(summary).toMatchObject({ rowsRead: 256, written: 256, rejected: 0, superseded: 0, complete: true, table });
    expect(run.stderr).not.toMatch(/rows read/);
  });

  it('exits 2 for samples/orders-with-errors.csv and writes the reject file given with --rejects', async () => {
    const table = await ordersTable();
    const rejects = join(dir(), `${++seq}-errors.rejects.jsonl`);
    const input = sample('orders-with-errors.csv');
    const run = await cli(['load', input, '--table', table, '--types', 'total:N,gift:BOOL', '--rejects', rejects]);
    expect(run.code).toBe(2);
    const records = await readRejects(rejects);
    expect(records.map((r) => [r.line, r.code])).toEqual([
      [4, 'TYPE_ERROR'],
      [5, 'MISSING_KEY'],
      [6, 'TYPE_ERROR'],
      [7, 'CSV_SYNTAX'],
    ]);
    for (const r of records) expect(r.file).toBe(input);
    expect(records[0]).toMatchObject({ raw: 'cust-0002,2024-02-11#00002,PAID,not-a-number,false', message: expect.stringContaining('total') });
    expect(records[1]).toMatchObject({ raw: ',2024-02-12#00003,PAID,5.00,false' });
    expect(records[1]).not.toHaveProperty('key');
    // Each reject is shown with its location, and (by default) an excerpt of the row.
    expect(run.stderr).toContain(`${input}:4: TYPE_ERROR`);
    expect(run.stderr).toContain(`${input}:7: CSV_SYNTAX`);
    expect(run.stderr).toContain('cust-0002,2024-02-11#00002,PAID,not-a-number,false');
    expect(run.stderr).toMatch(/rejected\s+4/);
    expect(run.stderr).toContain(rejects);
    // The duplicate key on lines 2-3: the later row is the one stored; the quoted row on line 8 is intact.
    const items = await scanAll(client(), table);
    expect(items.map((i) => `${i['customerId']?.S}|${i['orderId']?.S}|${i['status']?.S}`).sort()).toEqual([
      'cust-0001|2024-01-05#00001|SHIPPED',
      'cust-0005|2024-03-03#00006|PAID, then "refunded"',
    ]);
  });

  it('--no-excerpts keeps row text off stderr (the reject file still has it)', async () => {
    const table = await ordersTable();
    const rejects = join(dir(), `${++seq}-noexcerpts.rejects.jsonl`);
    const run = await cli(['load', sample('orders-with-errors.csv'), '--table', table, '--types', 'total:N,gift:BOOL', '--rejects', rejects, '--no-excerpts']);
    expect(run.code).toBe(2);
    expect(run.stderr).toContain(':4: TYPE_ERROR');
    for (const line of readFileSync(sample('orders-with-errors.csv'), 'utf8').split('\n').slice(1).filter(Boolean)) {
      expect(run.stderr).not.toContain(line);
    }
    expect((await readRejects(rejects))[0]?.raw).toBe('cust-0002,2024-02-11#00002,PAID,not-a-number,false');
  });

  it('--no-excerpts also keeps cell values out of the messages on stderr', async () => {
    const table = await ordersTable();
    const rejects = join(dir(), `${++seq}-noexcerpts-cells.rejects.jsonl`);
    const run = await cli(['load', sample('orders-with-errors.csv'), '--table', table, '--types', 'total:N,gift:BOOL', '--rejects', rejects, '--no-excerpts']);
    expect(run.code).toBe(2);
    // "not-a-number" (line 4) and "maybe" (line 6) are row contents, like the excerpt.
    expect(run.stderr).not.toContain('not-a-number');
    expect(run.stderr).not.toContain('maybe');
  });

  it('--strict exits 65 (EX_DATAERR) at the first rejected row', async () => {
    const table = await ordersTable();
    const rejects = join(dir(), `${++seq}-strict.rejects.jsonl`);
    const run = await cli(['load', sample('orders-with-errors.csv'), '--table', table, '--types', 'total:N,gift:BOOL', '--rejects', rejects, '--strict']);
    expect(run.code).toBe(65); // EX_DATAERR
    expect(run.stderr).toMatch(/ddb-spread: error: .*max-rejects 1/);
    expect((await readRejects(rejects)).map((r) => [r.line, r.code])).toEqual([[4, 'TYPE_ERROR']]);
    expect(run.stderr).not.toMatch(STACK_FRAME);
  });

  it('exits 78 (EX_CONFIG, no retry helps) for a missing table with one line naming it, and no stack trace', async () => {
    const table = `missing_${process.pid}_table`;
    const run = await cli(['load', sample('orders.csv'), '--table', table]);
    expect(run.code).toBe(78); // EX_CONFIG
    expect(run.stderr).toContain(`"${table}"`);
    expect(run.stderr).not.toMatch(STACK_FRAME);
    const lines = nonEmptyLines(run.stderr).filter((l) => !RUNTIME_NOTICE.test(l));
    expect(lines).toEqual([expect.stringMatching(new RegExp(`^ddb-spread: error: .*"${table}".*not found`))]);
  });

  it('names the region and endpoint actually in use when the table is missing', async () => {
    // localEnv sets AWS_REGION and AWS_ENDPOINT_URL_DYNAMODB; the message must not claim no region is set.
    const run = await cli(['load', sample('orders.csv'), '--table', `missing_${process.pid}_region`]);
    expect(run.code).toBe(78);
    expect(run.stderr).not.toContain('(not set)');
  });

  it('exits 75 (EX_TEMPFAIL, worth retrying) with one sentence when the endpoint does not answer (a closed port)', async () => {
    const port = await closedPort();
    const run = await cli(['load', sample('orders.csv'), '--table', 'Orders', '--endpoint-url', `http://127.0.0.1:${port}`]);
    expect(run.code).toBe(75); // EX_TEMPFAIL
    expect(run.stderr).toMatch(new RegExp(`ddb-spread: error: cannot reach DynamoDB at endpoint http://127\\.0\\.0\\.1:${port} \\(ECONNREFUSED\\)`));
    expect(run.stderr).not.toMatch(STACK_FRAME);
  });

  it('SIGINT while the table is being described (the endpoint holds the call): exit 130, --json says not complete, stopped on request', async () => {
    // Accepts connections and never answers: DescribeTable waits until the signal stops it.
    const held: Socket[] = [];
    const server = createServer((socket) => void held.push(socket));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const address = server.address();
    const port = typeof address === 'object' && address ? address.port : 0;
    try {
      const run = await runCli(['load', sample('orders.csv'), '--table', 'Orders', '--endpoint-url', `http://127.0.0.1:${port}`, '--json'], {
        cwd: dir(),
        env: cliEnv(),
        kill: { signal: 'SIGINT', when: () => held.length > 0 },
      });
      expect(run.code, run.stderr).toBe(130);
      const summary = JSON.parse(run.stdout) as { complete: boolean; error?: { code: string } };
      expect(summary.complete).toBe(false);
      expect(summary.error?.code).toBe('ABORTED');
    } finally {
      for (const socket of held) socket.destroy();
      await new Promise((resolve) => server.close(resolve));
    }
  });

  it('load --help shows examples and exit codes', async () => {
    const run = await cli(['load', '--help']);
    expect(run.code).toBe(0);
    expect(run.stdout).toContain('Examples:');
    expect(run.stdout).toContain('Exit codes');
    expect(run.stdout).toContain('--table');
  });

  it.each([
    { args: ['--concurrency', '0'], message: "error: option '-c, --concurrency <n>' argument '0' is invalid" },
    {
      args: ['--input-format', 'xml'],
      message: "error: option '--input-format <format>' argument 'xml' is invalid. Allowed choices are csv, jsonl, ddb-json, parquet, ion",
    },
    { args: ['--max-attempts', 'many'], message: "error: option '--max-attempts <n>' argument 'many' is invalid" },
    { args: ['--empty', 'zero'], message: "error: option '--empty <policy>' argument 'zero' is invalid" },
  ])("exits 64 (EX_USAGE) with commander's message for $args", async ({ args, message }) => {
    const run = await cli(['load', sample('orders.csv'), '--table', 'Orders', ...args]);
    expect(run.code).toBe(64); // EX_USAGE
    expect(run.stderr).toContain(message);
    expect(run.stderr).not.toMatch(STACK_FRAME);
    expect(run.stdout).toBe('');
  });

  it('reads JSONL from stdin with --input-format jsonl', async () => {
    const table = await ordersTable();
    const run = await cli(['load', '-', '--input-format', 'jsonl', '--table', table, '--json'], { stdin: readFileSync(sample('orders.jsonl')) });
    expect(run.code).toBe(0);
    expect(JSON.parse(run.stdout) as unknown).toMatchObject({ input: '-', rowsRead: 256, written: 256, rejected: 0 });
    expect((await scanAll(client(), table)).length).toBe(256);
  });

  // The SDK's 8-line Node notice is replaced by one line of ours on Node < 22 (also with
  // --verbose), --quiet drops it, and other Node warnings are no longer silenced.
  it('an old Node.js gets one line of ours instead of the SDK notice; --quiet drops it; Node warnings still show', async () => {
    const table = await ordersTable();
    const old = Number(process.versions.node.split('.')[0]) < 22;
    for (const extra of [[], ['--verbose']]) {
      const run = await cli(['load', sample('orders.jsonl'), '--table', table, ...extra]);
      expect(run.code).toBe(0);
      expect(run.stderr).not.toContain('NodeVersionSupportWarning');
      expect(nonEmptyLines(run.stderr).filter((l) => RUNTIME_NOTICE.test(l))).toEqual(
        old
          ? [`ddb-spread: Node.js ${process.versions.node.split('.')[0]} is past end of life; AWS SDK releases after January 2027 need Node.js 22 or newer`]
          : [],
      );
    }
    const quiet = await cli(['load', sample('orders.jsonl'), '--table', table, '--quiet']);
    expect(quiet.code).toBe(0);
    expect(quiet.stderr).not.toMatch(RUNTIME_NOTICE);
    // A Node warning raised once the CLI runs (bin/ used to replace process.emitWarning with a no-op).
    const preload = join(dir(), 'warn-later.cjs');
    await writeFile(preload, "setImmediate(() => process.emitWarning('a warning raised while ddb-spread runs'));\n");
    const warned = await runCli(['load', sample('orders.jsonl'), '--table', table, '--quiet'], {
      cwd: dir(),
      env: { ...localEnv(endpoint), NODE_OPTIONS: `--require ${preload}` },
    });
    expect(warned.code).toBe(0);
    expect(warned.stderr).toContain('Warning: a warning raised while ddb-spread runs');
  });

  it('never prints the credentials, even with --verbose', async () => {
    const table = await ordersTable();
    const rejects = join(dir(), `${++seq}-secret.rejects.jsonl`);
    const runs = [
      await cli(['load', sample('orders-with-errors.csv'), '--table', table, '--types', 'total:N,gift:BOOL', '--rejects', rejects, '--verbose']),
      await cli(['load', sample('orders.csv'), '--table', `missing_${process.pid}_secret`, '--verbose']),
      await cli(['load', sample('orders.csv'), '--table', table, '--verbose', '--endpoint-url', `http://127.0.0.1:${await closedPort()}`]),
      await cli(['load', sample('orders.csv'), '--table', table, '--verbose', '--json', '--types', ORDER_TYPES]),
    ];
    expect(runs.map((r) => r.code)).toEqual([2, 78, 75, 0]); // rejects, EX_CONFIG, EX_TEMPFAIL, OK
    for (const run of runs) {
      for (const secret of [SECRET, SESSION_TOKEN]) {
        expect(run.stdout).not.toContain(secret);
        expect(run.stderr).not.toContain(secret);
      }
    }
  });
});

/** A loopback port nothing listens on: bound, then released. */
function closedPort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      const port = typeof address === 'object' && address ? address.port : 0;
      server.close(() => resolve(port));
    });
  });
}
