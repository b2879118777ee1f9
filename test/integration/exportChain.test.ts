/**
 * DynamoDB export chains, against DynamoDB Local and s3rver: a full export and its
 * incrementals, made as DynamoDB makes them (manifest-summary.json with tableArn, exportTime,
 * exportFromTime, exportToTime) from a simulated source table whose final state is the oracle.
 * - given out of order (FULL INCR2 INCR1) or with a window missing (FULL INCR2): refused before any write,
 *   naming the exports and the order (on d0a409d both exited 0 with a table the source never held);
 * - DynamoDB's own layout, `<prefix>/AWSDynamoDB/<ExportId>/` several times, given as AWSDynamoDB/ or as
 *   its parent, locally and in S3: read in chain order (on d0a409d every change record was rejected
 *   MISSING_KEY); two full exports there, or exports beside plain files: refused;
 * - --allow-broken-export-chain: loaded as given, with a warning that says what it risks.
 */
import { join } from 'node:path';
import { mkdir, writeFile } from 'node:fs/promises';
import { beforeAll, describe, expect, it } from 'vitest';
import { load, LoaderError, type LoadOptions } from '../../src/index.js';
import type { LoadEvent } from '../../src/reporting/events.js';
import { assertCliBuilt, runCli } from '../support/cli.js';
import { scanAll, type TableKeys } from '../support/ddb.js';
import { localEnv } from '../support/env.js';
import { buildExport, chainExports, simulateChain, writeExport, type ExportFixture, type SimulatedChain } from '../support/exportFixture.js';
import { useLocalAws } from '../support/localAws.js';
import { newBucket, putObjects, s3Client, s3Endpoint } from '../support/s3.js';

const KEYS: TableKeys = { partitionKey: { name: 'pk', type: 'S' }, sortKey: { name: 'sk', type: 'N' } };

const { endpoint, client, dir, newTable, dropTable } = useLocalAws({ name: 'exportchain', processCredentials: true, keys: KEYS });

beforeAll(assertCliBuilt);

let runs = 0;
const run = (options: Partial<LoadOptions> & Pick<LoadOptions, 'input' | 'table'>, events: LoadEvent[] = []) =>
  load(
    { endpoint, region: 'us-east-1', s3Endpoint: s3Endpoint(), s3PathStyle: true, rejectsPath: join(dir(), `chain-${++runs}.rejects.jsonl`), ...options },
    { onEvent: (e) => events.push(e) },
  );

type State = Map<string, string>;
const stateOf = (items: Iterable<Record<string, { S?: string; N?: string } | undefined>>): State => {
  const state: State = new Map();
  for (const item of items) state.set(`${item.pk!.S}/${item.sk!.N}`, `${item.v?.S}|${item.n?.N}`);
  return state;
};
const tableState = async (table: string) => stateOf((await scanAll(client(), table)) as Record<string, { S?: string; N?: string }>[]);
const oracle = (chain: SimulatedChain) => stateOf(chain.final.values());

/** How a table differs from the oracle, as the issue measured it. */
function diff(got: State, want: State): { missing: number; extra: number; changed: number } {
  let missing = 0;
  let changed = 0;
  for (const [key, value] of want) {
    if (!got.has(key)) missing++;
    else if (got.get(key) !== value) changed++;
  }
  const extra = [...got.keys()].filter((k) => !want.has(k)).length;
  return { missing, extra, changed };
}

/** The load must be refused; a load that runs instead fails the test with what it did to the table. */
async function refused(options: Parameters<typeof run>[0], want: State): Promise<LoaderError> {
  try {
    const result = await run(options);
    const d = diff(await tableState(options.table), want);
    throw new Error(`expected a refusal, got ${JSON.stringify({ rowsRead: result.rowsRead, written: result.written, rejected: result.rejected, ...d })}`);
  } catch (error) {
    if (!(error instanceof LoaderError)) throw error;
    return error;
  }
}

const chain = simulateChain(29, { items: 1500, windows: 2, changesPerWindow: 900 });

/** The chain's exports written under `<root>/src/AWSDynamoDB/`: [FULL, INCR1, INCR2] folders. */
async function writeChain(root: string, exports: ExportFixture[] = chainExports(chain, 'src')): Promise<string[]> {
  const folders: string[] = [];
  for (const fixture of exports) folders.push(await writeExport(root, fixture));
  return folders;
}

