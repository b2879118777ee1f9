/**
 * readCsv's lines and raw text (cut by csv-parse's byte count) end to end: a striped load of a
 * file whose header is preceded by blank lines and has a quoted name holding a line break, with bad rows
 * throughout, writes every reject once with the line it stands on and its own text; a header with a quote
 * left open stops the load at the header's line instead of rejecting the whole file as one row.
 */
import { describe, expect, it } from 'vitest';
import { scanAll, type TableKeys } from '../support/ddb.js';
import { useLocalAws } from '../support/localAws.js';
import { localLoad } from '../support/localLoad.js';
import { rejectsOf } from '../support/rejects.js';

const PK_S: TableKeys = { partitionKey: { name: 'pk', type: 'S' } };
const aws = useLocalAws({ name: 'rawtext', processCredentials: true, keys: PK_S });
const { client, newTable } = aws;
const { inputFile, run, runFailing } = localLoad(aws);

describe('reject lines and raw text through a striped load (raw text cut by byte count, attacked)', () => {
  it('a header past blank lines with a name over two lines: every reject at its own line, with its own text', async () => {
    const table = await newTable();
    // Lines 1-2 blank (CRLF, LF), the header on lines 3-4; then rows, every 997th short, a blank line every 500th.
    let text = '\r\n\npk,"no\r\nte"\r\n';
    let line = 5;
    const expected: [number, string][] = [];
    let good = 0;
    for (let i = 0; i < 12_000; i++) {
      if (i % 500 === 499) {
        text += '\r\n';
        line++;
      }
      const row = i % 997 === 0 ? `k${String(i).padStart(6, '0')}` : `k${String(i).padStart(6, '0')},${'v'.repeat(i % 13)}é`;
      if (i % 997 === 0) expected.push([line, row]);
      else good++;
      text += `${row}${i % 3 === 0 ? '\r\n' : '\n'}`;
      line++;
    }
    const result = await run({ input: await inputFile('rawtext.csv', text), table });
    expect(result).toMatchObject({ rowsRead: 12_000, written: good, rejected: expected.length, rejectedByReason: { CSV_SYNTAX: expected.length } });
    const rejects = await rejectsOf(result);
    expect(rejects.map((r) => [r.line, r.raw])).toEqual(expected);
    const items = await scanAll(client(), table);
    expect(items.length).toBe(good);
    expect(items.find((item) => item['pk']!.S === 'k000001')!['no\r\nte']!.S).toBe('vé');
  });

  it('a header with a quote left open: INPUT_HEADER at its line, nothing written', async () => {
    const table = await newTable();
    const error = await runFailing({ input: await inputFile('openheader.csv', '\n\n"pk,n\na,1\nb,2\n'), table });
    expect(error).toMatchObject({ code: 'INPUT_HEADER', line: 3 });
    expect(await scanAll(client(), table)).toEqual([]);
  });
});
