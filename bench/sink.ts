/**
 * ddb-spread against the hand-written SDK v3 loop with the server's time taken out (target: at least as fast,
 * with no more client CPU per item; on key-mixed data, 1.2x as fast).
 * Both load the same CSV into bench/instantSink.ts, a local endpoint that accepts every
 * BatchWriteItem at once, so items/s and client CPU per item are the client's own. The loop asks for
 * ReturnConsumedCapacity INDEXES on every call here, as the hand loop is defined (ddb-spread asks on its first
 * 64 calls and one in 16 after, while the answers match its plan). ddb-spread runs in each of the given
 * variants (by default: default options, and `--order spread`, whose schedule is proportional: every key
 * of a key-sorted input fits under the default --key-wcu in it). Run from bench.ts; each load is a child process.
 */
import { loadavg } from 'node:os';
import { join } from 'node:path';
import type { DataFile } from './data.js';
import type { Harness, Observed } from './harness.js';
import { startInstantSink } from './instantSink.js';
import { cpuOf, fmtInt, median, pass, table } from './report.js';
import { DEFAULT_KEY_WCU } from '../src/pacing/rateControl.js';

export const SINK_TARGET_RATIO = 1.0;

/** A way to run ddb-spread: its name in the figures, its extra child arguments, and the --key-wcu it runs at. */
export interface SinkVariant {
  name: string;
  args: string[];
  keyWcu: number;
}
/** The key-sorted data's variants: default options, and --order spread. */
export const SORTED_VARIANTS: SinkVariant[] = [
  { name: 'ddb-spread', args: [], keyWcu: DEFAULT_KEY_WCU },
  { name: 'ddb-spread --order spread', args: ['--order', 'spread'], keyWcu: DEFAULT_KEY_WCU },
];
const LOOP = 'minimal loop';

export interface SinkRun extends Observed {
  itemsPerSecond: number;
  cpuUsPerItem: number;
  /** Items the sink received, against the rows of the file (more means resends). */
  sinkItems: number;
}

export interface SinkSummary {
  loader: string;
  runs: SinkRun[];
  itemsPerSecond: number;
  cpuUsPerItem: number;
  peakRssMB: number;
}

export interface SinkResult {
  rows: number;
  concurrency: number;
  summaries: SinkSummary[];
  /** The first variant (default options) / minimal loop, median items/s. */
  ratio: number;
  /**
   * Write units per second the biggest key needs in a proportional schedule at the loop's items/s (a row
   * of this data is one unit: ~250 bytes), and whether that is within the default --key-wcu: the sink
   * target's condition ("keys fit under --key-wcu in a proportional schedule"). Where it is not, the key's own
   * ceiling bounds every order, and the ratio is no verdict on the client.
   */
  hotKeyWcu: number;
  keysFit: boolean;
  /** The first variant (default options) / minimal loop, median CPU µs per item. */
  cpuRatio: number;
  /** Each variant's median items/s and CPU µs per item against the loop's, with its verdict. */
  variants: { name: string; ratio: number; cpuRatio: number; keysFit: boolean; met: boolean | undefined }[];
  lines: string[];
}

