import { Readable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { documentFormatOf } from '../../../src/reading/jsonDocumentFormat.js';
import { jsonShapeOf } from '../../../src/reading/jsonShape.js';
import { readJsonDocument } from '../../../src/reading/readJsonDocument.js';
import type { SourceRecord } from '../../../src/typing/planRow.js';
import { loaderErrorOf } from '../../support/thrown.js';

/** The text cut into chunks of `size` bytes, so elements, strings and escapes span chunks. */
function chunked(text: string, size: number): Readable {
  const bytes = Buffer.from(text);
  const chunks: Buffer[] = [];
  for (let at = 0; at < bytes.length; at += size) chunks.push(bytes.subarray(at, at + size));
  return Readable.from(chunks);
}

async function all(records: AsyncGenerator<SourceRecord>): Promise<SourceRecord[]> {
  const out: SourceRecord[] = [];
  for await (const record of records) out.push(record);
  return out;
}

const SCAN = `{
    "Items": [
        {
            "pk": {
                "S": "a, [b] \\"c\\""
            },
            "n": {
                "N": "123456789012345678901234567890123456789"
            }
        },
        {
            "pk": {
                "S": "}"
            }
        }
    ],
    "Count": 2,
    "ScannedCount": 2,
    "ConsumedCapacity": null
}
`;

describe('jsonShapeOf', () => {
  it.each([
    ['{"pk":"a"}\n{"pk":"b"}\n', 'lines'],
    ['{"Items":[1,2],"pk":"a"}\n', 'lines'],
    ['\uFEFF  [{"pk":"a"}]', 'array'],
    [SCAN, 'scan'],
    ['{"Items":[],"Count":0}', 'scan'],
    ['{"Items":[{"pk":{"S":"a"}}],"Count":1}', 'scan'],
    ['{\n  "Orders": [\n    {\n      "PutRequest": {"Item": {}}}]}', 'requests'],
    ['{"Orders":[{"DeleteRequest":{"Key":{}}}]}', 'requests'],
    ['{\n  "pk": "a"\n}\n', 'document'],
    ['{"Item": {\n  "pk": {"S": "a"}}}', 'document'],
    ['pk,sk\n', 'lines'],
    // A JSON Lines file whose first line is a bad row (an array, or an object that looks like scan output) stays lines.
    ['["k1",1]\n{"pk":"a"}\n', 'lines'],
    ['{"Items":[{"pk":{"S":"a"}}],"Count":1}\n{"pk":"b"}\n', 'lines'],
    ['{"Orders":[{"PutRequest":{"Item":{}}}]}\n{"pk":"b"}\n', 'lines'],
    ['[{"pk":"a"},{"pk":"b"}]\n', 'array'],
    ['[{"pk":"a"},\n{"pk":"b"}]\n', 'array'],
    ['{"Items":[{"pk":{"S":"a"}}],"Count":1}\n\n', 'scan'],
    // An array that does not open with an item is a bad line, one row, even alone in its file.
    ['["a",0]', 'lines'],
    ['[[1]]\n', 'lines'],
    ['[]', 'array'],
    ['[\n  {"pk":"a"}\n]\n', 'array'],
  ])('%j is %s', (text, shape) => {
    expect(jsonShapeOf(text)).toBe(shape);
  });

  it('a request file and a pretty document are refused with the jq command that converts them', () => {
    const requests = loaderErrorOf(() => documentFormatOf('{"Orders":[{"PutRequest":{"Item":{}}}]}', 'jsonl', 'req.json'));
    expect(requests).toMatchObject({ code: 'INPUT_HEADER', file: 'req.json' });
    expect(requests.message).toContain(`jq -c '.["Orders"][] | .PutRequest.Item // empty' req.json`);
    const doc = loaderErrorOf(() => documentFormatOf('{\n "pk": 1\n}', 'jsonl', 'my file.json'));
    expect(doc.message).toContain(`jq -c '.' 'my file.json'`);
  });

  it('the format of each shape: DynamoDB JSON arrays keep their flavor', () => {
    expect(documentFormatOf('[{"pk":{"S":"a"}}]', 'ddb-json', 'f')).toBe('ddb-json-array');
    expect(documentFormatOf('[{"pk":"a"}]', 'jsonl', 'f')).toBe('json-array');
    expect(documentFormatOf(SCAN, 'jsonl', 'f')).toBe('scan-output');
    expect(documentFormatOf('{"pk":"a"}', 'jsonl', 'f')).toBe('jsonl');
  });
});

describe('readJsonDocument', () => {
  it.each([1, 3, 7, 4096])('scan output in chunks of %i bytes: each item once, as DynamoDB JSON, with the line it starts on', async (size) => {
    const records = await all(readJsonDocument(chunked(SCAN, size), 'scan.json', 'scan'));
    expect(records.map((r) => [r.kind, r.origin.line, 'flavor' in r ? r.flavor : undefined])).toEqual([
      ['json', 3, 'ddb-json'],
      ['json', 11, 'ddb-json'],
    ]);
    expect(JSON.parse(records[0]!.origin.raw)).toEqual({ pk: { S: 'a, [b] "c"' }, n: { N: '123456789012345678901234567890123456789' } });
    expect(JSON.parse(records[1]!.origin.raw)).toEqual({ pk: { S: '}' } });
  });

  it('an array of items, scalars and empty arrays too', async () => {
    expect((await all(readJsonDocument(chunked('[]', 1), 'a.json', 'array'))).length).toBe(0);
    const records = await all(readJsonDocument(chunked('[\n{"pk":"a","l":[1,{"x":"]"}]},\n 5 ,\n"s"\n]\n', 2), 'a.json', 'array'));
    expect(records.map((r) => [r.origin.line, r.origin.raw])).toEqual([
      [2, '{"pk":"a","l":[1,{"x":"]"}]}'],
      [3, '5'],
      [4, '"s"'],
    ]);
  });

  it('a document cut short is an error naming the file, not a silent end', async () => {
    const error = await all(readJsonDocument(chunked('[{"pk":"a"},{"pk":', 4), 'cut.json', 'array')).catch((e: unknown) => e);
    expect(error).toMatchObject({ code: 'INPUT_UNREADABLE', file: 'cut.json' });
    const scan = await all(readJsonDocument(chunked(SCAN.slice(0, SCAN.indexOf('"Count"')), 5), 'cut.json', 'scan')).catch((e: unknown) => e);
    expect(scan).toMatchObject({ code: 'INPUT_UNREADABLE' });
  });

  it('more after the document (a second array, a JSON line after scan output) is an error, never skipped', async () => {
    await expect(all(readJsonDocument(chunked('[{"pk":"a"}]\n[{"pk":"b"}]\n', 3), 'two.json', 'array'))).rejects.toMatchObject({
      code: 'INPUT_UNREADABLE',
      line: 2,
    });
    await expect(all(readJsonDocument(chunked(`${SCAN}{"pk":"x"}\n`, 9), 'two.json', 'scan'))).rejects.toMatchObject({ code: 'INPUT_UNREADABLE' });
  });

  it('an element over the record bound is rejected, holding only its first bytes', async () => {
    const big = `{"pk":"${'x'.repeat(200)}"}`;
    const records = await all(readJsonDocument(chunked(`[${big},{"pk":"b"}]`, 16), 'big.json', 'array', { maxRecordBytes: 100 }));
    expect(records.map((r) => (r.kind === 'unparsable' ? r.code : r.origin.raw))).toEqual(['RECORD_TOO_LARGE', '{"pk":"b"}']);
  });

  it('bytes that are not UTF-8 make the element an INVALID_UTF8 reject', async () => {
    const bytes = Buffer.concat([Buffer.from('[{"pk":"'), Buffer.from([0xff]), Buffer.from('"},{"pk":"b"}]')]);
    const records = await all(readJsonDocument(Readable.from([bytes]), 'bad.json', 'array'));
    expect(records.map((r) => (r.kind === 'unparsable' ? r.code : 'ok'))).toEqual(['INVALID_UTF8', 'ok']);
  });
});