describe('export chains given as arguments', () => {
  it('FULL INCR1 INCR2 leaves the source table; FULL INCR2 INCR1 and FULL INCR2 are refused before any write, naming the exports', async () => {
    const [full, incr1, incr2] = await writeChain(join(dir(), 'args'));
    const want = oracle(chain);
    // The windows matter: the wrong order or a missing window would leave a different table.
    expect(want.size).toBeGreaterThan(1000);

    const table = await newTable();
    const result = await run({ input: [full!, incr1!, incr2!], table });
    expect(result).toMatchObject({ rejected: 0 });
    expect(diff(await tableState(table), want)).toEqual({ missing: 0, extra: 0, changed: 0 });
    expect(await tableState(table)).toEqual(want);

    const swapped = await newTable();
    const order = await refused({ input: [full!, incr2!, incr1!], table: swapped }, want);
    expect(order.code).toBe('INVALID_OPTION');
    expect(order.message).toContain(`given ${full}, ${incr2}, ${incr1}; in chain order`);
    expect(order.message).toMatch(
      new RegExp(`in chain order [^:]*: ${esc(full!)} \\(full, [^)]*\\), ${esc(incr1!)} \\(incremental, [^)]*\\), ${esc(incr2!)} \\(incremental`),
    );
    expect(order.message).toMatch(/nothing was written/);
    expect(order.message).toMatch(/--allow-broken-export-chain/);
    expect((await tableState(swapped)).size).toBe(0);

    const skipped = await newTable();
    const gap = await refused({ input: [full!, incr2!], table: skipped }, want);
    expect(gap.code).toBe('INVALID_OPTION');
    expect(gap.message).toContain(`gap: the full export ${full} is the table at ${chain.times[0]}, but ${incr2} starts at ${chain.times[1]}`);
    expect((await tableState(skipped)).size).toBe(0);
  });

  it('exports of two tables, or two full exports, are refused; --allow-broken-export-chain loads them as given and says what it risks', async () => {
    const root = join(dir(), 'mixed');
    const [full, incr1] = await writeChain(root);
    const other = await writeExport(
      root,
      buildExport('other', 'INCREMENTAL_EXPORT', chain.incrementals[1]!, {
        tableArn: 'arn:aws:dynamodb:us-east-1:123456789012:table/Other',
        window: { from: chain.times[1]!, to: chain.times[2]! },
      }),
    );
    const table = await newTable();
    const mixed = await refused({ input: [full!, incr1!, other], table }, oracle(chain));
    expect(mixed.message).toMatch(/the exports are of 2 tables: .*table\/Source .*; .*table\/Other \(.*\)/);
    const secondFull = await writeExport(root, buildExport('again', 'FULL_EXPORT', chain.full, { exportTime: chain.times[1]! }));
    const fulls = await refused({ input: [full!, secondFull, incr1!], table }, oracle(chain));
    expect(fulls.message).toContain(`${full} (full, ${chain.times[0]}) and ${secondFull} (full, ${chain.times[1]}) are 2 full exports`);
    expect((await tableState(table)).size).toBe(0);

    // The override: loaded in the order given, with the warning.
    const events: LoadEvent[] = [];
    const [, , incr2] = await writeChain(join(dir(), 'override'));
    const result = await run({ input: [full!, incr2!], table, allowBrokenExportChain: true }, events);
    expect(result.rejected).toBe(0);
    const warnings = events.flatMap((e) => (e.type === 'warning' ? [e.message] : []));
    expect(warnings.join('\n')).toMatch(/--allow-broken-export-chain: the DynamoDB exports are loaded as given .*the table may miss changes.*\n {2}- gap:/s);
    expect(diff(await tableState(table), oracle(chain)).missing + diff(await tableState(table), oracle(chain)).extra).toBeGreaterThan(0);
  });

  it('the CLI refuses with exit 64 and the order; its help states what the override risks', async () => {
    const [full, incr1, incr2] = await writeChain(join(dir(), 'cli'));
    const table = await newTable();
    const cli = await runCli(['load', full!, incr2!, incr1!, '--table', table, '--rejects', join(dir(), 'cli.rejects.jsonl')], {
      cwd: dir(),
      env: localEnv(endpoint),
    });
    expect(cli.code, cli.stderr).toBe(64);
    expect(cli.stderr).toContain(`in chain order`);
    expect(cli.stderr).toContain(incr1!);
    expect((await tableState(table)).size).toBe(0);
    const help = await runCli(['load', '--help'], { cwd: dir(), env: localEnv(endpoint) });
    expect(help.stdout.replace(/\s+/g, ' ')).toMatch(/--allow-broken-export-chain .*not one chain .*the table may miss changes/);
  });
});

