/**
 * Corporate networks: the CLI honours HTTP_PROXY / HTTPS_PROXY / NO_PROXY (lower-case too),
 * a CA bundle (--ca-bundle, AWS_CA_BUNDLE) and AWS_DEFAULT_REGION, against DynamoDB Local through a real
 * loopback proxy and a real loopback TLS endpoint with a self-signed certificate.
 */
import { execFileSync } from 'node:child_process';
import { readFile } from 'node:fs/promises';
import { connect, type AddressInfo, type Socket } from 'node:net';
import { join } from 'node:path';
import { createServer as createTlsServer } from 'node:tls';
import { beforeAll, describe, expect, it } from 'vitest';
import { assertCliBuilt, runCli } from '../support/cli.js';
import { scanAll } from '../support/ddb.js';
import { localEnv } from '../support/env.js';
import { startForwardProxy } from '../support/forwardProxy.js';
import { GENERATED_TYPES_FLAG, writeGeneratedCsv } from '../support/generateRows.js';
import { useLocalAws } from '../support/localAws.js';

const KEYS = { partitionKey: { name: 'pk', type: 'S' as const }, sortKey: { name: 'sk', type: 'N' as const } };
const TYPES = GENERATED_TYPES_FLAG;
const PROXY_VARS = ['HTTP_PROXY', 'http_proxy', 'HTTPS_PROXY', 'https_proxy', 'NO_PROXY', 'no_proxy', 'ALL_PROXY', 'all_proxy'];

beforeAll(assertCliBuilt);
const { endpoint, client, dir, newTable, closeAfterAll } = useLocalAws({ name: 'network' });

/** localEnv without any proxy, CA or retry variable of this machine, plus `extra`. */
function env(extra: NodeJS.ProcessEnv = {}): NodeJS.ProcessEnv {
  const base = localEnv(endpoint);
  for (const name of [...PROXY_VARS, 'AWS_CA_BUNDLE', 'NODE_EXTRA_CA_CERTS', 'AWS_MAX_ATTEMPTS', 'AWS_RETRY_MODE']) delete base[name];
  return { ...base, ...extra };
}

async function input(rows: number): Promise<string> {
  const path = join(dir(), `rows-${rows}-${Math.random().toString(36).slice(2)}.csv`);
  await writeGeneratedCsv(path, rows);
  return path;
}

const dynamoCalls = (seen: string[]) => seen.filter((s) => s.startsWith(`POST ${endpoint}`));

describe('HTTP_PROXY / NO_PROXY', () => {
  it('DynamoDB calls to an http endpoint go through HTTP_PROXY; every row lands', async () => {
    const proxy = closeAfterAll(await startForwardProxy());
    const table = await newTable(KEYS);
    const run = await runCli(['load', await input(60), '--table', table, '--types', TYPES], { cwd: dir(), env: env({ HTTP_PROXY: proxy.url }) });
    expect(run.code, run.stderr).toBe(0);
    // DescribeTable and at least 3 BatchWriteItem calls (60 rows, 25 a batch), as absolute-URI requests.
    expect(dynamoCalls(proxy.seen).length).toBeGreaterThanOrEqual(4);
    expect((await scanAll(client(), table)).length).toBe(60);
  });

  it('the lower-case http_proxy works too', async () => {
    const proxy = closeAfterAll(await startForwardProxy());
    const table = await newTable(KEYS);
    const run = await runCli(['load', await input(10), '--table', table, '--types', TYPES], { cwd: dir(), env: env({ http_proxy: proxy.url }) });
    expect(run.code, run.stderr).toBe(0);
    expect(dynamoCalls(proxy.seen).length).toBeGreaterThanOrEqual(2);
  });

  it.each(['127.0.0.1', `127.0.0.1:${new URL(endpoint).port}`, '*', 'localhost,127.0.0.1'])('NO_PROXY=%s bypasses the proxy', async (noProxy) => {
    const proxy = closeAfterAll(await startForwardProxy());
    const table = await newTable(KEYS);
    const run = await runCli(['load', await input(10), '--table', table, '--types', TYPES], {
      cwd: dir(),
      env: env({ HTTP_PROXY: proxy.url, NO_PROXY: noProxy }),
    });
    expect(run.code, run.stderr).toBe(0);
    expect(proxy.seen).toEqual([]);
    expect((await scanAll(client(), table)).length).toBe(10);
  });

  it('a NO_PROXY entry for another port or host does not bypass it', async () => {
    const proxy = closeAfterAll(await startForwardProxy());
    const table = await newTable(KEYS);
    const run = await runCli(['load', await input(10), '--table', table, '--types', TYPES], {
      cwd: dir(),
      env: env({ HTTP_PROXY: proxy.url, no_proxy: '127.0.0.1:1,example.com' }),
    });
    expect(run.code, run.stderr).toBe(0);
    expect(dynamoCalls(proxy.seen).length).toBeGreaterThanOrEqual(2);
  });

  it('HTTPS_PROXY alone does not take http traffic', async () => {
    const proxy = closeAfterAll(await startForwardProxy());
    const table = await newTable(KEYS);
    const run = await runCli(['load', await input(10), '--table', table, '--types', TYPES], { cwd: dir(), env: env({ HTTPS_PROXY: proxy.url }) });
    expect(run.code, run.stderr).toBe(0);
    expect(proxy.seen).toEqual([]);
  });
});

