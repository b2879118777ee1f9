import type { LoadEvent } from '../reporting/events.js';
import type { RateChange } from '../pacing/rateControl.js';
import type { LoadResult } from '../reporting/result.js';
import { escapeControl, formatBytes, formatCount, formatDuration, formatPercent, formatRate, rowExcerpt } from '../shared/format.js';
import { formatProgressLine, progressFields } from '../reporting/logLine.js';
import type { LoadFlags } from './options.js';
import type { Terminal } from './terminal.js';

/** The checkpoint's hash of the input is said on the terminal from this size up (about half a second). */
export const HASH_SHOWN_BYTES = 256 * 1024 * 1024;
/** SHA-256 speed for the time announced: about 500 MB/s on a busy 2-core machine (files/hashFile.ts). */
const HASH_BYTES_PER_SECOND = 500 * 1024 * 1024;
/** Rejected rows shown on the terminal; the rest go to the reject file only. */
const SHOWN_REJECTS = 10;

export interface EventRenderer {
  onEvent(event: LoadEvent): void;
  /** The counters so far as a result, once the load has started (for the summary at --stop-timeout). */
  snapshot(): LoadResult | undefined;
}

type Flags = Pick<LoadFlags, 'quiet' | 'logInterval' | 'excerpts' | 'verbose'>;

/**
 * Turns load events into what the terminal shows: the progress bar (when drawn), periodic progress log
 * lines otherwise, and notes (resumed, warnings, ordering, rejected rows, the rate and its changes).
 */
export function createEventRenderer(
  terminal: Terminal,
  flags: Flags,
  estimating: boolean,
  bar: { onEvent(event: LoadEvent): void } | undefined,
): EventRenderer {
  let lastLog = performance.now();
  let shownRejects = 0;
  let snapshot: (() => LoadResult) | undefined;
  const note = (text: string, fields: Record<string, unknown>) => terminal.note(text, fields);
  const onEvent = (event: LoadEvent) => {
    if (event.type === 'started') snapshot = event.snapshot;
    bar?.onEvent(event);
    if (bar && event.type === 'started') terminal.hold();
    // An outage is said even with --quiet: an unattended job must show why it stopped writing.
    if (event.type === 'endpointDown')
      note(
        `ddb-spread: the endpoint ${event.endpoint} cannot be reached (${event.reason}) since ${event.since.replace(/\.\d+Z$/, 'Z')}; waiting up to ${formatDuration(event.waitMs / 1000)} for it (--outage-timeout); no row is rejected for it\n`,
        { type: 'endpointDown', endpoint: event.endpoint, reason: event.reason, since: event.since, waitMs: event.waitMs },
      );
    if (event.type === 'endpointBack')
      note(`ddb-spread: the endpoint ${event.endpoint} answers again after ${formatDuration(event.downMs / 1000)}; sending goes on\n`, {
        type: 'endpointBack',
        endpoint: event.endpoint,
        downMs: Math.round(event.downMs),
      });
    if (flags.quiet) return;
    // Below a few hundred MB the hash takes under a second: only the JSON log records it.
    const hashShown = (bytes: number) => bytes >= HASH_SHOWN_BYTES || terminal.jsonLog;
    if (event.type === 'hashing' && hashShown(event.bytes))
      note(
        `ddb-spread: hashing the input for checkpoint ${event.checkpoint} (${formatBytes(event.bytes)}, about ${formatDuration(event.bytes / HASH_BYTES_PER_SECOND)}): a resume recognises it by its content\n`,
        { type: 'hashing', checkpoint: event.checkpoint, bytes: event.bytes },
      );
    if (event.type === 'hashed' && hashShown(event.bytes))
      note(`ddb-spread: hashed the input in ${formatDuration(event.ms / 1000)}\n`, {
        type: 'hashed',
        checkpoint: event.checkpoint,
        bytes: event.bytes,
        ms: Math.round(event.ms),
      });
    if (event.type === 'resumed')
      note(
        `ddb-spread: resuming from checkpoint ${event.checkpoint}: ${formatCount(event.batchesDone, 'batch')} (${formatCount(event.written, 'row')}) were written before; ${
          event.rowsSkipped > 0
            ? `reading on from a restart point past the first ${formatCount(event.rowsSkipped, 'row')} of the input, which are not read again`
            : 'reading the input again from its start to continue after them'
        }\n`,
        { type: 'resumed', checkpoint: event.checkpoint, batchesDone: event.batchesDone, written: event.written, rowsSkipped: event.rowsSkipped },
      );
    if (event.type === 'listing')
      note(
        event.made
          ? `ddb-spread: listed ${formatCount(event.parts, 'part')} and wrote the listing ${event.where}; every worker of this load reads these parts\n`
          : `ddb-spread: reading the ${formatCount(event.parts, 'part')} of the listing ${event.where} (listed ${event.listedAt})\n`,
        { type: 'listing', where: event.where, made: event.made, parts: event.parts, listedAt: event.listedAt },
      );
    if (event.type === 'warning') note(`ddb-spread: warning: ${event.message}\n`, { type: 'warning', message: event.message });
    if (event.type === 'prewarm') note(`ddb-spread: ${event.message}\n`, { type: 'prewarm', stage: event.stage, message: event.message });
    if (event.type === 'progress' && !bar && !estimating && performance.now() - lastLog >= flags.logInterval * 1000) {
      lastLog = performance.now();
      terminal.say(
        formatProgressLine(
          progressFields(event.counters, event.totalBytes, event.elapsedMs, event.rate),
          terminal.jsonLog ? 'json' : 'text',
          new Date().toISOString(),
        ),
      );
    }
    if (event.type === 'ordering' && !bar && !estimating)
      note(
        `ddb-spread: read ${formatCount(event.rows, 'row')}; writing them in ${event.mode} order${event.spilled ? ' (ordered through temporary files)' : ''}\n`,
        { type: 'ordering', rows: event.rows, mode: event.mode, spilled: event.spilled },
      );
    if (event.type === 'rowRejected' && shownRejects < SHOWN_REJECTS) {
      shownRejects++;
      showRejected(terminal, event.row, flags.excerpts);
      if (shownRejects === SHOWN_REJECTS)
        note('ddb-spread: further rejected rows go to the reject file only\n', {
          type: 'message',
          message: 'further rejected rows go to the reject file only',
        });
    }
    if (event.type === 'rateChosen' && !estimating)
      note(`ddb-spread: rate: ${event.reason}${event.keyWcu === undefined ? '' : `; no partition key above ${formatRate(event.keyWcu)} WCU/s`}\n`, {
        type: 'rate',
        reason: event.reason,
        targetWcu: event.targetWcu,
        keyWcu: event.keyWcu,
      });
    if (event.type === 'rateChanged' && !bar && (event.change.scope === 'table' || flags.verbose))
      note(`ddb-spread: ${describeRateChange(event.change)}\n`, {
        type: 'rateChanged',
        scope: event.change.scope,
        toWcu: Math.round(event.change.toWcu),
        ...('reason' in event.change ? { reason: event.change.reason } : {}),
      });
    if (event.type === 'retrying' && flags.verbose)
      terminal.say(`ddb-spread: retrying ${formatCount(event.items, 'item')} (${event.reason}), attempt ${event.attempt + 1} in ${event.delayMs} ms\n`);
  };
  return { onEvent, snapshot: () => snapshot?.() };
}

