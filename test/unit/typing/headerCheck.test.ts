import { describe, expect, it } from 'vitest';
import { checkColumns, closest, nearMiss, splitByOtherDelimiter, type ColumnCheckOptions, type PartColumns } from '../../../src/typing/headerCheck.js';
import type { KeySchema } from '../../../src/shared/types.js';

const SCHEMA: KeySchema = { partitionKey: { name: 'customerId', type: 'S' }, sortKey: { name: 'orderId', type: 'S' } };
const options = (over: Partial<ColumnCheckOptions> = {}): ColumnCheckOptions => ({
  keySchema: SCHEMA,
  indexKeys: [],
  named: [],
  everyPartKnown: true,
  ...over,
});
const header = (file: string, names: string[], delimiter = ','): PartColumns => ({ file, source: 'header', names, delimiter });

describe('checkColumns: the table key in each header', () => {
  it('passes a header with both keys, in any order, with other columns', () => {
    expect(checkColumns([header('a.csv', ['total', 'orderId', 'customerId'])], options())).toBeUndefined();
  });

  it('a ";"-separated file read with "," is one column: the fix is --delimiter \';\'', () => {
    const problem = checkColumns([header('orders.csv', ['customerId;orderId;total'])], options());
    expect(problem).toMatchObject({ kind: 'input', file: 'orders.csv', field: 'customerId' });
    expect(problem!.message).toContain("--delimiter ';'");
    expect(problem!.message).toMatch(/^orders\.csv: /);
  });

  it.each([
    ['tabs', 'customerId\torderId', '--delimiter tab'],
    ['pipes', 'customerId|orderId', "--delimiter '|'"],
  ])('a file separated by %s names that delimiter', (_what, text, flag) => {
    expect(checkColumns([header('o.csv', [text])], options())!.message).toContain(flag);
  });

  it('a comma file read with --delimiter ";" is told to use ","', () => {
    expect(checkColumns([header('o.csv', ['customerId,orderId'], ';')], options())!.message).toContain("--delimiter ','");
  });

  it.each([
    ['CustomerId', 'differs only by case'],
    [' customerId', 'has spaces around it'],
    [' CUSTOMERID ', 'differs by case and by spaces'],
  ])('a key column spelled %j is named with how it differs', (spelled, how) => {
    const problem = checkColumns([header('o.csv', [spelled, 'orderId'])], options());
    expect(problem!.message).toContain(JSON.stringify(spelled));
    expect(problem!.message).toContain(how);
    expect(problem!.message).toContain('rename it to "customerId"');
  });

  it('the sort key missing is found too', () => {
    expect(checkColumns([header('o.csv', ['customerId', ' orderId'])], options())).toMatchObject({ field: 'orderId' });
  });

  it('no near name and no delimiter: the columns are listed and --columns is offered for a file without a header', () => {
    const problem = checkColumns([header('o.csv', ['c1', 'o7', '12.50'])], options());
    expect(problem!.message).toContain('"c1", "o7", "12.50"');
    expect(problem!.message).toContain('--columns');
  });

  it('each part of a set is checked, and the bad one is named', () => {
    const parts = [header('a.csv', ['customerId', 'orderId']), header('b.csv', ['customerId', 'OrderId']), header('c.csv', ['x'])];
    expect(checkColumns(parts, options())).toMatchObject({ file: 'b.csv', field: 'orderId' });
  });

  it('--columns that leave out the key: the fix is in --columns', () => {
    const problem = checkColumns([{ file: 'o.csv', source: 'columns', names: ['customerId', 'total'] }], options());
    expect(problem!.kind).toBe('option');
    expect(problem!.message).toContain('--columns');
    expect(problem!.message).toContain('orderId');
  });
});

describe('checkColumns: GSI keys', () => {
  const gsi = options({ indexKeys: [{ name: 'status', type: 'S', index: 'byStatus', role: 'partition' }] });
  it('a GSI key column absent altogether is a sparse index, not a mistake', () => {
    expect(checkColumns([header('o.csv', ['customerId', 'orderId'])], gsi)).toBeUndefined();
  });
  it('a GSI key column spelled otherwise is', () => {
    expect(checkColumns([header('o.csv', ['customerId', 'orderId', 'Status'])], gsi)).toMatchObject({ field: 'status', kind: 'input' });
  });
});

