import type { OrderMode } from '../ordering/order.js';
import { detectFormat } from '../reading/detectFormat.js';
import type { InputSet } from '../reading/inputSet.js';
import { openInput } from '../reading/openInput.js';
import type { OpenedInputSet } from '../reading/readInputSet.js';
import { createRowPlanner, type RowPlannerOptions, type SourceRecord } from '../typing/planRow.js';
import type { Disposer } from './disposer.js';
import type { LoadFacts } from './loadFacts.js';
import type { LoadMode } from './loadMode.js';
import type { NormalizedLoadOptions } from './options.js';
import { delimiterOf, formatFromName, type InputFormat } from '../reading/inputFormat.js';
import { planPartStripes, readPartStripes, stripeableParts, type StripePart } from '../ordering/stripes/partStripes.js';
import { MIN_STRIPE_BYTES, planStripes, readStripes, recordGroup, stripeCount } from '../ordering/stripes/stripedRecords.js';

/** How the load's input is read: its records in the order they come, the write order in effect, and how to stop. */
export interface Reading {
  /** The input's records (a striped read's, in arrays; or the file's). */
  records: AsyncGenerator<SourceRecord | SourceRecord[]>;
  /** The write order in effect: --order, or round-robin where a file cannot be read in stripes. */
  order: OrderMode;
  /** The stripes read at once (0: the input is read whole). */
  parts: number;
  /** Stops reading the input. */
  closeInput: () => void;
}

export interface ReadingContext {
  opts: NormalizedLoadOptions;
  onStripes: LoadMode['onStripes'];
  /** The smallest stripe, when a test shrinks it (LoadDependencies.testSeams). */
  stripeBytes: number | undefined;
  /** A striped read's close is deferred here. */
  disposer: Disposer;
  /** A striped read's bytes are recorded here. */
  facts: LoadFacts;
}

/**
 * How the input is read: in stripes when --order is stripes (the default for a file) and the file can be
 * cut and looks grouped by partition key (src/ordering/stripes/stripedRecords.ts); otherwise whole, in round-robin
 * order for stripes, or in the order asked for. A dry run that simulates the stripes (`onStripes`, the
 * estimate) is told how the file would be read, and reads it whole in input order: where it would be read
 * in stripes, still in the order `stripes`, so that GroupingCheck proves over the whole file (as one part)
 * what the load would prove stripe by stripe.
 */
export async function readingOf(
  { inputSet, input, format }: { inputSet: InputSet; input: OpenedInputSet; format: InputFormat | undefined },
  plannerOptions: RowPlannerOptions,
  { opts, onStripes, stripeBytes, disposer, facts }: ReadingContext,
): Promise<Reading> {
  const whole = (order: OrderMode) => ({ records: input.records, order, parts: 0, closeInput: () => input.close() });
  if (opts.order !== 'stripes') return whole(opts.order);
  const notStriped = () => {
    onStripes?.(undefined);
    return whole(onStripes ? 'input' : 'round-robin');
  };
  // A set of plain parts (local files, S3 objects) is striped across its parts; a dry run reads it whole as before.
  const set = onStripes ? undefined : await stripeableParts(inputSet, opts);
  if (set) return (await partStripedReading(set, input, plannerOptions, { stripeBytes, disposer, facts })) ?? notStriped();
  // Stripes cut one plain local file; stdin, an export or deletes are read whole.
  const path = plainLocalFile(inputSet, opts);
  if (path === undefined || format === undefined) return notStriped();
  const syntax = format === 'csv' ? 'csv' : 'jsonl';
  const file = inputSet.parts[0]!.part.name;
  const how = { syntax, delimiter: delimiterOf(file, opts.delimiter), columns: opts.columns } as const;
  // The tests cut small files into many stripes; users never need to.
  const minBytes = stripeBytes ?? MIN_STRIPE_BYTES;
  const parts = INPUT_SYNTAX.has(format) ? await stripeCount(path, input.totalBytes, how, minBytes) : 0;
  const plan =
    parts >= 2
      ? await planStripes({
          path,
          file,
          size: input.totalBytes!,
          how,
          parts,
          probe: recordGroup(createRowPlanner({ ...plannerOptions, shard: undefined }), plannerOptions.keySchema.partitionKey),
          // recordGroup's key for a CSV string key is the cell as it is: the heads are read by that column alone.
          ...(syntax === 'csv' && plannerOptions.keySchema.partitionKey.type === 'S' ? { keyColumn: plannerOptions.keySchema.partitionKey.name } : {}),
        })
      : undefined;
  if (!plan) return notStriped();
  if (onStripes) {
    onStripes(plan.layout);
    return { ...whole('stripes'), parts: 1 };
  }
  const striped = readStripes(path, file, input.totalBytes!, how, plan, inputSet.parts[0]!.part.pin);
  disposer.defer(() => striped.close());
  input.close();
  facts.input = { totalBytes: input.totalBytes, bytesRead: striped.bytesRead };
  return { records: striped.chunks, order: 'stripes', parts: striped.parts, closeInput: striped.close };
}

/** A set's striped reading, or undefined when its heads show it is not grouped (partStripes.ts). */
async function partStripedReading(
  parts: StripePart[],
  input: OpenedInputSet,
  plannerOptions: RowPlannerOptions,
  { stripeBytes, disposer, facts }: Pick<ReadingContext, 'stripeBytes' | 'disposer' | 'facts'>,
): Promise<Reading | undefined> {
  const { partitionKey } = plannerOptions.keySchema;
  const plan = await planPartStripes({
    parts,
    probe: recordGroup(createRowPlanner({ ...plannerOptions, shard: undefined }), partitionKey),
    ...(partitionKey.type === 'S' ? { keyColumn: partitionKey.name } : {}),
    ...(stripeBytes !== undefined ? { minBytes: stripeBytes } : {}),
  });
  if (!plan) return undefined;
  const striped = readPartStripes(plan);
  disposer.defer(() => striped.close());
  input.close();
  facts.input = { totalBytes: input.totalBytes, bytesRead: striped.bytesRead };
  return { records: striped.chunks, order: 'stripes', parts: striped.parts, closeInput: striped.close };
}

/** The path of the load's one input when it is a plain local file (not an export, no deletes): what stripes can cut. */
function plainLocalFile(inputSet: InputSet, opts: NormalizedLoadOptions): string | undefined {
  const parts = inputSet.parts;
  const only = parts.length === 1 ? parts[0]! : undefined;
  if (!only || only.format !== undefined || opts.deletes) return undefined;
  return only.part.path;
}

/**
 * The format of the load as a whole: --input-format, else a single plain file's, by its name or its
 * first bytes (opened and closed again here). Undefined for a set: each part is read by its own.
 */
export async function loadFormatOf(inputSet: InputSet, opts: NormalizedLoadOptions): Promise<InputFormat | undefined> {
  if (opts.inputFormat !== undefined) return opts.inputFormat;
  const path = plainLocalFile(inputSet, opts);
  if (path === undefined) return undefined;
  const named = formatFromName(path);
  if (named !== undefined) return named;
  const opened = await openInput(path);
  try {
    return await detectFormat(opened);
  } finally {
    opened.stream.destroy();
  }
}

/** Formats a striped read can cut: text with one record per line (CSV's quoted line breaks included). */
const INPUT_SYNTAX = new Set(['csv', 'jsonl', 'ddb-json']);