describe('CA bundle and TLS', () => {
  /** A TLS endpoint on loopback (self-signed for localhost) in front of DynamoDB Local, and its certificate. */
  async function tlsEndpoint(): Promise<{ url: string; certPath: string }> {
    const key = join(dir(), 'tls-key.pem');
    const certPath = join(dir(), 'tls-cert.pem');
    execFileSync(
      'openssl',
      [
        'req',
        '-x509',
        '-newkey',
        'ec',
        '-pkeyopt',
        'ec_paramgen_curve:prime256v1',
        '-nodes',
        '-keyout',
        key,
        '-out',
        certPath,
        '-days',
        '1',
        '-subj',
        '/CN=localhost',
        '-addext',
        'subjectAltName=DNS:localhost,IP:127.0.0.1',
      ],
      { stdio: 'ignore' },
    );
    const upstream = new URL(endpoint);
    const sockets = new Set<Socket>();
    const server = createTlsServer({ key: await readFile(key), cert: await readFile(certPath) }, (tls) => {
      const plain = connect(Number(upstream.port), upstream.hostname);
      tls.pipe(plain).pipe(tls);
      for (const s of [tls, plain]) {
        sockets.add(s);
        s.on('error', () => {
          tls.destroy();
          plain.destroy();
        });
        s.on('close', () => sockets.delete(s));
      }
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    closeAfterAll({
      close: () =>
        new Promise<void>((resolve) => {
          for (const s of sockets) s.destroy();
          server.close(() => resolve());
        }),
    });
    return { url: `https://localhost:${(server.address() as AddressInfo).port}`, certPath };
  }

  it('--ca-bundle and AWS_CA_BUNDLE make a self-signed endpoint trusted; without them it is refused', async () => {
    const { url, certPath } = await tlsEndpoint();
    const table = await newTable(KEYS);
    const rows = await input(30);
    const args = ['load', rows, '--table', table, '--types', TYPES, '--endpoint-url', url];
    const untrusted = await runCli(args, { cwd: dir(), env: env() });
    expect(untrusted.code).not.toBe(0);
    expect(untrusted.stderr).toMatch(/self[- ]signed|certificate/i);
    const withFlag = await runCli([...args, '--ca-bundle', certPath], { cwd: dir(), env: env() });
    expect(withFlag.code, withFlag.stderr).toBe(0);
    const withEnv = await runCli(args, { cwd: dir(), env: env({ AWS_CA_BUNDLE: certPath }) });
    expect(withEnv.code, withEnv.stderr).toBe(0);
    expect((await scanAll(client(), table)).length).toBe(30);
  });

  it('an https endpoint goes through HTTPS_PROXY as a CONNECT tunnel, with the CA bundle for the endpoint', async () => {
    const { url, certPath } = await tlsEndpoint();
    const proxy = closeAfterAll(await startForwardProxy());
    const table = await newTable(KEYS);
    const run = await runCli(['load', await input(30), '--table', table, '--types', TYPES, '--endpoint-url', url, '--ca-bundle', certPath], {
      cwd: dir(),
      env: env({ HTTPS_PROXY: proxy.url }),
    });
    expect(run.code, run.stderr).toBe(0);
    expect(proxy.seen.filter((s) => s === `CONNECT localhost:${new URL(url).port}`).length).toBeGreaterThanOrEqual(1);
    expect(proxy.seen.filter((s) => s.startsWith('POST'))).toEqual([]);
  });

  it.each([
    ['--ca-bundle', (path: string) => ({ args: ['--ca-bundle', path], extra: {} })],
    ['AWS_CA_BUNDLE', (path: string) => ({ args: [], extra: { AWS_CA_BUNDLE: path } })],
  ])('a missing %s file is one clear usage error naming the file, before anything is written', async (source, how) => {
    const missing = join(dir(), 'no-such-ca.pem');
    const { args, extra } = how(missing);
    const table = await newTable(KEYS);
    const run = await runCli(['load', await input(5), '--table', table, '--types', TYPES, ...args], { cwd: dir(), env: env(extra) });
    expect(run.code).toBe(64);
    expect(run.stderr).toContain(`cannot read the CA bundle ${missing} (${source})`);
    expect(run.stderr).not.toMatch(/^\s+at /m);
    expect((await scanAll(client(), table)).length).toBe(0);
  });
});

describe('region and retry variables', () => {
  it('AWS_DEFAULT_REGION is a region, as for the AWS CLI', async () => {
    const table = await newTable(KEYS);
    const base = env({ AWS_DEFAULT_REGION: 'eu-west-1' });
    delete base['AWS_REGION'];
    const run = await runCli(['load', await input(10), '--table', table, '--types', TYPES], { cwd: dir(), env: base });
    expect(run.code, run.stderr).toBe(0);
    expect(run.stderr).not.toContain('no AWS region');
  });

  it('AWS_MAX_ATTEMPTS and AWS_RETRY_MODE get one line saying --max-attempts is the retry setting; --json stdout stays one object', async () => {
    const table = await newTable(KEYS);
    const run = await runCli(['load', await input(10), '--table', table, '--types', TYPES, '--json', '--max-attempts', '7'], {
      cwd: dir(),
      env: env({ AWS_MAX_ATTEMPTS: '3', AWS_RETRY_MODE: 'adaptive' }),
    });
    expect(run.code, run.stderr).toBe(0);
    const lines = run.stderr.split('\n').filter((l) => l.includes('AWS_MAX_ATTEMPTS'));
    expect(lines).toEqual([expect.stringMatching(/AWS_MAX_ATTEMPTS=3 and AWS_RETRY_MODE=adaptive are ignored: .*--max-attempts \(now 7\)/)]);
    expect(JSON.parse(run.stdout)).toMatchObject({ written: 10 });
  });
});
