/**
 * Endpoints, regions, credentials and profiles in the AWS CLI's terms, as a new user meets them: a URL
 * without its scheme, a misspelt scheme, https:// to DynamoDB Local, an S3 server where DynamoDB was
 * meant, a region with underscores, no credentials at all, a profile that does not exist, and a profile
 * whose endpoint_url (or services section) is the only thing pointing at DynamoDB Local. Each one is a
 * single sentence and an exit code a scheduler can act on, before anything is written; a flag and its
 * environment variable behave the same; no secret is ever printed.
 */
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { assertCliBuilt, runCli, type ProcessRun } from '../support/cli.js';
import { scanAll } from '../support/ddb.js';
import { localEnv } from '../support/env.js';
import { useLocalAws } from '../support/localAws.js';
import { newBucket, putObjects, s3Client, s3Endpoint } from '../support/s3.js';

const KEYS = { partitionKey: { name: 'id', type: 'S' as const } };
const SECRET = 'wJalrXUtnFEMI-never-printed';
const ROWS = 'id,total\no-1,3\no-2,4\no-3,5\n';

beforeAll(assertCliBuilt);
const { endpoint, client, dir, newTable } = useLocalAws({ name: 'awsterms', keys: KEYS });

/** The environment of a machine whose only AWS settings are the files in the test's folder. */
function bareEnv(extra: NodeJS.ProcessEnv = {}): NodeJS.ProcessEnv {
  const env = localEnv(endpoint);
  for (const name of [
    'AWS_ACCESS_KEY_ID',
    'AWS_SECRET_ACCESS_KEY',
    'AWS_REGION',
    'AWS_DEFAULT_REGION',
    'AWS_ENDPOINT_URL_DYNAMODB',
    'AWS_ENDPOINT_URL',
    'AWS_ENDPOINT_URL_S3',
  ])
    delete env[name];
  return {
    ...env,
    AWS_CONFIG_FILE: join(dir(), 'config'),
    AWS_SHARED_CREDENTIALS_FILE: join(dir(), 'credentials'),
    // No instance metadata on a test machine: the chain would wait for it before giving up.
    AWS_EC2_METADATA_DISABLED: 'true',
    ...extra,
  };
}

/** localEnv's credentials and region, with the endpoint left to the command line. */
const keysEnv = (extra: NodeJS.ProcessEnv = {}) => bareEnv({ AWS_ACCESS_KEY_ID: 'local', AWS_SECRET_ACCESS_KEY: SECRET, AWS_REGION: 'us-east-1', ...extra });

async function input(): Promise<string> {
  const path = join(dir(), 'orders.csv');
  await writeFile(path, ROWS);
  return path;
}

/** One sentence on stderr, no stack, no SDK internals, no secret. */
function expectOneSentence(run: ProcessRun, code: number, sentence: string | RegExp): void {
  expect(run.code, run.stderr).toBe(code);
  const errors = run.stderr.split('\n').filter((line) => line.startsWith('ddb-spread: error: '));
  expect(errors).toHaveLength(1);
  expect(errors[0]).toMatch(sentence);
  expect(run.stderr).not.toMatch(/^\s+at |TypeError|SyntaxError|\$response|Region not accepted|CredentialsProviderError|was refused/m);
  expect(run.stderr + run.stdout).not.toContain(SECRET);
}

