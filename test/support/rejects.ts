import { readFile } from 'node:fs/promises';
import { expect } from 'vitest';

/** One line of a reject file (JSON Lines), as the loader writes it. */
export interface RejectRecord {
  file: string;
  line: number;
  code: string;
  message: string;
  field?: string;
  key?: Record<string, string>;
  raw: string;
}

const FIELDS = ['file', 'line', 'code', 'message', 'field', 'key', 'raw'];

function parse(text: string): RejectRecord[] {
  return text
    .split('\n')
    .filter((l) => l.trim() !== '')
    .map((l) => JSON.parse(l) as RejectRecord);
}

/** The records of a reject file, in file order; fails when the file is missing. */
export async function readRejects(path: string): Promise<RejectRecord[]> {
  return parse(await readFile(path, 'utf8'));
}

/** The records of a reject file, in file order; none when there is no file (a load with no reject writes none). */
export async function readRejectsIfAny(path: string): Promise<RejectRecord[]> {
  const text = await readFile(path, 'utf8').catch((e: NodeJS.ErrnoException) => {
    if (e.code === 'ENOENT') return '';
    throw e;
  });
  return parse(text);
}

/**
 * The reject file of a load, sorted by line, each record checked to have the documented fields only
 * (file, line from 1, a message, the raw text). Fails when the load wrote no reject file.
 */
export async function rejectsOf(result: { rejectsPath: string | undefined }): Promise<RejectRecord[]> {
  expect(result.rejectsPath, 'a reject file was written').toBeDefined();
  const records = await readRejects(result.rejectsPath!);
  for (const r of records) {
    expect(Object.keys(r).filter((k) => !FIELDS.includes(k))).toEqual([]);
    expect(typeof r.file).toBe('string');
    expect(Number.isInteger(r.line) && r.line >= 1).toBe(true);
    expect(r.message.length).toBeGreaterThan(0);
    expect(typeof r.raw).toBe('string');
  }
  return records.sort((a, b) => a.line - b.line);
}
