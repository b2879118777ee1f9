import { LoaderError } from '../shared/errors.js';

/**
 * --compare-estimate: the predictions of an `estimate --json` output that the report sets beside what
 * the load did. Pure: the text in, the predictions out, or an error naming the file, the field and what to run.
 */
export interface EstimateBeside {
  /** The estimate's input and table, as it names them (the comparison is the user's to make). */
  input: string;
  table: string | null;
  /** What the load was predicted to take, start-up and reading included (time.estimatedSeconds). */
  seconds: number;
  /** Write units of every valid row, table and GSIs (writeUnits.total). */
  writeUnits: number;
  /** The rate the estimate worked at (rate.assumedWcu). */
  rateWcu: number;
  /** Write requests the simulated planned order saw throttled (simulations.planned.throttledItems). */
  throttledItems: number;
  rows: number;
  rejected: number;
}

const FIELDS: ReadonlyArray<[keyof EstimateBeside, string]> = [
  ['seconds', 'time.estimatedSeconds'],
  ['writeUnits', 'writeUnits.total'],
  ['rateWcu', 'rate.assumedWcu'],
  ['throttledItems', 'simulations.planned.throttledItems'],
  ['rows', 'input.rows'],
  ['rejected', 'input.rejected'],
];

export function parseEstimateJson(text: string, file: string): EstimateBeside {
  const refuse = (what: string) =>
    new LoaderError(
      'INVALID_OPTION',
      `--compare-estimate ${file} is not the output of \`ddb-spread estimate --json\` (${what}); write one with \`ddb-spread estimate <input> --table <table> --json > ${file}\``,
      { file },
    );
  let doc: unknown;
  try {
    doc = JSON.parse(text);
  } catch (error) {
    throw refuse(`not JSON: ${(error as Error).message}`);
  }
  if (typeof doc !== 'object' || doc === null || (doc as { version?: unknown }).version !== 1) throw refuse('no "version": 1 at its top');
  const at = (path: string): unknown =>
    path.split('.').reduce<unknown>((o, k) => (typeof o === 'object' && o !== null ? (o as Record<string, unknown>)[k] : undefined), doc);
  const out: Partial<EstimateBeside> = {};
  for (const [name, path] of FIELDS) {
    const value = at(path);
    if (typeof value !== 'number' || !Number.isFinite(value) || value < 0)
      throw refuse(`${path} is ${value === undefined ? 'missing' : `not a number from 0 up: ${JSON.stringify(value)}`}`);
    (out as Record<string, number>)[name] = value;
  }
  const input = at('input.file');
  const table = at('table.name');
  return {
    ...(out as Omit<EstimateBeside, 'input' | 'table'>),
    input: typeof input === 'string' ? input : '',
    table: typeof table === 'string' ? table : null,
  };
}
