import type { AttributeValue } from '@aws-sdk/client-dynamodb';
import { createWriteStream } from 'node:fs';
import { once } from 'node:events';

/**
 * A deterministic export-like data set: rows sorted by partition key, 8 sort keys per partition, a
 * CSV-hostile name now and then (comma, quotes, a line break, non-ASCII). Each row's expected stored item
 * is known, so a scan can be checked item by item.
 */
export interface GeneratedRow {
  pk: string;
  sk: number;
  name: string;
  qty: string;
  flag: boolean;
}

export const GENERATED_HEADER = 'pk,sk,name,qty,flag';
/** --types for the generated CSV (pk is the table's S partition key, sk its N sort key). */
export const GENERATED_TYPES = { qty: 'N', flag: 'BOOL' } as const;
/** GENERATED_TYPES as the value of the CLI's --types flag: `qty:N,flag:BOOL`. */
export const GENERATED_TYPES_FLAG = Object.entries(GENERATED_TYPES)
  .map(([name, type]) => `${name}:${type}`)
  .join(',');

export function generatedRow(i: number): GeneratedRow {
  const name = i % 997 === 0 ? `Café "${i}", line\nbreak` : `name-${i}`;
  return { pk: `cust-${String(Math.floor(i / 8)).padStart(6, '0')}`, sk: i % 8, name, qty: `${(i * 7919) % 100000}.${(i % 9) + 1}`, flag: i % 3 === 0 };
}

export function generatedCsvLine(row: GeneratedRow): string {
  const quoted = /[",\n\r]/.test(row.name) ? `"${row.name.replace(/"/g, '""')}"` : row.name;
  return `${row.pk},${row.sk},${quoted},${row.qty},${row.flag}`;
}

/** The item DynamoDB must hold for the row, in the low-level wire form. */
export function generatedItem(row: GeneratedRow): Record<string, AttributeValue> {
  return { pk: { S: row.pk }, sk: { N: String(row.sk) }, name: { S: row.name }, qty: { N: row.qty }, flag: { BOOL: row.flag } };
}

/** Writes rows 0..count-1 as CSV with a header, streaming (bounded memory). */
export async function writeGeneratedCsv(path: string, count: number): Promise<void> {
  const out = createWriteStream(path);
  let chunk = `${GENERATED_HEADER}\n`;
  for (let i = 0; i < count; i++) {
    chunk += `${generatedCsvLine(generatedRow(i))}\n`;
    if (chunk.length > 64 * 1024) {
      if (!out.write(chunk)) await once(out, 'drain');
      chunk = '';
    }
  }
  out.end(chunk);
  await once(out, 'finish');
}
