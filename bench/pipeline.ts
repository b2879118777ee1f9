/**
 * load()'s stages for the bench's children, composed from the built library (dist/): a file's rows →
 * planned writes → the write order → batches, with no table and no writer. The children measure these
 * stages instead of copying load()'s loop; they are load()'s own (src/load/stages.ts). Every bench input is a CSV of bench/data.ts's shape, typed as the loads type it.
 */
import { createBatcher } from '../dist/batching/batch.js';
import { LoadStop } from '../dist/load/loadStop.js';
import { LoadTally } from '../dist/load/loadTally.js';
import { batchesOf, planning, type StageReport } from '../dist/load/stages.js';
import type { OrderMode } from '../dist/ordering/order.js';
import { WriteOrderer } from '../dist/ordering/writeOrderer.js';
import { openInput, type OpenedInput } from '../dist/reading/openInput.js';
import { readRecords } from '../dist/reading/readRecords.js';
import { openStripedRead, recordGroup, stripeCount } from '../dist/ordering/stripes/stripedRecords.js';
import type { SourceRecord } from '../dist/typing/planRow.js';
import type { PlannedWrite } from '../dist/shared/types.js';
import { createRowPlanner, type RowPlanner } from '../dist/typing/planRow.js';

export interface PlannedInput {
  /** The file's size, for the orderer's spill estimate. */
  inputBytes: number | undefined;
  /** Rows read and rejected so far: final once forEachWrite has resolved. */
  counts: { rows: number; rejected: number };
  /**
   * Reads and plans every row with load()'s planning stage, in input order, handing each planned write to
   * onWrite (awaited only when it returns a promise); a rejected row is counted and left out.
   */
  forEachWrite(onWrite: (write: PlannedWrite) => void | Promise<void>): Promise<void>;
  /** load()'s whole chain with the order of `orderer`: resolves with how many batches it made. */
  countBatches(orderer: WriteOrderer): Promise<number>;
}

/**
 * Opens the CSV and plans its rows as load() does for a pk/sk (S) table with amount and qty typed N.
 * `stripes`: read as load()'s default order reads a plain local file (src/ordering/stripes/stripedRecords.ts), when
 * the file can be cut; `parts` then says how many stripes (0: read whole).
 */
export async function plannedWrites(path: string, options: { stripes?: boolean } = {}): Promise<PlannedInput & { parts: number }> {
  const input = await openInput(path);
  const planner = benchPlanner();
  const striped = options.stripes ? await stripedRead(path, input, planner) : undefined;
  const records = (opened: OpenedInput) => striped?.records ?? csvRecords(opened);
  const tally = new LoadTally();
  const counts = { rows: 0, rejected: 0 };
  const report: StageReport = {
    stop: new LoadStop(),
    tally,
    rejections: {
      reject: () => {
        counts.rejected++;
        return Promise.resolve();
      },
    },
    progress: () => undefined,
    emit: () => undefined,
  };
  const stages = { file: input.name, planner, segment: undefined, onPlanned: (w: PlannedWrite) => w };
  return {
    inputBytes: input.totalBytes,
    parts: striped?.parts ?? 0,
    counts,
    async forEachWrite(onWrite) {
      const plan = planning(stages, report);
      for await (const record of records(input)) {
        counts.rows++;
        const planning = plan(record);
        const planned = planning instanceof Promise ? await planning : planning;
        if (!planned) continue;
        // The bench plans without a transform: one write per row (an array only from a transform's split).
        for (const write of Array.isArray(planned) ? planned : [planned]) {
          const handled = onWrite(write);
          if (handled) await handled;
        }
      }
    },
    async countBatches(orderer) {
      let batches = 0;
      const all = batchesOf(
        striped?.chunks ?? csvRecords(input),
        {
          ...stages,
          orderer,
          order: 'input',
          batcher: createBatcher(),
          sendLast: () => true,
          close: () => (striped ? striped.close() : input.stream.destroy()),
        },
        report,
      );
      for await (const _batch of all) batches++;
      counts.rows = tally.counters.rowsRead;
      return batches;
    },
  };
}

function csvRecords(input: OpenedInput): AsyncGenerator<SourceRecord> {
  return readRecords(input, 'csv', { delimiter: ',', columns: undefined });
}

/** load()'s striped read of the file (prepareLoad's readingOf), or undefined when it is read whole. */
async function stripedRead(path: string, input: OpenedInput, planner: RowPlanner) {
  const how = { syntax: 'csv', delimiter: ',', columns: undefined } as const;
  const parts = await stripeCount(path, input.totalBytes, how);
  if (parts < 2 || input.totalBytes === undefined) return undefined;
  const striped = await openStripedRead({ path, file: input.name, size: input.totalBytes, how, parts, probe: recordGroup(planner, { name: 'pk', type: 'S' }) });
  if (striped) input.stream.destroy();
  return striped;
}

function benchPlanner(): RowPlanner {
  return createRowPlanner({
    keySchema: { partitionKey: { name: 'pk', type: 'S' }, sortKey: { name: 'sk', type: 'S' } },
    types: { amount: 'N', qty: 'N' },
    infer: false,
    empty: 'omit',
    jsonFlavor: 'json',
  });
}
/** The orderer load() builds for --order, --window and --memory (auto: its window, which may go over to round-robin). */
export function writeOrderer(
  mode: OrderMode,
  options: { windowRows: number; memoryBytes: number; tempDir: string; inputBytes: number | undefined },
): WriteOrderer {
  const { inputBytes, ...rest } = options;
  const adaptive = mode === 'auto' ? { adaptive: { onGrouped: () => undefined } } : {};
  return new WriteOrderer({ mode: mode === 'auto' ? 'window' : mode, ...adaptive, ...rest, ...(inputBytes === undefined ? {} : { inputBytes }) });
}

/**
 * Pushes every planned write through the order, handing each write that comes out to onWrite: what each
 * push hands out, then, once the input is read (onReadEnd), what the order still holds. The caller closes
 * the orderer.
 */
export async function orderWrites(input: PlannedInput, orderer: WriteOrderer, onWrite: (write: PlannedWrite) => void, onReadEnd?: () => void): Promise<void> {
  await input.forEachWrite(async (planned) => {
    for (const write of await orderer.push(planned)) onWrite(write);
  });
  onReadEnd?.();
  for await (const write of orderer.drain()) onWrite(write);
}
