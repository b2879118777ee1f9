import type { InputSet } from '../reading/inputSet.js';
import { readPartHeads } from '../reading/partHeads.js';
import { LoaderError } from '../shared/errors.js';
import type { TableInfo } from '../shared/tableInfo.js';
import { checkColumns, type ColumnCheckOptions, type PartColumns } from '../typing/headerCheck.js';
import { indexKeyAttributes } from '../typing/indexKeys.js';
import type { NormalizedLoadOptions } from './options.js';

/**
 * Before the first write (and in a dry run): every part's header row or first rows, checked against the
 * table's keys and the columns options name (typing/headerCheck.ts). A mistake they already show stops the
 * load here, before a reject file fills with one row per line: the input's fault as INPUT_HEADER (65),
 * an option naming a column no part has as INVALID_OPTION (64). Returns the set with its JSON documents
 * marked (reading/partHeads.ts). The same input gives the same answer, so a resumed load passes as its
 * first run did.
 */
export async function preflightInput(set: InputSet, table: TableInfo, opts: NormalizedLoadOptions): Promise<InputSet> {
  const heads = await readPartHeads(set, { format: opts.inputFormat, csv: { delimiter: opts.delimiter, columns: opts.columns } });
  throwProblem(heads.columns, heads.everyPartKnown, table, opts);
  // DynamoDB JSON lines with their own condition, read as plain JSON (a .jsonl name): every row would be an item
  // named Item, missing its key. Said before the first write, with what to pass.
  const plain = heads.columns.find((c) => c.plainJson === true && (c.conditionedRows ?? 0) > 0);
  if (plain)
    throw new LoaderError(
      'INPUT_HEADER',
      `${plain.file} holds DynamoDB JSON lines with their own condition ({"Item": ..., "ConditionExpression": ...}) but is read as plain JSON Lines (by its name): pass --input-format ddb-json${opts.condition?.kind === 'item' ? '' : ', and --item-conditions to apply the conditions'}`,
      { file: plain.file, field: 'Item' },
    );
  if (opts.condition?.kind !== 'item') {
    // Every first line carries its own condition: the flag that applies them is missing, not one row's fault.
    const conditioned = heads.columns.find((c) => c.rows !== undefined && c.conditionedRows === c.rows);
    if (conditioned)
      throw new LoaderError(
        'INPUT_HEADER',
        `the first ${conditioned.rows === 1 ? 'line' : `${conditioned.rows} lines`} of ${conditioned.file} carry their own condition (ConditionExpression beside Item), which this load does not apply: pass --item-conditions to send each row with its condition${opts.condition ? " (instead of the load's one condition)" : ''}, or remove those fields (jq -c '{Item}') to write the items unconditionally`,
        { file: conditioned.file, field: 'ConditionExpression' },
      );
  }
  return heads.set;
}

/**
 * The same check on a CSV header row as the read meets it: stdin's (which cannot be read twice, so is not
 * read ahead), thrown before the part's first row is handed on, so before any write of it.
 */
export function headerChecker(table: TableInfo, opts: NormalizedLoadOptions, parts: number): (file: string, names: string[], delimiter: string) => void {
  return (file, names, delimiter) => throwProblem([{ file, source: 'header', names, delimiter }], parts === 1, table, opts);
}

function throwProblem(columns: PartColumns[], everyPartKnown: boolean, table: TableInfo, opts: NormalizedLoadOptions): void {
  const problem = checkColumns(columns, {
    keySchema: table.keySchema,
    indexKeys: indexKeyAttributes(table),
    named: namedColumns(opts),
    everyPartKnown,
  });
  if (problem) {
    throw new LoaderError(problem.kind === 'input' ? 'INPUT_HEADER' : 'INVALID_OPTION', problem.message, {
      ...(problem.file === undefined ? {} : { file: problem.file }),
      ...(problem.line === undefined ? {} : { line: problem.line }),
      field: problem.field,
    });
  }
}

/** The input columns options name, each with its option: what must be a column of some part. */
function namedColumns(opts: NormalizedLoadOptions): ColumnCheckOptions['named'] {
  // A delete list (--delete, no --operation-column) writes only keys: types for other columns (a job file's, say) do nothing and harm nothing.
  const deletesOnly = opts.deletes?.all === true && opts.deletes.column === undefined;
  const named: { name: string; option: string }[] = deletesOnly ? [] : Object.keys(opts.types).map((name) => ({ name, option: '--types (or --schema)' }));
  if (opts.deletes?.column !== undefined) named.push({ name: opts.deletes.column, option: '--operation-column' });
  for (const rule of opts.shard?.rules ?? []) {
    if (rule.kind !== 'random' && rule.attribute !== undefined) named.push({ name: rule.attribute, option: `--shard ${rule.kind}` });
  }
  // --keep-original-key names an attribute the load adds, not one it reads.
  const added = opts.shard?.keepOriginalKey;
  return named.filter((n) => n.name !== added);
}