describe('checkColumns: JSON and Ion first rows', () => {
  const rows = (names: string[], everyRow = names): PartColumns => ({ file: 'o.jsonl', source: 'rows', names, rows: 3, everyRow });
  it('a key under another case in the first rows stops the load', () => {
    const problem = checkColumns([rows(['CustomerId', 'orderId'])], options());
    expect(problem).toMatchObject({ kind: 'input', field: 'customerId', file: 'o.jsonl' });
    expect(problem!.message).toContain('"CustomerId"');
  });
  it('a key absent from the first rows with no near name does not (rows may lack it one by one)', () => {
    expect(checkColumns([rows(['orderId', 'total'])], options())).toBeUndefined();
  });
  it('options naming attributes are not checked against rows (attributes may be sparse)', () => {
    expect(checkColumns([rows(['customerId', 'orderId'])], options({ named: [{ name: 'totl', option: '--types' }] }))).toBeUndefined();
  });
});

describe('checkColumns: columns options name', () => {
  const parts = [header('a.csv', ['customerId', 'orderId', 'total']), header('b.csv', ['customerId', 'orderId', 'note'])];
  it('--types totl: the closest column is offered', () => {
    const problem = checkColumns(parts, options({ named: [{ name: 'totl', option: '--types' }] }));
    expect(problem).toMatchObject({ kind: 'option', field: 'totl' });
    expect(problem!.message).toContain('did you mean "total"');
  });
  it('a name found in any one part passes', () => {
    expect(checkColumns(parts, options({ named: [{ name: 'note', option: '--types' }] }))).toBeUndefined();
  });
  it('a name far from every column lists them', () => {
    expect(checkColumns(parts, options({ named: [{ name: 'op', option: '--operation-column' }] }))!.message).toContain(
      '"customerId", "orderId", "total", "note"',
    );
  });
  it("not checked when some part's columns are unknown (stdin, Parquet, JSON)", () => {
    expect(checkColumns(parts, options({ named: [{ name: 'totl', option: '--types' }], everyPartKnown: false }))).toBeUndefined();
  });
});

describe('the helpers', () => {
  it('nearMiss: case and surrounding spaces only', () => {
    expect(nearMiss('pk', ['PK', 'x'])).toBe('PK');
    expect(nearMiss('pk', ['p k'])).toBeUndefined();
  });
  it('closest: at most 2 edits and a third of the name', () => {
    expect(closest('totl', ['total', 'title'])).toBe('total');
    expect(closest('ab', ['xy'])).toBeUndefined();
    expect(closest('amount', ['total'])).toBeUndefined();
  });
  it('splitByOtherDelimiter: undefined when no other delimiter splits out the key', () => {
    expect(splitByOtherDelimiter({ names: ['a;b'], delimiter: ',' }, 'pk')).toBeUndefined();
    expect(splitByOtherDelimiter({ names: ['"pk";"b"'], delimiter: ',' }, 'pk')).toBe(';');
  });
});

describe('checkColumns: other mistakes of the same kinds', () => {
  it('a key column spelled with an underscore: the closest name is offered', () => {
    const problem = checkColumns([header('o.csv', ['customer_id', 'orderId'])], options());
    expect(problem!.message).toContain('"customer_id"');
  });
  it('the partition key there but not the sort key: add the column (no --columns advice)', () => {
    const problem = checkColumns([header('o.csv', ['customerId', 'total'])], options());
    expect(problem!.message).toContain('needs "orderId"');
    expect(problem!.message).not.toContain('--columns');
  });
  it('--columns over a file whose first row is its header: drop --columns', () => {
    const part: PartColumns = { file: 'o.csv', source: 'columns', names: ['customerId', 'orderId'], firstRow: ['customerId', ' OrderId'] };
    expect(checkColumns([part], options())).toMatchObject({ kind: 'option', line: 1 });
    expect(checkColumns([{ ...part, firstRow: ['c1', 'o1'] }], options())).toBeUndefined();
  });
});
