/**
 * A resume over a set of files whose older part changed. `--checkpoint` over `a.csv b.csv`,
 * kill -9, one row of a.csv corrected (same size, a.csv still older than b.csv): the resume was accepted,
 * since the set's identity took the newest part's time for all parts, and the table kept the old value.
 * Each part now has its own identity: the resume is refused (78) naming a.csv, a part restored byte for
 * byte resumes, and a set checkpoint of the format before per-part identities is refused with what to do.
 */
import { readFileSync, statSync, utimesSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { killableCli } from '../support/checkpoint.js';
import { scanAll, type TableKeys } from '../support/ddb.js';
import { localEnv } from '../support/env.js';
import { useLocalAws } from '../support/localAws.js';

const KEYS: TableKeys = { partitionKey: { name: 'pk', type: 'S' }, sortKey: { name: 'sk', type: 'N' } };
const { endpoint, client, dir, newTable } = useLocalAws({ name: 'resumeset', processCredentials: true });

/** 10,000 rows (about 200 KB: a row in the middle is past both 64 KB edges). */
const rows = (from: number, value: (i: number) => string) =>
  `pk,sk,v\n${Array.from({ length: 10_000 }, (_, i) => `p${(from + i) % 97},${from + i},${value(from + i)}`).join('\n')}\n`;
const ORIGINAL = (i: number) => `v${String(i).padStart(6, '0')}`;
/** Row 15,000 (the middle of a.csv) corrected: same length, so the same size. */
const CORRECTED = (i: number) => (i === 5_000 ? 'FIXED00' : ORIGINAL(i));

async function interruptedSetLoad(name: string) {
  const a = join(dir(), `${name}-a.csv`);
  const b = join(dir(), `${name}-b.csv`);
  writeFileSync(a, rows(0, ORIGINAL));
  writeFileSync(b, rows(10_000, ORIGINAL));
  // a.csv older than b.csv, as files written one after the other are.
  const old = statSync(b).mtime.getTime() / 1000 - 60;
  utimesSync(a, old, old);
  const table = await newTable(KEYS);
  const checkpoint = join(dir(), `${name}.checkpoint.json`);
  const args = [
    'load',
    a,
    b,
    '--table',
    table,
    '--checkpoint',
    checkpoint,
    '--wcu',
    '2000',
    '--types',
    'v:S',
    '--rejects',
    join(dir(), `${name}.rejects.jsonl`),
  ];
  const cli = killableCli(args, checkpoint, { cwd: dir(), env: localEnv(endpoint) });
  const killed = await cli(20);
  expect(killed.signal).toBe('SIGKILL');
  return { a, b, table, checkpoint, cli, old };
}

const valueOf = async (table: string, sk: number) => (await scanAll(client(), table)).find((i) => i.sk!.N === String(sk))?.v?.S;

describe('a resume over a set of files checks each file', () => {
  it('kill -9, one row of the older file corrected (same size, still older): the resume is refused naming it; started over, the table has the correction', async () => {
    const { a, table, checkpoint, cli, old } = await interruptedSetLoad('fixed');
    writeFileSync(a, rows(0, CORRECTED));
    utimesSync(a, old + 1, old + 1);
    const refused = await cli();
    expect(refused.code, refused.stderr).toBe(78);
    expect(refused.stderr).toMatch(/fixed-a\.csv changed since checkpoint .* \(same size, but its content differs/);
    expect(refused.stderr).toContain('to start over');

    const again = await killableCli(
      ['load', a, join(dir(), 'fixed-b.csv'), '--table', table, '--types', 'v:S', '--rejects', join(dir(), 'fixed2.rejects.jsonl')],
      checkpoint,
      { cwd: dir(), env: localEnv(endpoint) },
    )();
    expect(again.code, again.stderr).toBe(0);
    expect(await valueOf(table, 5_000)).toBe('FIXED00');
  }, 240_000);

  it('a file rewritten with the same bytes (a new time) resumes, and the table is the files', async () => {
    const { a, table, cli } = await interruptedSetLoad('same');
    writeFileSync(a, rows(0, ORIGINAL));
    const resumed = await cli();
    expect(resumed.code, resumed.stderr).toBe(0);
    const items = await scanAll(client(), table);
    expect(items.length).toBe(20_000);
    expect(items.every((i) => i.v!.S === ORIGINAL(Number(i.sk!.N)))).toBe(true);
  }, 240_000);

  it('a set checkpoint of the format before per-file identities is refused (78) with what to do', async () => {
    const { checkpoint, cli } = await interruptedSetLoad('older');
    const saved = JSON.parse(readFileSync(checkpoint, 'utf8')) as { input: Record<string, unknown> };
    expect(Array.isArray(saved.input['parts'])).toBe(true);
    delete saved.input['parts'];
    writeFileSync(checkpoint, JSON.stringify(saved));
    const refused = await cli();
    expect(refused.code, refused.stderr).toBe(78);
    expect(refused.stderr).toMatch(/was written by an earlier ddb-spread, which did not record each input file of a set.*to start over/);
  }, 240_000);
});
