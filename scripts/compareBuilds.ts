/**
 * `tsx scripts/compareBuilds.ts <git-ref>`: runs one set of scenarios through the build of <git-ref> and
 * through this tree's build, each against its own tables in one DynamoDB Local, and prints every
 * difference in what a user gets: exit code, stdout, stderr, the table's items, reject files, checkpoints,
 * reports and shard manifests. A change meant to preserve behaviour (a refactor) shows none.
 *
 * What is normalised before the comparison, because it differs between any two runs: table names,
 * temporary paths, timestamps, durations, rates, ETAs, process ids, host names and memory figures.
 *
 *   npm run build && tsx scripts/compareBuilds.ts main      # exit 0: no difference; 1: differences shown
 */
import { CreateTableCommand, DynamoDBClient, ScanCommand, type AttributeValue } from '@aws-sdk/client-dynamodb';
import { execFileSync, spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, readFile, readdir, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { startDynamoDBLocal } from '../tools/dynamodbLocal.js';

const root = fileURLToPath(new URL('..', import.meta.url));
const ref = process.argv[2];
if (ref === undefined) {
  process.stderr.write('usage: tsx scripts/compareBuilds.ts <git-ref>\n');
  process.exit(64);
}

interface Scenario {
  name: string;
  /** The table's key schema, or none when the scenario needs no table. */
  keys?: { pk: string; sk?: string };
  /** Arguments after `ddb-spread`; `$T` is the table, `$W` the scenario's work folder, `$E` the endpoint. */
  args: string[];
  /** Files in $W to compare after the run (relative names). */
  files?: string[];
  /** Run again with the same arguments (a resume or an already complete checkpoint). */
  twice?: boolean;
}

const orderKeys = { pk: 'customerId', sk: 'orderId' };
const types = ['--types', 'total:N,gift:BOOL,items:JSON'];
const scenarios: Scenario[] = [
  {
    name: 'csv load',
    keys: orderKeys,
    args: ['load', 'samples/orders.csv', ...types, '--json', '--rejects', '$W/r.jsonl', '--report', '$W/report.json'],
    files: ['r.jsonl', 'report.json'],
  },
  { name: 'csv load, text summary', keys: orderKeys, args: ['load', 'samples/orders.csv', ...types, '--rejects', '$W/r.jsonl'], files: ['r.jsonl'] },
  { name: 'rejects', keys: orderKeys, args: ['load', 'samples/orders-with-errors.csv', ...types, '--json', '--rejects', '$W/r.jsonl'], files: ['r.jsonl'] },
  {
    name: 'strict rejects',
    keys: orderKeys,
    args: ['load', 'samples/orders-with-errors.csv', ...types, '--strict', '--rejects', '$W/r.jsonl'],
    files: ['r.jsonl'],
  },
  { name: 'jsonl', keys: orderKeys, args: ['load', 'samples/orders.jsonl', '--json', '--rejects', '$W/r.jsonl'], files: ['r.jsonl'] },
  {
    name: 'dynamodb json',
    keys: orderKeys,
    args: ['load', 'samples/orders.ddb.jsonl', '--input-format', 'ddb-json', '--json', '--rejects', '$W/r.jsonl'],
    files: ['r.jsonl'],
  },
  {
    name: 'folder of parts',
    keys: { pk: 'pk', sk: 'sk' },
    args: ['load', '$W/parts', '--types', 'sk:N', '--json', '--rejects', '$W/r.jsonl'],
    files: ['r.jsonl'],
  },
  {
    name: 'sorted file, stripes',
    keys: { pk: 'pk', sk: 'sk' },
    args: ['load', '$W/sorted.csv', '--types', 'sk:N', '--json', '--rejects', '$W/r.jsonl', '--checkpoint', '$W/ck.json'],
    files: ['r.jsonl', 'ck.json'],
    twice: true,
  },
  ...(['input', 'window', 'round-robin', 'spread'] as const).map((order) => ({
    name: `order ${order}`,
    keys: { pk: 'pk', sk: 'sk' },
    args: ['load', '$W/sorted.csv', '--types', 'sk:N', '--order', order, '--json', '--rejects', '$W/r.jsonl'],
    files: ['r.jsonl'],
  })),
  {
    name: 'shard hash',
    keys: orderKeys,
    args: [
      'load',
      'samples/orders.csv',
      ...types,
      '--shard',
      'hash:4',
      '--shard-seed',
      '7',
      '--shard-manifest',
      '$W/m.json',
      '--json',
      '--rejects',
      '$W/r.jsonl',
    ],
    files: ['m.json', 'r.jsonl'],
  },
  {
    name: 'segment 0/2',
    keys: { pk: 'pk', sk: 'sk' },
    args: ['load', '$W/sorted.csv', '--types', 'sk:N', '--segment', '0/2', '--json', '--rejects', '$W/r.jsonl'],
    files: ['r.jsonl'],
  },
  { name: 'dry run', keys: orderKeys, args: ['load', 'samples/orders.csv', ...types, '--dry-run', '--json', '--rejects', '$W/r.jsonl'], files: ['r.jsonl'] },
  { name: 'estimate', keys: { pk: 'pk', sk: 'sk' }, args: ['estimate', '$W/sorted.csv', '--types', 'sk:N', '--json'] },
  { name: 'estimate text', keys: { pk: 'pk', sk: 'sk' }, args: ['estimate', '$W/sorted.csv', '--types', 'sk:N'] },
  { name: 'query', keys: orderKeys, args: ['query', '--key', 'cust-0001', '--shard', 'hash:4'] },
  { name: 'usage: bad wcu', keys: orderKeys, args: ['load', 'samples/orders.csv', '--wcu', 'fast'] },
  { name: 'usage: no table', args: ['load', 'samples/orders.csv', '--endpoint-url', '$E'] },
  { name: 'usage: unknown flag', keys: orderKeys, args: ['load', 'samples/orders.csv', '--no-such-flag'] },
  { name: 'missing table', args: ['load', 'samples/orders.csv', '--table', 'NoSuchTable', '--endpoint-url', '$E', '--rejects', '$W/r.jsonl'] },
  { name: 'missing input', keys: orderKeys, args: ['load', '$W/nothing.csv'] },
];

const creds = { accessKeyId: 'local', secretAccessKey: 'local' };

async function fixtures(work: string): Promise<void> {
  await mkdir(join(work, 'parts'), { recursive: true });
  for (const part of ['a', 'b', 'c']) {
    const rows = Array.from({ length: 300 }, (_, i) => `${part}-${i % 17},${i}`);
    await writeFile(join(work, 'parts', `${part}.csv`), `pk,sk\n${rows.join('\n')}\n`);
  }
  await writeFile(join(work, 'parts', '_SUCCESS'), '');
  const sorted = Array.from({ length: 30000 }, (_, i) => `k${String(Math.floor(i / 40)).padStart(4, '0')},${i}`);
  await writeFile(join(work, 'sorted.csv'), `pk,sk\n${sorted.join('\n')}\nbad-row-without-sk\n`);
}

interface Outcome {
  code: number;
  stdout: string;
  stderr: string;
  files: Record<string, string>;
  items: string[];
}

function run(bin: string, args: string[], env: NodeJS.ProcessEnv): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((done, fail) => {
    const child = spawn(process.execPath, [bin, ...args], { cwd: root, env, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    child.on('error', fail);
    child.on('exit', (code) => done({ code: code ?? 1, stdout, stderr }));
  });
}

/** What differs between any two runs, replaced by placeholders. */
function normalise(text: string, table: string, work: string): string {
  return text
    .split('\n')
    .filter((line) => !/progress: /.test(line)) // printed on a timer: how many there are and what they say is timing
    .join('\n')
    .replaceAll(work, '$W')
    .replaceAll(table, '$T')
    .replace(/\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z/g, '<time>')
    .replace(/http:\/\/127\.0\.0\.1:\d+/g, '<endpoint>')
    .replace(/"(pid|host|hostname)":\s*("[^"]*"|\d+)/g, '"$1":"<$1>"')
    .replace(
      /"(peakWcu|averageWcu|[A-Za-z]*(Ms|Seconds|Sec|At|Rate|PerSecond|Bytes|Rss|rss|cpu|Cpu|eta|Eta|elapsed|Elapsed|duration|Duration))":\s*-?[\d.e+-]+/g,
      '"$1":"<n>"',
    )
    .replace(/\b\d+(\.\d+)?\s?(ms|s|min|h|µs|MB|KB|GB|MiB|KiB)\b/g, '<n $2>')
    .replace(/\b\d[\d,]*(\.\d+)?\s?(WCU\/s|items\/s|rows\/s|WCU|\/s)\b/g, '<n $2>')
    .replace(/pid \d+/g, 'pid <pid>')
    .replace(/average [\d,.]+/g, 'average <n>');
}

async function runScenarios(bin: string, label: string, endpoint: string, client: DynamoDBClient): Promise<Map<string, Outcome>> {
  const outcomes = new Map<string, Outcome>();
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    AWS_ACCESS_KEY_ID: 'local',
    AWS_SECRET_ACCESS_KEY: 'local',
    AWS_REGION: 'us-east-1',
    AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: 'true',
    NO_COLOR: '1',
  };
  delete env.AWS_PROFILE;
  for (const [n, scenario] of scenarios.entries()) {
    const work = await mkdtemp(join(tmpdir(), `ddb-spread-compare-${label}-`));
    await fixtures(work);
    const table = `cmp_${label}_${n}_${Date.now().toString(36)}`;
    if (scenario.keys) {
      const { pk, sk } = scenario.keys;
      await client.send(
        new CreateTableCommand({
          TableName: table,
          BillingMode: 'PAY_PER_REQUEST',
          AttributeDefinitions: [
            { AttributeName: pk, AttributeType: 'S' },
            ...(sk ? [{ AttributeName: sk, AttributeType: sk === 'sk' ? ('N' as const) : ('S' as const) }] : []),
          ],
          KeySchema: [{ AttributeName: pk, KeyType: 'HASH' }, ...(sk ? [{ AttributeName: sk, KeyType: 'RANGE' as const }] : [])],
        }),
      );
      if (scenario.name === 'query')
        await run(
          bin,
          [
            'load',
            'samples/orders.csv',
            ...types,
            '--shard',
            'hash:4',
            '--shard-manifest',
            join(work, 'qm.json'),
            '--table',
            table,
            '--endpoint-url',
            endpoint,
            '--rejects',
            join(work, 'pre.jsonl'),
          ],
          env,
        );
    }
    const args = scenario.args.map((a) => a.replaceAll('$W', work).replaceAll('$T', table).replaceAll('$E', endpoint));
    const full = scenario.keys ? [...args, '--table', table, '--endpoint-url', endpoint] : args;
    let result = await run(bin, full, env);
    if (scenario.twice) {
      const second = await run(bin, full, env);
      result = {
        code: result.code * 1000 + second.code,
        stdout: `${result.stdout}\n--- again ---\n${second.stdout}`,
        stderr: `${result.stderr}\n--- again ---\n${second.stderr}`,
      };
    }
    const files: Record<string, string> = {};
    for (const name of scenario.files ?? []) {
      const path = join(work, name);
      files[name] = existsSync(path) ? normalise(await readFile(path, 'utf8'), table, work) : '<absent>';
    }
    const items: string[] = [];
    if (scenario.keys) {
      let start: Record<string, AttributeValue> | undefined;
      do {
        const page = await client.send(new ScanCommand({ TableName: table, ExclusiveStartKey: start }));
        for (const item of page.Items ?? []) items.push(JSON.stringify(item, Object.keys(item).sort()));
        start = page.LastEvaluatedKey;
      } while (start);
      items.sort();
    }
    outcomes.set(scenario.name, {
      code: result.code,
      stdout: normalise(result.stdout, table, work),
      stderr: normalise(result.stderr, table, work),
      files,
      items,
    });
    await rm(work, { recursive: true, force: true });
    process.stderr.write(`compare: ${label}: ${scenario.name}: exit ${result.code}\n`);
  }
  return outcomes;
}

function lineDiff(a: string, b: string): string {
  const left = a.split('\n');
  const right = b.split('\n');
  const out: string[] = [];
  for (let i = 0; i < Math.max(left.length, right.length); i++) {
    if (left[i] !== right[i]) out.push(`  line ${i + 1}:\n    - ${left[i] ?? '<none>'}\n    + ${right[i] ?? '<none>'}`);
    if (out.length >= 8) break;
  }
  return out.join('\n');
}

const baseDir = await mkdtemp(join(tmpdir(), 'ddb-spread-base-'));
execFileSync('git', ['worktree', 'add', '--detach', baseDir, ref], { cwd: root, stdio: 'ignore' });
let differences = 0;
const local = await startDynamoDBLocal({ log: (m) => process.stderr.write(`compare: ${m}\n`) });
try {
  await symlink(join(root, 'node_modules'), join(baseDir, 'node_modules'));
  execFileSync('npx', ['tsc', '-p', 'tsconfig.json'], { cwd: baseDir, stdio: 'inherit' });
  const client = new DynamoDBClient({ endpoint: local.endpoint, region: 'us-east-1', credentials: creds });
  const before = await runScenarios(join(baseDir, 'bin/ddb-spread.js'), 'base', local.endpoint, client);
  const after = await runScenarios(resolve(root, 'bin/ddb-spread.js'), 'this', local.endpoint, client);
  for (const scenario of scenarios) {
    const a = before.get(scenario.name)!;
    const b = after.get(scenario.name)!;
    const diffs: string[] = [];
    if (a.code !== b.code) diffs.push(`exit code ${a.code} -> ${b.code}`);
    if (a.stdout !== b.stdout) diffs.push(`stdout:\n${lineDiff(a.stdout, b.stdout)}`);
    if (a.stderr !== b.stderr) diffs.push(`stderr:\n${lineDiff(a.stderr, b.stderr)}`);
    for (const name of Object.keys(a.files)) if (a.files[name] !== b.files[name]) diffs.push(`${name}:\n${lineDiff(a.files[name]!, b.files[name]!)}`);
    if (a.items.join('\n') !== b.items.join('\n'))
      diffs.push(`table: ${a.items.length} items -> ${b.items.length}\n${lineDiff(a.items.join('\n'), b.items.join('\n'))}`);
    if (diffs.length > 0) {
      differences++;
      process.stdout.write(`DIFFERENT  ${scenario.name}\n${diffs.join('\n')}\n`);
    } else process.stdout.write(`same       ${scenario.name} (exit ${a.code}, ${a.items.length} items)\n`);
  }
  process.stdout.write(`${scenarios.length - differences} of ${scenarios.length} scenarios the same against ${ref}\n`);
} finally {
  await local.stop();
  execFileSync('git', ['worktree', 'remove', '--force', baseDir], { cwd: root, stdio: 'ignore' });
  await readdir(baseDir).then(
    () => rm(baseDir, { recursive: true, force: true }),
    () => undefined,
  );
}
process.exit(differences === 0 ? 0 : 1);
