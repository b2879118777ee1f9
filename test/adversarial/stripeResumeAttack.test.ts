/**
 * Attacks on the resume of a striped read (each stripe reopened at the byte offsets its restart point
 * recorded, the stripes read by the plan the checkpoint kept). Killed with SIGKILL at several batches and
 * resumed through the built CLI, every input here must end as a load in one go of it ends: the same table,
 * the same reject file, rows read = written + superseded + rejected. The inputs are those where an offset
 * could be off: a UTF-8 BOM, LF, CRLF and lone CR mixed, blank lines, quoted fields holding line breaks,
 * multi-byte text, an oversized record and rejects before the points; JSON Lines with CRLF and blank lines;
 * a CSV without a header row (--columns) that starts with a BOM. A checkpoint whose plan or offsets were
 * edited, or a resume with other --columns, is refused, never read by the old plan.
 */
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { batchesDone } from '../support/checkpoint.js';
import { runCli } from '../support/cli.js';
import { scanAll, type TableKeys } from '../support/ddb.js';
import { localEnv } from '../support/env.js';
import { useLocalAws } from '../support/localAws.js';

const KEYS: TableKeys = { partitionKey: { name: 'pk', type: 'S' }, sortKey: { name: 'sk', type: 'N' } };
const BOM = '\ufeff';
const { endpoint, client, dir, newTable, dropTable } = useLocalAws({ name: 'stripeResumeAttack', processCredentials: true });
const env = () => ({ ...localEnv(endpoint), DDB_SPREAD_TEST_RESTART_ROWS: '300', DDB_SPREAD_TEST_STRIPE_BYTES: '4096' });

/** Keys in order, 12 rows each; a bad sort key now and then (a reject), a repeated sort key now and then (superseded). */
const key = (i: number) => `k${String(Math.floor(i / 12)).padStart(5, '0')}`;
const sk = (i: number) => (i % 211 === 7 ? 'x' : String(i % 97 === 3 ? (i - 1) % 12 : i % 12));
/** Line breaks of every kind inside quotes, quotes doubled, text of two, three and four bytes a character. */
const note = (i: number) =>
  i % 5 === 0 ? `"one ${i}${['\r\n', '\n', '\r'][i % 3]}two ""q"", ${'é'.repeat(i % 4)}"` : i % 7 === 0 ? `né 日本 🙂 ${i}` : `plain ${i}`;

/**
 * Hostile CSV rows from..to: each ends in LF, CRLF or a lone CR in turn, a blank line every 13th, and at
 * row `huge` a record over the 4 MB record bound (a RECORD_TOO_LARGE reject the offsets after it step over).
 */
function hostileCsv(from: number, to: number, huge = -1): string {
  let text = '';
  for (let i = from; i < to; i++) {
    const eol = ['\n', '\r\n', '\r'][(i * 7) % 3]!;
    const cells = i === huge ? `"${'z'.repeat(4 * 1024 * 1024 + 10)}"` : note(i);
    text += `${key(i)},${sk(i)},${i},${cells}${eol}`;
    if (i % 13 === 0) text += eol === '\r' ? '\r\r' : eol;
  }
  return text;
}

/** Items of a table as comparable text, sorted. */
async function contents(table: string): Promise<string[]> {
  return (await scanAll(client(), table)).map((i) => `${i['pk']!.S}/${i['sk']!.N}/${i['v']!.N}/${i['note']?.S ?? ''}`).sort();
}

/**
 * The table once the calls a killed load had in flight have landed: DynamoDB Local still applies a
 * BatchWriteItem whose caller was killed mid-call, so a scan right after the kill can miss its items.
 */
async function settledContents(table: string): Promise<string[]> {
  let last = await contents(table);
  for (let i = 0; i < 40; i++) {
    await new Promise((resolve) => setTimeout(resolve, 250));
    const now = await contents(table);
    if (now.length === last.length && now.every((item, k) => item === last[k])) return now;
    last = now;
  }
  return last;
}

async function rejects(path: string): Promise<string[]> {
  const text = await readFile(path, 'utf8').catch(() => '');
  return text
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l) as { file: string; line: number; code: string })
    .map((r) => `${r.file}:${r.line}:${r.code}`)
    .sort();
}

interface Saved {
  batchesDone: number;
  status: string;
  stripePlan?: { stripes: { pieces: { start: number; end: number; line: number }[] }[] };
  restarts: { batch: number; row: number; rejected: number; stripes?: { at?: number[]; first?: number[] }[] }[];
}