function showRejected(terminal: Terminal, row: Extract<LoadEvent, { type: 'rowRejected' }>['row'], excerpts: boolean): void {
  const { origin, code, message, field } = row;
  // Messages quote cell values, so without excerpts only the location and the reason code are shown.
  if (terminal.jsonLog)
    terminal.note('', {
      type: 'rejected',
      file: origin.file,
      line: origin.line,
      code,
      ...(field === undefined ? {} : { field }),
      ...(excerpts ? { message } : {}),
    });
  else if (excerpts) terminal.say(`${origin.file}:${origin.line}: ${code}: ${message}\n    ${rowExcerpt(origin.raw)}\n`);
  else terminal.say(`${origin.file}:${origin.line}: ${code}${field === undefined ? '' : ` (field "${field}")`}\n`);
}

function describeRateChange(change: RateChange): string {
  const to = formatCount(change.toWcu);
  if (change.scope === 'key')
    return `throttled on one partition key${change.reason ? ` (DynamoDB: ${escapeControl(change.reason)})` : ''}; that key slowed to ${to} WCU/s`;
  if (change.kind === 'restored')
    return `errors independent of the rate: rate kept at ${to} WCU/s (throttled ${formatPercent(change.lowShare)} at the lower rate, ${formatPercent(change.highShare)} at this one; retried)`;
  const from = change.fromWcu === undefined ? '' : `from ${formatCount(change.fromWcu)} `;
  if (change.reason === 'probe') return `throttled; rate cut ${from}to ${to} WCU/s to test whether the throttles follow the rate`;
  return `throttles rose with the rate: capacity; rate cut ${from}to ${to} WCU/s (it grows back after 2 s without throttles)`;
}
