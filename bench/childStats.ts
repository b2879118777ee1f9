/**
 * Shared by the bench's child processes: argument parsing and the one JSON line a child prints at the end.
 * CPU is measured as the delta around the timed section (module loading and client start-up excluded);
 * peak RSS is the whole child process's own (peakRssMB).
 */
import { readFileSync } from 'node:fs';
import { parseArgs } from 'node:util';

export interface ChildArgs {
  input: string;
  table: string;
  endpoint: string;
  concurrency: number;
  rejects: string;
  /** Minimal loop only: ask for ReturnConsumedCapacity=INDEXES as ddb-spread does. */
  rcc: boolean;
  /** ddb-spread only: its --order; the library default when absent. */
  order?: string;
  /** ddb-spread only: its --key-wcu; the library default when absent. */
  keyWcu?: number;
  /** ddb-spread only: its --transform module. */
  transform?: string;
  /** ddb-spread only: --if-not-exists. */
  ifNotExists?: boolean;
  /** ddb-spread only: --item-conditions. */
  itemConditions?: boolean;
  /** ddb-spread only: --input-format. */
  inputFormat?: string;
}

export function childArgs(argv: string[] = process.argv.slice(2)): ChildArgs {
  const { values } = parseArgs({
    args: argv,
    options: {
      input: { type: 'string' },
      table: { type: 'string' },
      endpoint: { type: 'string' },
      concurrency: { type: 'string', default: '8' },
      rejects: { type: 'string' },
      rcc: { type: 'boolean', default: false },
      order: { type: 'string' },
      'key-wcu': { type: 'string' },
      transform: { type: 'string' },
      'if-not-exists': { type: 'boolean', default: false },
      'item-conditions': { type: 'boolean', default: false },
      'input-format': { type: 'string' },
    },
    strict: true,
  });
  const { input, table, endpoint } = values;
  if (!input) throw new Error('--input is required');
  return {
    input,
    table: table ?? '',
    endpoint: endpoint ?? '',
    concurrency: Number(values.concurrency),
    rejects: values.rejects ?? `${input}.rejects.jsonl`,
    rcc: values.rcc ?? false,
    ...(values.order === undefined ? {} : { order: values.order }),
    ...(values['key-wcu'] === undefined ? {} : { keyWcu: Number(values['key-wcu']) }),
    ...(values.transform === undefined ? {} : { transform: values.transform }),
    ...(values['if-not-exists'] ? { ifNotExists: true } : {}),
    ...(values['item-conditions'] ? { itemConditions: true } : {}),
    ...(values['input-format'] === undefined ? {} : { inputFormat: values['input-format'] }),
  };
}

export interface ChildStats {
  /** Rows or items the timed section handled. */
  items: number;
  seconds: number;
  cpuUserS: number;
  cpuSysS: number;
  maxRssMB: number;
  /** RSS just before the timed section (after imports), for reading the peak against. */
  rssBeforeMB: number;
  /** CPU of the whole child process, start-up included (to tell the machine's other load apart). */
  processCpuS: number;
  extra?: Record<string, unknown>;
}

/**
 * This process's own peak RSS in MB: VmHWM of /proc/self/status where there is one (Linux). Not
 * process.resourceUsage().maxRSS there: Linux carries the larger of the parent's RSS at the fork and the
 * child's own over the exec, so a child of the bench, which holds the input it generated and uploaded,
 * read the bench's 322 MB whatever it used itself (a child that used 159 MB). maxRSS elsewhere.
 */
export function peakRssMB(): number {
  let text: string | undefined;
  try {
    text = readFileSync('/proc/self/status', 'utf8');
  } catch {
    // Not Linux.
  }
  const kb = text === undefined ? undefined : /^VmHWM:\s+(\d+) kB/m.exec(text)?.[1];
  return (kb === undefined ? process.resourceUsage().maxRSS : Number(kb)) / 1024;
}

/** Starts the clock; call the returned function when the work is done to print the JSON line. */
export function startMeasuring(): (items: number, extra?: Record<string, unknown>) => ChildStats {
  const before = process.resourceUsage();
  const rssBeforeMB = process.memoryUsage().rss / 1024 / 1024;
  const t0 = performance.now();
  return (items, extra) => {
    const seconds = (performance.now() - t0) / 1000;
    const after = process.resourceUsage();
    const stats: ChildStats = {
      items,
      seconds,
      cpuUserS: (after.userCPUTime - before.userCPUTime) / 1e6,
      cpuSysS: (after.systemCPUTime - before.systemCPUTime) / 1e6,
      maxRssMB: peakRssMB(),
      rssBeforeMB,
      processCpuS: (after.userCPUTime + after.systemCPUTime) / 1e6,
      ...(extra ? { extra } : {}),
    };
    process.stdout.write(`${JSON.stringify(stats)}\n`);
    return stats;
  };
}
