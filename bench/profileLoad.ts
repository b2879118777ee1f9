/**
 * Profiles one CLI load into DynamoDB Local (profile before changing anything):
 *   npx tsx bench/profileLoad.ts --input f.csv [--sink] [--bin path] [--out dir] [-- extra load flags]
 * Starts DynamoDB Local, creates the bench table, runs the built CLI under `node --cpu-prof`, and prints
 * the self time per function (top 25) and per package. Needs a built dist/ (npm run build). Not a test.
 * --sink loads into bench/instantSink.ts instead, which answers every call at once: only the client's
 * own time is left. --bin runs another build of the CLI (e.g. one of an older commit, for comparison).
 */
import { spawn } from 'node:child_process';
import { mkdirSync, readdirSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { startDynamoDBLocal } from '../tools/dynamodbLocal.js';
import { startInstantSink } from './instantSink.js';
import { adminClient, createBenchTable } from './tables.js';

const { values, positionals } = parseArgs({
  options: { input: { type: 'string' }, out: { type: 'string' }, sink: { type: 'boolean' }, bin: { type: 'string' } },
  allowPositionals: true,
});
if (!values.input) throw new Error('--input <csv> is required (bench/data.ts shape: pk, sk, amount, qty)');
const out = resolve(values.out ?? 'bench/results/profile');
mkdirSync(out, { recursive: true });
const local = values.sink ? await startInstantSink() : await startDynamoDBLocal();
try {
  const admin = adminClient(local.endpoint);
  const table = `profile-${Date.now()}`;
  if (!values.sink) await createBenchTable(admin, table);
  const env = { ...process.env, AWS_ACCESS_KEY_ID: 'local', AWS_SECRET_ACCESS_KEY: 'local', AWS_REGION: 'us-east-1' };
  const args = [
    '--cpu-prof',
    '--cpu-prof-dir',
    out,
    values.bin ?? 'bin/ddb-spread.js',
    'load',
    values.input,
    '--table',
    table,
    '--endpoint-url',
    local.endpoint,
    '--types',
    'amount:N,qty:N',
    '--rejects',
    join(out, 'rejects.jsonl'),
    ...positionals,
  ];
  const t0 = performance.now();
  // Not spawnSync: the instant sink answers from this process's event loop.
  const child = spawn(process.execPath, args, { env, stdio: ['ignore', 'inherit', 'inherit'] });
  const status = await new Promise<number | null>((resolveExit) => child.once('close', resolveExit));
  console.log(`exit ${status} after ${((performance.now() - t0) / 1000).toFixed(1)} s`);
  admin.destroy();
} finally {
  await ('stop' in local ? local.stop() : local.close());
}
const newest = readdirSync(out)
  .filter((f) => f.endsWith('.cpuprofile'))
  .sort()
  .at(-1)!;
summarize(JSON.parse(readFileSync(join(out, newest), 'utf8')) as Profile, join(out, newest));

interface Profile {
  nodes: { id: number; callFrame: { functionName: string; url: string; lineNumber: number } }[];
  samples: number[];
  timeDeltas: number[];
}

/** Self time per function and per package (node_modules/<pkg>, our dist/ folder, node internals). */
function summarize(profile: Profile, path: string): void {
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  const self = new Map<number, number>();
  profile.samples.forEach((id, i) => self.set(id, (self.get(id) ?? 0) + (profile.timeDeltas[i] ?? 0)));
  const byFunction = new Map<string, number>();
  const byPackage = new Map<string, number>();
  let total = 0;
  for (const [id, us] of self) {
    const frame = byId.get(id)!.callFrame;
    total += us;
    const where = frame.url.replace(/^file:\/\//, '');
    const pkg = where.includes('node_modules/')
      ? where
          .split('node_modules/')
          .at(-1)!
          .split('/')
          .slice(0, where.includes('node_modules/@') ? 2 : 1)
          .join('/')
      : where.includes('/dist/')
        ? `dist/${where.split('/dist/')[1]!.split('/')[0]}`
        : where === ''
          ? `(${frame.functionName || 'native'})`
          : 'node';
    const fn = `${frame.functionName || '(anonymous)'} ${where.split('/').slice(-2).join('/')}:${frame.lineNumber + 1}`;
    byFunction.set(fn, (byFunction.get(fn) ?? 0) + us);
    byPackage.set(pkg, (byPackage.get(pkg) ?? 0) + us);
  }
  const print = (title: string, map: Map<string, number>, n: number) => {
    console.log(`\n${title}`);
    for (const [name, us] of [...map].sort((a, b) => b[1] - a[1]).slice(0, n))
      console.log(`${(us / 1e6).toFixed(2).padStart(7)} s  ${((us / total) * 100).toFixed(1).padStart(5)}%  ${name}`);
  };
  console.log(`profile ${path}: ${(total / 1e6).toFixed(1)} s sampled`);
  print('self time by package', byPackage, 15);
  print('self time by function', byFunction, 25);
}