/** The load's arguments into `table`, with its checkpoint and reject file named after `name`. */
function loadArgs(name: string, inputs: string[], table: string, extra: string[]): string[] {
  const at = (suffix: string) => join(dir(), `${name}.${suffix}`);
  return ['load', ...inputs, '--table', table, '--types', 'sk:N,v:N', '--checkpoint', at('checkpoint.json'), '--rejects', at('rejects.jsonl')].concat([
    '--json',
    '--concurrency',
    '4',
    '--wcu',
    '3000',
    ...extra,
  ]);
}

/** Loads `inputs` killed at each of `kills` (batches done) and resumed to its end, and in one go into another table. */
async function killedAndResumed(name: string, inputs: string[], extra: string[], kills: number[]) {
  const table = await newTable(KEYS);
  const args = loadArgs(name, inputs, table, extra);
  const checkpoint = join(dir(), `${name}.checkpoint.json`);
  const said: string[] = [];
  const atKills: Saved[] = [];
  for (const batches of kills) {
    const run = await runCli(args, {
      cwd: dir(),
      env: env(),
      stdout: 'ignore',
      timeoutMs: 120_000,
      kill: { signal: 'SIGKILL', when: () => batchesDone(checkpoint) >= batches },
    });
    expect(run.signal ?? run.code, run.stderr).toBe('SIGKILL');
    said.push(run.stderr);
    atKills.push(JSON.parse(await readFile(checkpoint, 'utf8')) as Saved);
  }
  const last = await runCli(args, { cwd: dir(), env: env(), timeoutMs: 120_000 });
  said.push(last.stderr);
  expect([0, 2], last.stderr).toContain(last.code);
  const oneGo = await newTable(KEYS);
  const once = await runCli(loadArgs(`${name}.oneGo`, inputs, oneGo, extra), { cwd: dir(), env: env(), timeoutMs: 120_000 });
  expect([0, 2], once.stderr).toContain(once.code);
  const run = {
    table: await contents(table),
    oneGo: await contents(oneGo),
    result: JSON.parse(last.stdout) as Record<string, number | string>,
    oneGoResult: JSON.parse(once.stdout) as Record<string, number | string>,
    rejects: await rejects(join(dir(), `${name}.rejects.jsonl`)),
    oneGoRejects: await rejects(join(dir(), `${name}.oneGo.rejects.jsonl`)),
    said,
    atKills,
  };
  await dropTable(table);
  await dropTable(oneGo);
  return run;
}

function expectSameLoad(run: Awaited<ReturnType<typeof killedAndResumed>>, rows: number): void {
  expect(run.result['order']).toBe('stripes');
  // Each kill left points of the striped read a resume starts at, and each resume read on from one.
  for (const at of run.atKills) expect(at.restarts.some((p) => p.stripes && p.batch <= at.batchesDone)).toBe(true);
  for (const said of run.said.slice(1)) expect(said).toMatch(/reading on from a restart point past the first [\d,]+ rows/);
  expect(run.table).toEqual(run.oneGo);
  const r = run.result as Record<string, number>;
  expect(r['rowsRead']).toBe(rows);
  expect(r['written']! + r['superseded']! + r['rejected']!).toBe(rows);
  expect(r['rejected']).toBe(run.oneGoResult['rejected']);
  expect(r['superseded']).toBe(run.oneGoResult['superseded']);
  expect(run.rejects).toEqual(run.oneGoRejects);
}

describe('a striped read killed and resumed at its restart points', () => {
  it('CSV with a BOM, LF, CRLF and lone CR mixed, blank lines, quoted line breaks, multi-byte text, an oversized record and rejects', async () => {
    const rows = 5_000;
    const input = join(dir(), 'hostile.csv');
    await writeFile(input, `${BOM}pk,sk,v,note\r\n${hostileCsv(0, rows, 260)}`);
    const run = await killedAndResumed('hostile', [input], [], [40, 110]);
    expectSameLoad(run, rows);
    expect(run.rejects.some((r) => r.endsWith(':RECORD_TOO_LARGE'))).toBe(true);
    expect(run.atKills.some((at) => at.restarts.some((p) => p.rejected > 1 && p.batch <= at.batchesDone))).toBe(true);
  }, 120_000);

  it('CSV without a header row (--columns) that starts with a BOM: the first stripe reopens at its first row', async () => {
    const rows = 3_000;
    const input = join(dir(), 'noHeader.csv');
    await writeFile(input, `${BOM}${hostileCsv(0, rows)}`);
    const run = await killedAndResumed('noHeader', [input], ['--columns', 'pk,sk,v,note'], [40, 90]);
    expectSameLoad(run, rows);
  }, 120_000);

  it('JSON Lines with a BOM, CRLF and LF, blank and blank-looking lines', async () => {
    const rows = 4_000;
    let text = BOM;
    for (let i = 0; i < rows; i++) {
      const eol = i % 3 === 0 ? '\r\n' : '\n';
      const bad = sk(i) === 'x';
      text += `${JSON.stringify({ pk: key(i), sk: bad ? 'x' : Number(sk(i)), v: i, note: note(i) })}${eol}`;
      if (i % 11 === 0) text += i % 2 === 0 ? `\r\n` : `   \n`;
    }
    const input = join(dir(), 'hostile.jsonl');
    await writeFile(input, text);
    const run = await killedAndResumed('jsonl', [input], [], [40, 100]);
    expectSameLoad(run, rows);
  }, 120_000);
});

