/**
 * A plain part read alone resumes at a restart point's byte offset: its records carry their offsets when
 * read from the start, a read opened at a record's offset hands on exactly the records from it on (lines,
 * text) as the read from the start does, with nothing before it read; and an offset that is not where its
 * line starts is refused (INPUT_CHANGED) before any record of it is handed on. A gzip part keeps no offsets.
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { gzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { listInputs } from '../../../src/reading/inputSet.js';
import { readInputSet, type ResumeAt } from '../../../src/reading/readInputSet.js';
import type { SourceRecord } from '../../../src/typing/planRow.js';

let dir = '';
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'resume-offset-'));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

const noS3 = () => Promise.reject(new Error('no S3 here'));
const skipToLine = () => Promise.reject(new Error('a resume at an offset does not search for its line'));

async function read(path: string, from?: ResumeAt): Promise<SourceRecord[]> {
  const set = await listInputs([path], { stdin: Readable.from([]), s3: noS3, outputs: [] });
  const input = readInputSet(set, {
    format: undefined,
    csv: { delimiter: undefined, columns: undefined },
    ...(from ? { from: { at: from, skipToLine } } : {}),
  });
  const out: SourceRecord[] = [];
  try {
    for await (const record of input.records) out.push(record);
  } finally {
    input.close();
  }
  return out;
}

const view = (records: SourceRecord[]) => records.map((r) => `${r.origin.line}:${r.origin.raw}`);

describe('a plain part resumed at a byte offset', () => {
  const files: [string, string][] = [
    // A BOM, CRLF, blank lines, a quoted field over two lines, multi-byte text.
    ['rows.csv', '\ufeffpk,v\r\nk1,"a\r\nb"\r\n\r\nk2,é\r\nk3,x\r\n\r\n\r\nk4,"y,z"\r\nk5,w\r\n'],
    ['lone-cr.csv', 'pk,v\rk1,a\rk2,b\r\rk3,c\r'],
    ['rows.jsonl', '{"pk":"k1"}\r\n\n{"pk":"日本"}\n{"pk":"k3"}\r\n{"pk":"k4"}'],
  ];

  it.each(files)('%s: from any record on, the same records as from the start; a byte off is refused', async (name, text) => {
    const path = join(dir, name);
    await writeFile(path, text);
    const whole = await read(path);
    const bytes = Buffer.from(text, 'utf8');
    for (const [row, record] of whole.entries()) {
      const offset = record.origin.offset!;
      // Each record's offset is where its line starts in the file.
      expect(offset === 0 || bytes[offset - 1] === 10 || bytes[offset - 1] === 13, `${name} row ${row}`).toBe(true);
      if (row === 0) continue;
      const at = { part: 0, row, line: record.origin.line, offset };
      expect(view(await read(path, at)), `${name} from row ${row}`).toEqual(view(whole.slice(row)));
      await expect(read(path, { ...at, offset: offset + 1 })).rejects.toMatchObject({ code: 'INPUT_CHANGED' });
    }
  });

  it('a gzip part keeps no offsets (it is read from its start on resume)', async () => {
    const path = join(dir, 'rows.csv.gz');
    await writeFile(path, gzipSync('pk,v\nk1,a\nk2,b\n'));
    expect((await read(path)).map((r) => r.origin.offset)).toEqual([undefined, undefined]);
  });
});
