/**
 * ddb-spread against the hand-written SDK v3 loop with the server's time taken out (target: at least as fast,
 * with no more client CPU per item).
 * Both load the same key-sorted CSV into bench/instantSink.ts, a local endpoint that accepts every
 * BatchWriteItem at once, so items/s and client CPU per item are the client's own. The loop asks for
 * ReturnConsumedCapacity INDEXES on every call here, as the hand loop is defined (ddb-spread asks on its first
 * 64 calls and one in 16 after, while the answers match its plan). ddb-spread runs
 * with default options and with `--order spread` (whose schedule is proportional: every key of this
 * input fits under the default --key-wcu in it). Run from bench.ts; each load is a child process.
 */
import { join } from 'node:path';
import type { DataFile } from './data.js';
import type { Harness, Observed } from './harness.js';
import { startInstantSink } from './instantSink.js';
import { cpuOf, fmtInt, median, pass, table } from './report.js';
import { DEFAULT_KEY_WCU } from '../src/pacing/rateControl.js';

export const SINK_TARGET_RATIO = 1.0;

export type SinkLoader = 'ddb-spread' | 'ddb-spread --order spread' | 'minimal loop';
const LOADERS: SinkLoader[] = ['ddb-spread', 'ddb-spread --order spread', 'minimal loop'];

export interface SinkRun extends Observed {
  itemsPerSecond: number;
  cpuUsPerItem: number;
  /** Items the sink received, against the rows of the file (more means resends). */
  sinkItems: number;
}

export interface SinkSummary {
  loader: SinkLoader;
  runs: SinkRun[];
  itemsPerSecond: number;
  cpuUsPerItem: number;
  peakRssMB: number;
}

export interface SinkResult {
  rows: number;
  concurrency: number;
  summaries: SinkSummary[];
  /** ddb-spread (default options) / minimal loop, median items/s. */
  ratio: number;
  spreadRatio: number;
  /**
   * Write units per second the biggest key needs in a proportional schedule at the loop's items/s (a row
   * of this data is one unit: ~250 bytes), and whether that is within the default --key-wcu: the sink
   * target's condition ("keys fit under --key-wcu in a proportional schedule"). Where it is not, the key's own
   * ceiling bounds every order, and the ratio is no verdict on the client.
   */
  hotKeyWcu: number;
  keysFit: boolean;
  /** ddb-spread (default options) / minimal loop, median CPU µs per item. */
  cpuRatio: number;
  spreadCpuRatio: number;
  lines: string[];
}

export async function sinkBench(options: {
  harness: Harness;
  file: DataFile;
  repeats: number;
  concurrency: number;
  tmp: string;
  log: (msg: string) => void;
}): Promise<SinkResult> {
  const { harness, file, repeats, concurrency, tmp, log } = options;
  const sink = await startInstantSink();
  const runs = new Map<SinkLoader, SinkRun[]>(LOADERS.map((l) => [l, []]));
  try {
    for (let i = 0; i < repeats; i++) {
      // ABC CBA: a drift of the machine's speed is shared out between the loaders.
      for (const loader of i % 2 === 0 ? LOADERS : [...LOADERS].reverse()) {
        const before = sink.stats.items;
        const args = ['--input', file.path, '--table', `sink-${i}`, '--endpoint', sink.endpoint, '--concurrency', String(concurrency)];
        const stats =
          loader === 'minimal loop'
            ? await harness.runChild('runMinimalLoop.ts', [...args, '--rcc'])
            : await harness.runChild('runDdbSpread.ts', [
                ...args,
                '--rejects',
                join(tmp, `sink-${i}.rejects.jsonl`),
                ...(loader === 'ddb-spread' ? [] : ['--order', 'spread']),
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
  const [dflt, spread, loop] = summaries as [SinkSummary, SinkSummary, SinkSummary];
  const ratio = dflt.itemsPerSecond / loop.itemsPerSecond;
  const spreadRatio = spread.itemsPerSecond / loop.itemsPerSecond;
  const cpuRatio = dflt.cpuUsPerItem / loop.cpuUsPerItem;
  const spreadCpuRatio = spread.cpuUsPerItem / loop.cpuUsPerItem;
  const hotKeyWcu = (file.hotRows / file.rows) * loop.itemsPerSecond;
  const keysFit = hotKeyWcu <= DEFAULT_KEY_WCU;
  const verdict = (s: SinkSummary) =>
    keysFit
      ? `>= ${SINK_TARGET_RATIO.toFixed(1)}x and CPU/item <= loop: ${pass(s.itemsPerSecond / loop.itemsPerSecond >= SINK_TARGET_RATIO && s.cpuUsPerItem <= loop.cpuUsPerItem)}`
      : 'no verdict: keys do not fit';
  const lines = [
    `Instant sink (issue 14, target 1): ${fmtInt(file.rows)} rows, ${file.customersWithRows} keys sorted, biggest ${((100 * file.hotRows) / file.rows).toFixed(1)}%; ` +
      `concurrency ${concurrency}; ${repeats} runs each, ABC CBA; medians; the loop asks for ReturnConsumedCapacity INDEXES`,
    table(
      ['', 'items/s', 'vs loop', 'CPU µs/item', 'vs loop', 'peak RSS MB', 'target'],
      summaries.map((s) => [
        s.loader,
        fmtInt(s.itemsPerSecond),
        (s.itemsPerSecond / loop.itemsPerSecond).toFixed(2),
        s.cpuUsPerItem.toFixed(0),
        (s.cpuUsPerItem / loop.cpuUsPerItem).toFixed(2),
        s.peakRssMB.toFixed(0),
        s === loop ? '' : verdict(s),
      ]),
    ),
    `ratio ddb-spread / minimal loop items/s: default options ${ratio.toFixed(2)}, --order spread ${spreadRatio.toFixed(2)} (target >= ${SINK_TARGET_RATIO.toFixed(1)}); ` +
      `CPU per item ${cpuRatio.toFixed(2)} and ${spreadCpuRatio.toFixed(2)} (target <= 1.00)`,
    `${keysFit ? 'keys fit' : 'KEYS DO NOT FIT'}: at the loop's ${fmtInt(loop.itemsPerSecond)} items/s the biggest key needs ${fmtInt(hotKeyWcu)} WCU/s in a proportional schedule, ` +
      `${keysFit ? 'under' : 'over'} --key-wcu ${DEFAULT_KEY_WCU}; its ${fmtInt(file.hotRows)} rows take ${(file.hotRows / DEFAULT_KEY_WCU).toFixed(1)} s of writing at that rate, ` +
      `which bounds default options at ${fmtInt((DEFAULT_KEY_WCU * file.rows) / file.hotRows)} items/s` +
      (keysFit ? '' : `: target 1's condition does not hold on this file`),
  ];
  return { rows: file.rows, concurrency, summaries, ratio, spreadRatio, cpuRatio, spreadCpuRatio, hotKeyWcu, keysFit, lines };
}
