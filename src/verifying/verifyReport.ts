import { escapeControl, formatCount, formatDuration, formatPercent, formatRate } from '../shared/format.js';
import { messageOf } from './verify.js';
import type { VerifyProgressEvent } from './verify.js';
import type { Outcome, VerifyResult } from './verifyResult.js';

const LABELS: Record<Outcome, string> = {
  matched: 'matched',
  absent: 'absent as expected (deleted, or refused by the load)',
  missing: 'missing',
  different: 'different',
  deletedButPresent: 'deleted in the input but present',
  rejectedButPresent: "in the load's reject file but present",
  extra: 'extra (in the table, not in the input; found by a Scan)',
  expired: 'absent, its TTL passed since the load (--skip-expired)',
  conditionKept: "kept by the load's condition (--condition-failures): not compared",
};

/** The verify's summary for a person, pure. Keys and values only with excerpts (the differences file always has them). */
export function formatVerify(result: VerifyResult, options: { excerpts: boolean }): string {
  const lines: string[] = [];
  const verdict =
    result.differing === 0 ? 'every key checked is as the input leaves it' : `${formatCount(result.differing, 'key')} not as the input leaves them`;
  lines.push(`verify ${escapeControl(result.table)}: ${verdict}`);
  lines.push(
    `  keys checked     ${formatCount(result.checked)} of ${formatCount(result.keys)} in the input${result.sample ? ` (sample of ${formatPercent(result.sample.share)})` : ''}`,
  );
  for (const [outcome, label] of Object.entries(LABELS) as [Outcome, string][])
    if (result.outcomes[outcome] > 0 || outcome === 'matched') lines.push(`    ${label.padEnd(52)} ${formatCount(result.outcomes[outcome])}`);
  lines.push(
    `  rows read        ${formatCount(result.rows.read)}: ${formatCount(result.writes.planned)} writes planned (${formatCount(result.writes.superseded)} superseded by a later row of their key), ${formatCount(result.rows.rejected)} rejected as the load rejects them${result.rows.otherSegment > 0 ? `, ${formatCount(result.rows.otherSegment)} of other segments` : ''}`,
  );
  lines.push(`  table read       ${escapeControl(result.tableRead.why)}${result.tableRead.rescanned ? '; resumed, so the whole table was scanned again' : ''}`);
  if (result.tableRead.read === 'batch-get')
    lines.push(`                   (BatchGetItem reads only the input's keys: items no row writes are not looked for)`);
  if (result.scan)
    lines.push(
      `  scan             ${formatCount(result.scan.items, 'item')} in the table, ${formatCount(result.scan.segments, 'segment')}${result.scan.expired ? `; ${formatCount(result.scan.expired, 'item')} no row writes whose TTL has passed (not extra: DynamoDB's TTL deletes them)` : ''}`,
    );
  if (result.loadRejects) lines.push(`  load's rejects   ${formatCount(result.loadRejects.rows, 'row')} in ${escapeControl(result.loadRejects.path)}`);
  if (result.sample) lines.push(`  sample           ${sampleSentence(result)}`);
  lines.push(
    `  reads            ${readCalls(result.reads)}, ${formatRate(result.reads.consumedRcu)} read units (${result.reads.consistentRead ? 'strongly' : 'eventually'} consistent${result.reads.rcu !== undefined ? `, ${result.reads.rcuReason ?? `--rcu ${result.reads.rcu}`}` : ', unpaced'}), ${formatCount(result.reads.retries, 'retry')}, ${formatCount(result.reads.throttled, 'throttled call')}`,
  );
  if (result.checkpoint)
    lines.push(
      `  checkpoint       ${escapeControl(result.checkpoint.path)}${result.checkpoint.resumedFrom > 0 ? `: resumed after ${formatCount(result.checkpoint.resumedFrom)} planned writes settled by an earlier run (${formatCount(result.checkpoint.checkedBefore, 'key')} checked then, not read again); ${formatCount(result.checkpoint.readsTotal.keys, 'key')} read in all runs` : ''}`,
    );
  lines.push(`  time             ${formatDuration(result.elapsedMs / 1000)}, ${formatRate(result.itemsPerSecond)} keys/s`);
  for (const example of result.examples) {
    const key = options.excerpts && example.key ? ` ${escapeControl(JSON.stringify(example.key))}` : '';
    lines.push(`  ${escapeControl(example.file)}:${example.line}${key}: ${escapeControl(messageOf(example, options.excerpts))}`);
  }
  if (result.differing > result.examples.length) lines.push(`  ... and ${formatCount(result.differing - result.examples.length)} more`);
  if (result.differencesPath)
    lines.push(`  differences in ${escapeControl(result.differencesPath)} (the reject file's format: jq -r .raw gives the rows to load again)`);
  return `${lines.join('\n')}\n`;
}

/** The read calls: BatchGetItem's, and the Scan's. */
function readCalls(reads: VerifyResult['reads']): string {
  const batchGet = formatCount(reads.calls - reads.scanCalls, 'BatchGetItem call');
  return reads.scanCalls > 0 ? `${formatCount(reads.scanCalls, 'Scan call')}, ${batchGet} (keys read again to name what differs)` : batchGet;
}

/** What the sample proves, in one sentence. */
export function sampleSentence(result: Pick<VerifyResult, 'sample'>): string {
  const sample = result.sample;
  if (!sample) return 'every key was checked';
  if (sample.checked === 0) return 'no key fell in the sample: it proves nothing; raise --sample';
  if (sample.upperBound95 !== undefined)
    return `0 differences in ${formatCount(sample.checked)} sampled keys: fewer than ${precisePercent(sample.upperBound95)} of the input's keys differ, at 95% confidence`;
  return `${formatCount(sample.differing)} of ${formatCount(sample.checked)} sampled keys differ: an observed rate of ${precisePercent(sample.observedRate)}`;
}

/** A share as a percentage with two significant digits (0.0998 -> "10%", 0.00099 -> "0.099%"). */
const precisePercent = (share: number) => `${Number((share * 100).toPrecision(2))}%`;

/** The result as JSON (values of differing attributes only with excerpts; keys likewise). */
export function verifyJson(result: VerifyResult, options: { excerpts: boolean }): string {
  const examples = result.examples.map((example) => (options.excerpts ? example : { ...example, key: undefined, values: undefined }));
  return `${JSON.stringify({ ...result, complete: true, matched: result.differing === 0, examples, ...(result.sample ? { sampleStatement: sampleSentence(result) } : {}) })}\n`;
}

/** One progress line of a verify (stderr), pure. */
export function formatVerifyProgress(p: VerifyProgressEvent): string {
  const seconds = p.elapsedMs / 1000;
  if (p.phase === 'reading the input') return `verify: reading the input (first pass), ${formatDuration(seconds)}`;
  const share = p.planned > 0 ? ` (${formatPercent(p.settled / p.planned)})` : '';
  const rate = seconds > 0 ? `, ${formatRate(p.keysRead / seconds)} keys/s` : '';
  return `verify: ${p.phase}: ${formatCount(p.settled)} of ${formatCount(p.planned)} planned writes settled${share}, ${formatCount(p.checked, 'key')} checked, ${formatCount(p.differing)} differ, ${formatRate(p.consumedRcu)} read units${rate}, ${formatDuration(seconds)}`;
}