export async function sinkBench(options: {
  harness: Harness;
  file: DataFile;
  repeats: number;
  concurrency: number;
  tmp: string;
  log: (msg: string) => void;
  /** ddb-spread's variants (default: SORTED_VARIANTS); the first is the one `ratio` and `cpuRatio` describe. */
  variants?: SinkVariant[];
  /** Items/s against the loop's that meets the target (default SINK_TARGET_RATIO). */
  targetRatio?: number;
  /** What the figures' title says of the data and the target, e.g. "keys sorted". */
  title?: { target: string; data: string };
}): Promise<SinkResult> {
  const { harness, file, repeats, concurrency, tmp, log } = options;
  const variants = options.variants ?? SORTED_VARIANTS;
  const targetRatio = options.targetRatio ?? SINK_TARGET_RATIO;
  const title = options.title ?? { target: 'issue 14, target 1', data: 'sorted' };
  const LOADERS = [...variants.map((v) => v.name), LOOP];
  const sink = await startInstantSink();
  const runs = new Map<string, SinkRun[]>(LOADERS.map((l) => [l, []]));
  try {
    for (let i = 0; i < repeats; i++) {
      // ABC CBA: a drift of the machine's speed is shared out between the loaders.
      for (const loader of i % 2 === 0 ? LOADERS : [...LOADERS].reverse()) {
        const before = sink.stats.items;
        const args = ['--input', file.path, '--table', `sink-${i}`, '--endpoint', sink.endpoint, '--concurrency', String(concurrency)];
        const variant = variants.find((v) => v.name === loader);
        const stats =
          variant === undefined
            ? await harness.runChild('runMinimalLoop.ts', [...args, '--rcc'])
            : await harness.runChild('runDdbSpread.ts', [
                ...args,
                '--rejects',
                join(tmp, `sink-${i}.rejects.jsonl`),
                ...(variant.keyWcu === DEFAULT_KEY_WCU ? [] : ['--key-wcu', String(variant.keyWcu)]),
                ...variant.args,
              ]);
        const run: SinkRun = {
          ...stats,
          itemsPerSecond: stats.items / stats.seconds,
          cpuUsPerItem: (cpuOf(stats) * 1e6) / Math.max(1, stats.items),
          sinkItems: sink.stats.items - before,
        };
        runs.get(loader)!.push(run);
        if (run.items !== file.rows || run.sinkItems < file.rows)
          log(`WARNING sink ${loader}: ${file.rows} rows, ${run.items} reported written, ${run.sinkItems} received`);
        log(
          `instant sink, ${loader} #${i + 1}: ${fmtInt(run.itemsPerSecond)} items/s, ${run.seconds.toFixed(1)} s, client CPU ${cpuOf(run).toFixed(1)} s ` +
            `(${run.cpuUsPerItem.toFixed(0)} µs/item), peak RSS ${run.maxRssMB.toFixed(0)} MB, other processes ${run.otherCpuS?.toFixed(1) ?? '?'} s`,
        );
      }
    }
  } finally {
    await sink.close();
  }
  const summaries = LOADERS.map((loader): SinkSummary => {
    const r = runs.get(loader)!;
    return {
      loader,
      runs: r,
      itemsPerSecond: median(r.map((x) => x.itemsPerSecond)),
      cpuUsPerItem: median(r.map((x) => x.cpuUsPerItem)),
      peakRssMB: Math.max(...r.map((x) => x.maxRssMB)),
    };
  });
  const loop = summaries[summaries.length - 1]!;
  const hotKeyWcu = (file.hotRows / file.rows) * loop.itemsPerSecond;
  const keysFit = hotKeyWcu <= DEFAULT_KEY_WCU;
  const judged = variants.map((v, i) => {
    const s = summaries[i]!;
    const ratio = s.itemsPerSecond / loop.itemsPerSecond;
    const cpuRatio = s.cpuUsPerItem / loop.cpuUsPerItem;
    // The target holds where every key fits under the variant's --key-wcu at the loop's rate; elsewhere
    // the key's own ceiling bounds every order, and the ratio is no verdict on the client.
    const fits = hotKeyWcu <= v.keyWcu;
    return { name: v.name, ratio, cpuRatio, keysFit: fits, met: fits ? ratio >= targetRatio && cpuRatio <= 1 : undefined };
  });
  const verdict = (i: number) => {
    const j = judged[i];
    if (j === undefined) return '';
    return j.met === undefined ? 'no verdict: keys do not fit' : `>= ${targetRatio.toFixed(1)}x and CPU/item <= loop: ${pass(j.met)}`;
  };
  const [first] = judged as [(typeof judged)[number]];
  const lines = [
    `Instant sink (${title.target}): ${fmtInt(file.rows)} rows, ${file.customersWithRows} keys ${title.data}, biggest ${((100 * file.hotRows) / file.rows).toFixed(1)}%; ` +
      `concurrency ${concurrency}; ${repeats} runs each, alternating; medians; the loop asks for ReturnConsumedCapacity INDEXES; load average ${loadavg()[0]!.toFixed(1)} at the end`,
    table(
      ['', 'items/s', 'vs loop', 'CPU µs/item', 'vs loop', 'peak RSS MB', 'target'],
      summaries.map((s, i) => [
        s.loader,
        fmtInt(s.itemsPerSecond),
        (s.itemsPerSecond / loop.itemsPerSecond).toFixed(2),
        s.cpuUsPerItem.toFixed(0),
        (s.cpuUsPerItem / loop.cpuUsPerItem).toFixed(2),
        s.peakRssMB.toFixed(0),
        verdict(i),
      ]),
    ),
    `ratio ddb-spread / minimal loop items/s: ${judged.map((j) => `${j.name} ${j.ratio.toFixed(2)}`).join(', ')} (target >= ${targetRatio.toFixed(1)}); ` +
      `CPU per item ${judged.map((j) => j.cpuRatio.toFixed(2)).join(' and ')} (target <= 1.00)`,
    `${keysFit ? 'keys fit' : 'KEYS DO NOT FIT'}: at the loop's ${fmtInt(loop.itemsPerSecond)} items/s the biggest key needs ${fmtInt(hotKeyWcu)} WCU/s in a proportional schedule, ` +
      `${keysFit ? 'under' : 'over'} --key-wcu ${DEFAULT_KEY_WCU}; its ${fmtInt(file.hotRows)} rows take ${(file.hotRows / DEFAULT_KEY_WCU).toFixed(1)} s of writing at that rate, ` +
      `which bounds default options at ${fmtInt((DEFAULT_KEY_WCU * file.rows) / file.hotRows)} items/s` +
      (keysFit ? '' : `: the target's condition does not hold at the default --key-wcu on this file`),
  ];
  return { rows: file.rows, concurrency, summaries, ratio: first.ratio, cpuRatio: first.cpuRatio, hotKeyWcu, keysFit, variants: judged, lines };
}