describe('a striped read resumed from a checkpoint it must not trust', () => {
  it('a folder of sorted parts with a header-only part and an empty part, killed twice: the same as in one go', async () => {
    const folder = join(dir(), 'parts');
    await mkdir(folder, { recursive: true });
    const each = 1_500;
    for (let p = 0; p < 3; p++) await writeFile(join(folder, `part-${p}.csv`), `pk,sk,v,note\n${hostileCsv(p * each, (p + 1) * each)}`);
    await writeFile(join(folder, 'part-1a.csv'), 'pk,sk,v,note\r\n');
    await writeFile(join(folder, 'part-1b.csv'), '');
    const run = await killedAndResumed('parts', [folder], [], [40, 100]);
    expectSameLoad(run, 3 * each);
  }, 120_000);

  it('a resume with other --columns or --delimiter is refused as another load, before it reads by the old plan', async () => {
    const input = join(dir(), 'columns.csv');
    await writeFile(input, hostileCsv(0, 3_000));
    const table = await newTable(KEYS);
    const checkpoint = join(dir(), 'columns.checkpoint.json');
    const args = loadArgs('columns', [input], table, ['--columns', 'pk,sk,v,note']);
    const run = await runCli(args, {
      cwd: dir(),
      env: env(),
      stdout: 'ignore',
      timeoutMs: 120_000,
      kill: { signal: 'SIGKILL', when: () => batchesDone(checkpoint) >= 30 },
    });
    expect(run.signal, run.stderr).toBe('SIGKILL');
    const before = await settledContents(table);
    for (const other of [
      ['--columns', 'pk,sk,v,other'],
      ['--columns', 'pk,sk,v,note', '--delimiter', ';'],
    ]) {
      const refused = await runCli(loadArgs('columns', [input], table, other), { cwd: dir(), env: env(), timeoutMs: 120_000 });
      expect(refused.code, refused.stderr).toBe(78);
      expect(refused.stderr).toMatch(/checkpoint .*(columns|delimiter)/);
    }
    expect(await contents(table)).toEqual(before);
    await dropTable(table);
  }, 120_000);

  it('a checkpoint whose recorded offset was moved into a row is refused, and writes nothing wrong', async () => {
    const rows = 3_000;
    const input = join(dir(), 'edited.csv');
    const text = `pk,sk,v,note\n${hostileCsv(0, rows)}`;
    await writeFile(input, text);
    const table = await newTable(KEYS);
    const checkpoint = join(dir(), 'edited.checkpoint.json');
    const args = loadArgs('edited', [input], table, []);
    const run = await runCli(args, {
      cwd: dir(),
      env: env(),
      stdout: 'ignore',
      timeoutMs: 120_000,
      kill: { signal: 'SIGKILL', when: () => batchesDone(checkpoint) >= 40 },
    });
    expect(run.signal, run.stderr).toBe('SIGKILL');
    const saved = await readFile(checkpoint, 'utf8');
    // Every row of the input as an item (the table may hold a row a later one supersedes).
    const value = (i: number) => (note(i).startsWith('"') ? note(i).slice(1, -1).replace(/""/g, '"') : note(i));
    const inputItems = new Set(Array.from({ length: rows }, (_, i) => `${key(i)}/${sk(i)}/${i}/${value(i)}`));
    const edits: [string, (c: Saved) => void][] = [
      // A stripe's last row's offset moved one byte into it.
      [
        'offset inside a row',
        (c) =>
          void c.restarts
            .filter((p) => p.batch <= c.batchesDone)
            .at(-1)!
            .stripes!.find((s) => s.at?.[2] !== undefined)!.at![2]!++,
      ],
    ];
    for (const [what, edit] of edits) {
      const file = JSON.parse(saved) as Saved;
      edit(file);
      await writeFile(checkpoint, JSON.stringify(file));
      const resumed = await runCli(args, { cwd: dir(), env: env(), timeoutMs: 120_000 });
      expect([0, 2], `${what}: ${resumed.stderr}`).not.toContain(resumed.code);
      // Whatever it wrote is a row of the input, whole.
      for (const item of await contents(table)) expect(inputItems.has(item), `${what}: ${item}`).toBe(true);
    }
    await dropTable(table);
  }, 120_000);
});
