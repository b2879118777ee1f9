/**
 * load()'s stages for the bench's children, composed from the built library (dist/): a file's rows →
 * planned writes → the write order → batches, with no table and no writer. The children measure these
 * stages instead of copying load()'s loop; when load()'s stages are exported as such (src/load/), only this
 * module changes. Every bench input is a CSV of bench/data.ts's shape, typed as the loads type it.
 */
import { createBatcher } from '../dist/batching/batch.js';
import type { OrderMode } from '../dist/ordering/order.js';
import { WriteOrderer } from '../dist/ordering/writeOrderer.js';
import { openInput } from '../dist/reading/openInput.js';
import { readCsv } from '../dist/reading/readCsv.js';
import type { PlannedWrite } from '../dist/shared/types.js';
import { createRowPlanner, isRejected } from '../dist/typing/planRow.js';

export interface PlannedInput {
  /** The file's size, for the orderer's spill estimate. */
  inputBytes: number | undefined;
  /** Rows read and rejected so far: final once forEachWrite has resolved. */
  counts: { rows: number; rejected: number };
  /**
   * Reads and plans every row, in input order, handing each planned write to onWrite (awaited only when
   * it returns a promise); a rejected row is counted and left out. A callback, not an async generator: a
   * generator layer per row cost parse-only ~5% more CPU and ~30 MB more peak RSS (200k rows), which
   * load()'s own loop does not pay today.
   */
  forEachWrite(onWrite: (write: PlannedWrite) => void | Promise<void>): Promise<void>;
}

/** Opens the CSV and plans its rows as load() does for a pk/sk (S) table with amount and qty typed N. */
export async function plannedWrites(path: string): Promise<PlannedInput> {
  const input = await openInput(path);
  const planner = createRowPlanner({
    keySchema: { partitionKey: { name: 'pk', type: 'S' }, sortKey: { name: 'sk', type: 'S' } },
    types: { amount: 'N', qty: 'N' },
    infer: false,
    empty: 'omit',
    jsonFlavor: 'json',
  });
  const counts = { rows: 0, rejected: 0 };
  return {
    inputBytes: input.totalBytes,
    counts,
    async forEachWrite(onWrite) {
      for await (const record of readCsv(input.stream, input.name, { delimiter: ',', columns: undefined })) {
        counts.rows++;
        const planned = planner.plan(record);
        if (isRejected(planned)) {
          counts.rejected++;
          continue;
        }
        const handled = onWrite(planned);
        if (handled) await handled;
      }
    },
  };
}

/** The orderer load() builds for --order, --window and --memory. */
export function writeOrderer(mode: OrderMode, options: { windowRows: number; memoryBytes: number; tempDir: string; inputBytes: number | undefined }): WriteOrderer {
  const { inputBytes, ...rest } = options;
  return new WriteOrderer({ mode, ...rest, ...(inputBytes === undefined ? {} : { inputBytes }) });
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

/** Batches the planned writes as load() does, sending none; resolves with how many batches they made. */
export async function countBatches(input: PlannedInput): Promise<number> {
  const batcher = createBatcher();
  let batches = 0;
  await input.forEachWrite((write) => {
    if (batcher.push(write).full) batches++;
  });
  if (batcher.flush()) batches++;
  return batches;
}
