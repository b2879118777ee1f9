/**
 * A container credential endpoint (ECS task role, EKS Pod Identity) that fails for a while is
 * retried instead of ending the load; one that never answers ends it with 75 (worth retrying), not 77.
 * The endpoint is a real loopback HTTP server; AWS_CONTAINER_CREDENTIALS_FULL_URI points the SDK at it.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { assertCliBuilt, runCli } from '../support/cli.js';
import { scanAll } from '../support/ddb.js';
import { localEnv } from '../support/env.js';
import { GENERATED_TYPES_FLAG, writeGeneratedCsv } from '../support/generateRows.js';
import { useLocalAws } from '../support/localAws.js';

const KEYS = { partitionKey: { name: 'pk', type: 'S' as const }, sortKey: { name: 'sk', type: 'N' as const } };
const TYPES = GENERATED_TYPES_FLAG;

beforeAll(assertCliBuilt);
const { endpoint, client, dir, newTable, closeAfterAll } = useLocalAws({ name: 'credentials' });

/** A credential endpoint that answers 503 to its first `failures` requests, then credentials. */
async function credentialEndpoint(failures: number): Promise<{ url: string; requests: () => number }> {
  let requests = 0;
  const server: Server = createServer((_req, res) => {
    requests++;
    if (requests <= failures) {
      res.writeHead(503).end('try later');
      return;
    }
    const expiration = new Date(Date.now() + 3600_000).toISOString();
    res
      .writeHead(200, { 'content-type': 'application/json' })
      .end(JSON.stringify({ AccessKeyId: 'ASIALOCAL', SecretAccessKey: 'local', Token: 'local', Expiration: expiration }));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  closeAfterAll({ close: () => new Promise<void>((resolve) => server.close(() => resolve())) });
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/v2/credentials`, requests: () => requests };
}

/** localEnv with the credentials coming only from the container endpoint. */
function containerEnv(url: string): NodeJS.ProcessEnv {
  const env = localEnv(endpoint);
  for (const name of [
    'AWS_ACCESS_KEY_ID',
    'AWS_SECRET_ACCESS_KEY',
    'AWS_SESSION_TOKEN',
    'AWS_PROFILE',
    'AWS_CONTAINER_CREDENTIALS_RELATIVE_URI',
    'AWS_WEB_IDENTITY_TOKEN_FILE',
  ])
    delete env[name];
  return {
    ...env,
    AWS_CONFIG_FILE: join(dir(), 'no-config'),
    AWS_SHARED_CREDENTIALS_FILE: join(dir(), 'no-credentials'),
    AWS_CONTAINER_CREDENTIALS_FULL_URI: url,
    AWS_EC2_METADATA_DISABLED: 'true',
  };
}

describe('container credential endpoint', () => {
  it('failing for its first requests: the load waits for it and writes every row (exit 0)', async () => {
    // One credential lookup makes about 5 requests (the SDK retries the endpoint); 6 failures fail the
    // first lookup whole, so only ddb-spread's retry gets the load through.
    const creds = await credentialEndpoint(6);
    const input = join(dir(), 'rows.csv');
    await writeGeneratedCsv(input, 50);
    const table = await newTable(KEYS);
    const run = await runCli(['load', input, '--table', table, '--types', TYPES], { cwd: dir(), env: containerEnv(creds.url), timeoutMs: 90_000 });
    expect(run.code, run.stderr).toBe(0);
    expect(creds.requests()).toBeGreaterThan(6);
    expect((await scanAll(client(), table)).length).toBe(50);
  }, 120_000);

  it('never answering: exit 75 (temporary), with one sentence, not 77 (access denied)', async () => {
    const creds = await credentialEndpoint(Number.MAX_SAFE_INTEGER);
    const input = join(dir(), 'never.csv');
    await writeGeneratedCsv(input, 5);
    const table = await newTable(KEYS);
    const run = await runCli(['load', input, '--table', table, '--types', TYPES], { cwd: dir(), env: containerEnv(creds.url), timeoutMs: 110_000 });
    expect(run.code, run.stderr).toBe(75);
    expect(run.stderr).toMatch(/ddb-spread: error: could not get AWS credentials .*usually temporary/);
    expect(run.stderr).not.toMatch(/^\s+at /m);
    expect((await scanAll(client(), table)).length).toBe(0);
  }, 120_000);

  it('failing in the middle of the load, once the first credentials expired: the batches wait and every row lands', async () => {
    // Credentials valid for 1 s; from 1 s to 5 s after its first request the endpoint answers 503, so the
    // calls in that window find expired credentials and no new ones (the SDK's lookup fails whole).
    let start: number | undefined;
    let failed = 0;
    const server: Server = createServer((_req, res) => {
      start ??= Date.now();
      const t = Date.now() - start;
      if (t >= 1000 && t < 5000) {
        failed++;
        res.writeHead(503).end('try later');
        return;
      }
      res
        .writeHead(200, { 'content-type': 'application/json' })
        .end(JSON.stringify({ AccessKeyId: 'ASIALOCAL', SecretAccessKey: 'local', Token: 'local', Expiration: new Date(Date.now() + 1000).toISOString() }));
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    closeAfterAll({ close: () => new Promise<void>((resolve) => server.close(() => resolve())) });
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/v2/credentials`;
    const input = join(dir(), 'middle.csv');
    await writeGeneratedCsv(input, 150);
    const table = await newTable(KEYS);
    // 150 rows at 20 WCU/s: about 7 s, so the load is writing through the whole window.
    const run = await runCli(['load', input, '--table', table, '--types', TYPES, '--concurrency', '1', '--wcu', '20', '--json'], {
      cwd: dir(),
      env: containerEnv(url),
      timeoutMs: 110_000,
    });
    expect(run.code, run.stderr).toBe(0);
    expect(failed).toBeGreaterThan(0);
    expect(JSON.parse(run.stdout)).toMatchObject({ written: 150, rejected: 0 });
    expect((await scanAll(client(), table)).length).toBe(150);
  }, 120_000);
});
