/** Output files are private (0600) and never written through a symlink (a temp folder, no DynamoDB). */
import { chmodSync, lstatSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { mkdtemp, rm, symlink } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createNewPrivateFile, createPrivateFile, writeJsonAtomically, writePrivateFileAtomically } from '../../../src/files/privateFiles.js';
import { LineWriter } from '../../../src/ordering/lineFiles.js';
import { RejectSink } from '../../../src/reporting/rejectSink.js';

let dir = '';
let seq = 0;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'ddb-spread-privatefiles-'));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});
const path = (name: string) => join(dir, `${++seq}-${name}`);
const mode = (p: string) => (statSync(p).mode & 0o777).toString(8);

const REJECT = { origin: { file: 'in.csv', line: 2, raw: 'a,b' }, code: 'TYPE_ERROR', message: 'bad' } as const;

describe('private files', () => {
  it('createPrivateFile makes a new file 0600, and an existing 0644 file 0600 too', async () => {
    const fresh = path('fresh');
    await (await createPrivateFile(fresh)).close();
    expect(mode(fresh)).toBe('600');
    const existing = path('existing');
    writeFileSync(existing, 'old');
    chmodSync(existing, 0o644);
    await (await createPrivateFile(existing)).close();
    expect(mode(existing)).toBe('600');
  });

  it('createPrivateFile and createNewPrivateFile never write through a symlink', async () => {
    const target = path('target');
    writeFileSync(target, 'keep');
    const link = path('link');
    await symlink(target, link);
    await expect(createPrivateFile(link)).rejects.toMatchObject({ code: 'ELOOP' });
    await expect(createNewPrivateFile(link)).rejects.toMatchObject({ code: 'EEXIST' });
    expect(readFileSync(target, 'utf8')).toBe('keep');
  });

  it('an atomic write replaces a symlink at the path instead of writing its target, and is 0600', async () => {
    const target = path('target');
    writeFileSync(target, 'keep');
    const link = path('report.json');
    await symlink(target, link);
    await writePrivateFileAtomically(link, 'new\n', true);
    expect(lstatSync(link).isSymbolicLink()).toBe(false);
    expect(readFileSync(link, 'utf8')).toBe('new\n');
    expect(mode(link)).toBe('600');
    expect(readFileSync(target, 'utf8')).toBe('keep');
    const report = path('plain.json');
    await writeJsonAtomically(report, { a: 1 }, '--report');
    expect(mode(report)).toBe('600');
  });

  it("the write order's temporary files are 0600", async () => {
    const file = path('bucket-0.txt');
    const writer = await LineWriter.create(file, 4096);
    await writer.write('row');
    await writer.close();
    expect(mode(file)).toBe('600');
  });

  it('the reject file is 0600', async () => {
    const file = path('r.jsonl');
    const sink = new RejectSink(file);
    await sink.write(REJECT);
    await sink.close();
    expect(mode(file)).toBe('600');
    expect(JSON.parse(readFileSync(file, 'utf8'))).toMatchObject({ line: 2, raw: 'a,b' });
  });
});