describe('endpoints', () => {
  it('a URL without its scheme, flag or variable: exit 64 "Invalid endpoint", with the URL to write instead', async () => {
    const table = await newTable();
    const hostPort = endpoint.replace(/^http:\/\//, '');
    const flag = await runCli(['load', await input(), '--table', table, '--endpoint-url', hostPort], { cwd: dir(), env: keysEnv() });
    expectOneSentence(flag, 64, `Invalid endpoint: ${hostPort} (--endpoint-url): the scheme is missing; write it as http://${hostPort}`);
    const variable = await runCli(['load', await input(), '--table', table], { cwd: dir(), env: keysEnv({ AWS_ENDPOINT_URL_DYNAMODB: hostPort }) });
    expectOneSentence(variable, 64, `Invalid endpoint: ${hostPort} (AWS_ENDPOINT_URL_DYNAMODB): the scheme is missing`);
    const misspelt = await runCli(['estimate', await input(), '--table', table, '--endpoint-url', `htp://${hostPort}`], { cwd: dir(), env: keysEnv() });
    expectOneSentence(misspelt, 64, `Invalid endpoint: htp://${hostPort} (--endpoint-url): the scheme must be http or https, not htp`);
    // The S3 client's endpoint is checked alike.
    const s3 = await runCli(['load', 's3://bucket/orders.csv', '--table', table, '--s3-endpoint-url', 'localhost:9000'], {
      cwd: dir(),
      env: keysEnv({ AWS_ENDPOINT_URL_DYNAMODB: endpoint }),
    });
    expectOneSentence(s3, 64, 'Invalid endpoint: localhost:9000 (--s3-endpoint-url): the scheme is missing; write it as http://localhost:9000');
    expect(await scanAll(client(), table)).toHaveLength(0);
  });

  it('https:// to a plain-HTTP endpoint: exit 78, "answered the TLS handshake in plain HTTP", with the http:// URL', async () => {
    const table = await newTable();
    const https = endpoint.replace(/^http:/, 'https:');
    const run = await runCli(['load', await input(), '--table', table, '--endpoint-url', https], { cwd: dir(), env: keysEnv() });
    expectOneSentence(run, 78, `${https} (set by --endpoint-url) answered the TLS handshake in plain HTTP: it is an http:// endpoint; write it as ${endpoint}`);
    expect(await scanAll(client(), table)).toHaveLength(0);
  });

  it('an S3 server where DynamoDB was meant (load, estimate, query alike): exit 78, naming the endpoint and what it answered', async () => {
    const table = await newTable();
    const s3 = s3Endpoint();
    for (const args of [
      ['load', await input(), '--table', table],
      ['estimate', await input(), '--table', table],
      ['query', '--table', table, '--key', 'o-1', '--shard', 'hash:2'],
    ]) {
      const run = await runCli(args, { cwd: dir(), env: keysEnv({ AWS_ENDPOINT_URL: s3 }) });
      expectOneSentence(run, 78, new RegExp(`${s3.replace(/[.]/g, '\\.')} (\\(set by AWS_ENDPOINT_URL\\) )?is not a DynamoDB endpoint: it answered HTTP \\d+`));
    }
    expect(await scanAll(client(), table)).toHaveLength(0);
  });
});

describe('regions', () => {
  it('us_east_1 from --region, AWS_REGION or AWS_DEFAULT_REGION: exit 64 in the AWS CLI words, with the likely region', async () => {
    const table = await newTable();
    const args = ['load', await input(), '--table', table, '--endpoint-url', endpoint];
    expectOneSentence(
      await runCli([...args, '--region', 'us_east_1'], { cwd: dir(), env: keysEnv() }),
      64,
      "Provided region_name 'us_east_1' (--region) doesn't match a supported format: did you mean us-east-1?",
    );
    expectOneSentence(await runCli(args, { cwd: dir(), env: keysEnv({ AWS_REGION: 'us_east_1' }) }), 64, "'us_east_1' (AWS_REGION)");
    const onlyDefault = keysEnv({ AWS_DEFAULT_REGION: 'eu west 1' });
    delete onlyDefault['AWS_REGION'];
    expectOneSentence(
      await runCli(args, { cwd: dir(), env: onlyDefault }),
      64,
      "'eu west 1' (AWS_DEFAULT_REGION) doesn't match a supported format: did you mean eu-west-1?",
    );
    expect(await scanAll(client(), table)).toHaveLength(0);
  });
});

describe('credentials and profiles', () => {
  it('no credentials anywhere: exit 78 "Unable to locate credentials", not 77 "access was refused"', async () => {
    await writeFile(join(dir(), 'config'), '');
    await writeFile(join(dir(), 'credentials'), '');
    const table = await newTable();
    const run = await runCli(['load', await input(), '--table', table, '--endpoint-url', endpoint, '--region', 'us-east-1'], { cwd: dir(), env: bareEnv() });
    expectOneSentence(run, 78, /Unable to locate credentials\. You can configure credentials by running "aws configure"/);
  });

  it('a profile that does not exist, by --profile or AWS_PROFILE: exit 64 "The config profile (nosuch) could not be found"', async () => {
    await writeFile(join(dir(), 'config'), '[profile other]\nregion = us-east-1\n');
    const table = await newTable();
    const args = ['load', await input(), '--table', table, '--endpoint-url', endpoint];
    expectOneSentence(
      await runCli([...args, '--profile', 'nosuch'], { cwd: dir(), env: keysEnv() }),
      64,
      'The config profile (nosuch) could not be found (--profile)',
    );
    expectOneSentence(
      await runCli(args, { cwd: dir(), env: keysEnv({ AWS_PROFILE: 'nosuch' }) }),
      64,
      'The config profile (nosuch) could not be found (AWS_PROFILE)',
    );
    expect(await scanAll(client(), table)).toHaveLength(0);
  });

  it("--profile and AWS_PROFILE alike: the profile's endpoint_url, and its services section for DynamoDB and S3 (load and query)", async () => {
    const s3 = s3Client();
    const bucket = await newBucket(s3);
    await putObjects(s3, bucket, { 'in/orders.csv': ROWS });
    await writeFile(
      join(dir(), 'config'),
      [
        '[profile local]',
        'region = us-east-1',
        `endpoint_url = ${endpoint}`,
        '[profile both]',
        'region = us-east-1',
        'services = localstack',
        '[services localstack]',
        'dynamodb =',
        `  endpoint_url = ${endpoint}`,
        's3 =',
        `  endpoint_url = ${s3Endpoint()}`,
        '',
      ].join('\n'),
    );
    await writeFile(
      join(dir(), 'credentials'),
      `[local]\naws_access_key_id = local\naws_secret_access_key = ${SECRET}\n[both]\naws_access_key_id = local\naws_secret_access_key = ${SECRET}\n`,
    );
    const runs: Array<[string[], NodeJS.ProcessEnv]> = [
      [['load', await input(), '--profile', 'local'], bareEnv()],
      [['load', await input()], bareEnv({ AWS_PROFILE: 'local' })],
      [['load', `s3://${bucket}/in/orders.csv`, '--s3-path-style', '--profile', 'both'], bareEnv()],
      [['load', `s3://${bucket}/in/orders.csv`, '--s3-path-style'], bareEnv({ AWS_PROFILE: 'both' })],
    ];
    for (const [args, env] of runs) {
      const table = await newTable();
      const run = await runCli([...args, '--table', table, '--json'], { cwd: dir(), env });
      expect(run.code, run.stderr).toBe(0);
      expect(JSON.parse(run.stdout)).toMatchObject({ written: 3, rejected: 0 });
      expect((await scanAll(client(), table)).length).toBe(3);
      expect(run.stderr + run.stdout).not.toContain(SECRET);
      // The load was not sharded: its key is read back as one Query (random:2 names no key of this load).
      const profile = args.includes('--profile') ? ['--profile', args[args.indexOf('--profile') + 1]!] : [];
      const read = ['query', '--table', table, '--key', 'o-2', '--shard', 'random:2', '--shard-seed', '1', '--shard-keys', 'o-9', ...profile];
      const query = await runCli(read, { cwd: dir(), env });
      expect(query.code, query.stderr).toBe(0);
      expect(JSON.parse(query.stdout)).toMatchObject({ id: 'o-2', total: '4' });
    }
  });
});