describe('the folder that holds exports (AWSDynamoDB/)', () => {
  it('local: AWSDynamoDB/ and its parent are read in chain order, whatever the ExportIds sort as', async () => {
    const root = join(dir(), 'layout');
    await writeChain(root);
    const want = oracle(chain);
    for (const input of [join(root, 'src', 'AWSDynamoDB'), join(root, 'src'), `${join(root, 'src', 'AWSDynamoDB')}/`]) {
      const table = await newTable();
      const events: LoadEvent[] = [];
      const result = await run({ input, table }, events);
      expect(result.rejected, input).toBe(0);
      expect(diff(await tableState(table), want), input).toEqual({ missing: 0, extra: 0, changed: 0 });
      const notes = events.flatMap((e) => (e.type === 'warning' ? [e.message] : []));
      expect(notes.join('\n')).toMatch(/holds 3 DynamoDB exports, read in chain order: .* \(full\), .* \(incremental\), .* \(incremental\)/);
      await dropTable(table);
    }
  });

  it('S3: s3://bucket/prefix/AWSDynamoDB/ and s3://bucket/prefix/ are read in chain order', async () => {
    const s3 = s3Client();
    const bucket = await newBucket(s3);
    for (const fixture of chainExports(chain, 'exports/orders')) await putObjects(s3, bucket, fixture.files);
    const want = oracle(chain);
    for (const input of [`s3://${bucket}/exports/orders/AWSDynamoDB/`, `s3://${bucket}/exports/orders`, `s3://${bucket}/exports/`]) {
      const table = await newTable();
      const result = await run({ input, table });
      expect(result.rejected, input).toBe(0);
      expect(diff(await tableState(table), want), input).toEqual({ missing: 0, extra: 0, changed: 0 });
      await dropTable(table);
    }
    // A second full export in the same folder: which chain? Refused, both named.
    const again = buildExport('exports/orders', 'FULL_EXPORT', chain.full, { exportTime: chain.times[2]! });
    await putObjects(s3, bucket, again.files);
    const table = await newTable();
    const two = await refused({ input: `s3://${bucket}/exports/orders/AWSDynamoDB/`, table }, want);
    expect(two.message).toContain(`s3://${bucket}/${again.folder} (full, ${chain.times[2]})`);
    expect(two.message).toMatch(/are 2 full exports: .*pass the one wanted/);
    expect((await tableState(table)).size).toBe(0);
  });

  it('exports below a folder are never read as plain data: beside other data files the folder is refused; a missing window is a gap', async () => {
    const root = join(dir(), 'beside');
    const [, incr1] = await writeChain(root);
    await writeFile(join(root, 'notes.jsonl'), '{"pk":"x","sk":1}\n');
    const table = await newTable();
    const beside = await refused({ input: root, table }, oracle(chain));
    expect(beside.message).toMatch(/holds DynamoDB exports .* and other files \(.*notes\.jsonl\)/);
    // The data files of an export given as plain data (a glob or folder without its manifest) are not
    // this item; a folder whose AWSDynamoDB/ lacks INCR1 is a gap.
    const { rm } = await import('node:fs/promises');
    await rm(join(root, 'notes.jsonl'));
    await rm(incr1!, { recursive: true });
    const gap = await refused({ input: root, table }, oracle(chain));
    expect(gap.message).toMatch(/gap: the full export .* is the table at/);
    // An export inside another's folder: refused, both named.
    const nested = join(dir(), 'nested');
    const [full] = await writeChain(nested);
    const inner = buildExport('inner', 'FULL_EXPORT', [[]]);
    await mkdir(join(full!, 'extra'), { recursive: true });
    await writeExport(join(full!, 'extra'), inner);
    const inside = await refused({ input: nested, table }, oracle(chain));
    expect(inside.message).toMatch(/is inside the export folder/);
    expect((await tableState(table)).size).toBe(0);
  });
});

const esc = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
