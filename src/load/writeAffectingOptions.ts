import { delimiterOf } from '../reading/inputFormat.js';
import type { NormalizedLoadOptions } from './options.js';

/** The auto order's way of reading, as checkpoints record it (writeAffectingOptions). */
export const AUTO_READING = 4;

/**
 * The options that change what is written or how rows fall into batches; rate, concurrency and logging do not.
 * A checkpoint records them, and resumes only under the same ones (checkpointing/checkpointState.ts).
 */
export function writeAffectingOptions(opts: NormalizedLoadOptions): Record<string, unknown> {
  return {
    table: opts.table,
    inputFormat: opts.inputFormat,
    // Only when given: a checkpoint of a load without deletes looks as before.
    ...(opts.deletes ? { deletes: opts.deletes } : {}),
    // The first input's, as before parts had each their own: a checkpoint written then still resumes.
    delimiter: delimiterOf(opts.inputs[0] ?? '', opts.delimiter),
    columns: opts.columns ?? null,
    types: sortKeys(opts.types),
    infer: opts.infer,
    empty: opts.empty,
    // Parquet and Ion timestamps as text or numbers; null for the default, as checkpoints before it read.
    timestamps: opts.timestamps === 'iso' ? null : opts.timestamps,
    order: opts.order,
    // The window's rows and --memory (which caps it too) decide the batches of a window order, and where
    // the auto order's window goes over to round-robin.
    window: opts.order === 'window' || opts.order === 'auto' ? opts.windowRows : null,
    windowMemoryBytes: opts.order === 'window' || opts.order === 'auto' ? opts.memoryBytes : null,
    // How the auto order reads what it is given decides the batches, so a change to it is a change of options.
    // 2: an export's data files side by side, a set under two stripes' bytes whole, an unsorted head streamed.
    // 3: restart points inside an export's data files read side by side (the order and the batcher empty
    // there, so the batches after the first such point differ from 2's).
    // 4: an export of one data file is read as a group of one, with restart points inside it as well; and
    // large S3 objects cut into ranges (a set's stripes, one object's too), in `stripes` as in `auto`.
    // A checkpoint of another reading would skip its done batches' numbers over other rows.
    ...(opts.order === 'auto' || opts.order === 'stripes' ? { autoReading: AUTO_READING } : {}),
    shard: opts.shard
      ? {
          rules: opts.shard.rules,
          separator: opts.shard.separator,
          keys: opts.shard.keys ? [...opts.shard.keys].sort() : null,
          keepOriginalKey: opts.shard.keepOriginalKey ?? null,
          seed: opts.shard.seed ?? null,
          // Only where they change the suffixes, so an older checkpoint of hash/time rules (before suffix bases and
          // seeded random suffixes) still resumes; one of random:N taken by the path-and-line draw is refused (its suffixes differ).
          ...(opts.shard.suffixBase !== 0 ? { suffixBase: opts.shard.suffixBase } : {}),
          ...(opts.shard.rules.some((r) => r.kind === 'random') ? { randomSuffix: 'seed+primary-key' } : {}),
        }
      : null,
    segment: opts.segment ? `${opts.segment.index}/${opts.segment.count}` : null,
    // Only when given: a checkpoint of a worker that read every part looks as before.
    ...(opts.partsDisjoint ? { partsDisjoint: true } : {}),
    // The load time is pinned with the attribute: a row expiring between a crash and the resume must not
    // change the batches the checkpoint recorded (openCheckpoint takes the saved time on resume).
    ...(opts.skipExpired ? { skipExpired: { attribute: opts.skipExpired.attribute, at: opts.skipExpired.at ?? null } } : {}),
    // A condition changes the batches (nothing superseded) and what each call writes: a resume under another
    // condition, or none, would name other writes by the done batches' numbers. Only when given.
    ...(opts.condition ? { condition: pinnedCondition(opts.condition) } : {}),
    // --condition-failures does not change what is written, but a resume must go on writing the file the earlier
    // run began: a resume without it would leave the done batches' rows out of it, one that adds it would list
    // only the rows after the resume. Whether it is written is pinned; its path is not (the file may move: its
    // recorded length and SHA-256 decide whether it is the one, CheckpointStore.trackConditionFailures).
    ...(opts.conditionFailuresPath !== undefined ? { conditionFailures: true } : {}),
    // The transform module's content: another transform could make other items of the same rows, so the done
    // batches' numbers would name other writes.
    ...(opts.transform !== undefined ? { transform: opts.transformLoaded?.pin ?? 'not loaded' } : {}),
  };
}

function pinnedCondition(condition: NonNullable<NormalizedLoadOptions['condition']>): Record<string, unknown> {
  if (condition.kind === 'ifNewer') return { ifNewer: condition.attribute };
  if (condition.kind === 'ifNotExists') return { ifNotExists: true };
  if (condition.kind === 'item') return { itemConditions: true };
  return { expression: condition.expression, names: sortKeys(condition.names), values: sortKeys(condition.values) };
}

function sortKeys(record: Record<string, unknown>): Record<string, unknown> {
  return Object.fromEntries(Object.entries(record).sort(([a], [b]) => (a < b ? -1 : 1)));
}
