/**
 * The arguments the ordering children (runOrderOnly.ts, runOrderHeld.ts) share:
 *   <mode> --input f.csv [--memory BYTES] [--window ROWS] [--temp-dir DIR] [--sequence FILE]
 * in a module of their own so that the other children do not load the library's option parsing.
 */
import { tmpdir } from 'node:os';
import { parseArgs } from 'node:util';
import { DEFAULT_MEMORY_BYTES } from '../dist/load/options.js';
import { ORDER_MODES, type OrderMode } from '../dist/ordering/order.js';

export interface OrderChildArgs {
  mode: OrderMode;
  input: string;
  /** What pipeline.ts's writeOrderer takes besides the input's size. */
  orderer: { windowRows: number; memoryBytes: number; tempDir: string };
  /** runOrderOnly only: where to write the partition key of each write, in order. */
  sequence: string | undefined;
}

export function orderChildArgs(argv: string[] = process.argv.slice(2)): OrderChildArgs {
  const [modeArg, ...rest] = argv;
  if (!ORDER_MODES.includes(modeArg as OrderMode)) throw new Error(`first argument: one of ${ORDER_MODES.join(', ')}, got ${String(modeArg)}`);
  const { values } = parseArgs({
    args: rest,
    options: {
      input: { type: 'string' },
      memory: { type: 'string', default: String(DEFAULT_MEMORY_BYTES) },
      window: { type: 'string', default: '50000' },
      'temp-dir': { type: 'string' },
      sequence: { type: 'string' },
    },
    strict: true,
  });
  if (!values.input) throw new Error('--input is required');
  return {
    mode: modeArg as OrderMode,
    input: values.input,
    orderer: { windowRows: Number(values.window), memoryBytes: Number(values.memory), tempDir: values['temp-dir'] ?? tmpdir() },
    sequence: values.sequence,
  };
}
