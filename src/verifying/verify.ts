import { DescribeTableCommand, type AttributeValue, type TableDescription } from '@aws-sdk/client-dynamodb';
import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { createHash } from 'node:crypto';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { fatalAwsError } from '../aws/awsErrors.js';
import { createClient } from '../aws/client.js';
import { dryRunLoad } from '../load/load.js';
import { pinnedLoadTime } from '../load/openCheckpoint.js';
import type { TestSeams } from '../load/loadDependencies.js';
import { normalizeOptions, type LoadOptions, type NormalizedLoadOptions } from '../load/options.js';
import { defaultOutputPath } from '../load/outputPaths.js';
import { writeAffectingOptions } from '../load/writeAffectingOptions.js';
import type { LoadEvent, LoadResult } from '../reporting/events.js';
import { bug, LoaderError } from '../shared/errors.js';
import type { TableInfo } from '../shared/tableInfo.js';
import type { PlannedWrite, RowOrigin } from '../shared/types.js';
import { expiryOf, TTL_MAX_AGE_SECONDS } from '../typing/expiry.js';
import { keyForDisplay, keyOf } from '../typing/key.js';
import { keyFromWire, toWireItem } from '../writing/wireItem.js';
import { differingAttributes } from './attributeEquality.js';
import { DifferencesFile, type DifferenceRecord } from './differencesFile.js';
import { LastWrites } from './lastWrites.js';
import { readLoadRejects, rowId } from './loadRejects.js';
import { ConditionKeptRows } from './conditionKept.js';
import { chooseReadRate, parseRcuSpec, type RcuSpec } from '../pacing/readRate.js';
import { itemFingerprint } from './itemFingerprint.js';
import { MAX_KEYS_PER_CALL, readUnitsOf } from './readUnits.js';
import { inSample, sampleStatement } from './sampling.js';
import { DEFAULT_KEY_RCU, TableReader, type KeyToRead } from './tableReader.js';
import { SharedReadRate, verifyWorkerDocPath } from './sharedReadRate.js';
import type { S3Access } from '../reading/s3Part.js';
import type { Segment } from '../load/segment.js';
import { localWorkerStore, rateBeatMs, s3WorkerStore, type WorkerDocStore } from '../load/workerBoard.js';
import { planTableRead, type InputReadTally } from './tableReadPlan.js';
import { savedExpiredAt, VerifyCheckpoint, verifyCheckpointPath, type VerifyProgress } from './verifyCheckpoint.js';
import { DIFFERENCES, OUTCOMES, type Difference, type Outcome, type VerifyResult } from './verifyResult.js';

export interface VerifyOptions extends LoadOptions {
  /**
   * Read units per second for the verify's reads (BatchGetItem, Scan), or 'auto' / 'auto:P%': P% (80) of the
   * table's provisioned read capacity, or on demand of its warm read throughput. @default unpaced
   */
  rcu?: number | string;
  /** Read units per second for any one partition key (a partition serves at most 3,000). @default 3000 */
  keyRcu?: number;
  /** Strongly consistent reads (1 read unit per 4 KB; eventually consistent reads cost half). @default true */
  consistentRead?: boolean;
  /** Check only this share of the keys, chosen by a hash of the key (the same keys on every run). @default 1 */
  sample?: number;
  /** Where the keys that differ go, in the reject file's format. @default <input>.differences.jsonl next to the input */
  differencesPath?: string;
  /** Values of differing attributes in messages and the differences file. @default true */
  excerpts?: boolean;
  /**
   * Read the table by a parallel Scan in this many segments (TotalSegments) instead of BatchGetItem of the
   * input's keys: each scanned item is compared with its key's expected item, and the items no row writes
   * are found (extra). 'auto': whichever of the two reads costs less (as `estimate` prices them).
   * @default BatchGetItem of the keys, no scan
   */
  scanSegments?: number | 'auto';
}

export interface VerifyDependencies {
  client?: DynamoDBDocumentClient;
  signal?: AbortSignal;
  /** The dry run's events (warnings, the table described, progress of the read). */
  onEvent?: (event: LoadEvent) => void;
  testSeams?: TestSeams;
  /** How far the verify is, after each chunk of keys settled and at each phase (the CLI's progress line). */
  onProgress?: (progress: VerifyProgressEvent) => void;
}

/** How far a verify is: its phase, the planned writes settled of all, the keys checked and differing so far, the reads. */
export interface VerifyProgressEvent {
  phase: 'reading the input' | 'checking keys' | 'scanning the table' | 'done';
  /** Planned writes of the input (known after the first pass; 0 before). */
  planned: number;
  /** Planned writes settled (checked, superseded or outside the sample), a resumed run's earlier ones included. */
  settled: number;
  checked: number;
  differing: number;
  /** This run's read units and keys read. */
  consumedRcu: number;
  keysRead: number;
  elapsedMs: number;
}

const MAX_EXAMPLES = 20;

/** One planned write the table is checked against: the key's last write that landed, or the last of a key the load refused throughout. */
interface Check {
  write: PlannedWrite;
  refused: boolean;
  /** The key's last write tried failed its condition in the load (--condition-failures): the table kept its item, not compared. */
  kept: boolean;
  /** The write's number in input order (the dry run's planned writes). */
  seq: number;
  /** The writes since the previous key checked: superseded, or outside the sample (counted as this one is settled). */
  skippedBefore: { superseded: number; notSampled: number };
}

/**
 * Checks a table against what loading the input would leave in it, reading the table only (BatchGetItem).
 *
 * What the input leaves is found by load()'s own dry run (the same reading, typing, sharding, deletes and
 * segment), read twice: the first pass notes each key's last write that landed (lastWrites.ts; the rows of
 * the load's reject file did not land), the second checks each key once, against that write, in batches of
 * 100 keys as the dry run hands them over; the reads hold the dry run back (its sink waits on them), so
 * memory holds the map of keys and a few batches. The dry run reads in input order: every write order of
 * load keeps each key's rows in input order, so the last row of a key is the one the table shows.
 */
export async function verify(options: VerifyOptions, deps: VerifyDependencies = {}): Promise<VerifyResult> {
  const startedAt = performance.now();
  const verifyOpts = checkVerifyOptions(options);
  const { rcu: _r, keyRcu: _k, consistentRead: _c, sample: _s, differencesPath: _d, excerpts: _e, scanSegments: _n, ...loadOptions } = options;
  const opts = normalizeOptions(loadOptions);
  if (opts.inputs.includes('-'))
    throw new LoaderError('INVALID_OPTION', 'verify reads its input twice and cannot read stdin ("-"): give the files the load read');
  const shardSeed = await seedOf(opts, options.shardSeed);
  const loadRejects = await readLoadRejects(opts.rejectsPath);
  // A conditional load's rows whose condition was false: the table kept what it had for them.
  const conditionKept = opts.conditionFailuresPath === undefined ? undefined : await readLoadRejects(opts.conditionFailuresPath, '--condition-failures', true);
  const differencesPath =
    verifyOpts.differencesPath ?? defaultOutputPath(opts.input, 'rejects', { segment: opts.segment }).replace(/rejects\.jsonl$/, 'differences.jsonl');
  checkDifferencesPath(differencesPath, opts);
  // --checkpoint: the load's is read (its pinned --skip-expired time), the verify's own kept beside it.
  const checkpointPath = opts.checkpointPath === undefined ? undefined : verifyCheckpointPath(opts.checkpointPath);
  // --skip-expired judges every row at one time in both passes (each dry run would take its own "now", and a
  // row expiring between them would put the passes out of step): the one given; a resumed verify's, as its
  // checkpoint pinned it; the load's, as its checkpoint pinned it, so the rows it left out are the ones
  // expected absent; else this run's start.
  const expiredAt =
    loadOptions.skipExpired === undefined
      ? undefined
      : (loadOptions.skipExpiredAt ??
        (checkpointPath === undefined ? undefined : await savedExpiredAt(checkpointPath)) ??
        (loadOptions.checkpointPath === undefined ? undefined : await pinnedLoadTime(loadOptions.checkpointPath, loadOptions.skipExpired)) ??
        Math.floor(Date.now() / 1000));
  // The dry run as the load ran, in input order, with its own reject file kept out of the user's way.
  const dryOptions = (scratch: string, pass: number): LoadOptions => {
    return {
      ...loadOptions,
      ...(shardSeed !== undefined ? { shardSeed } : {}),
      ...(expiredAt !== undefined ? { skipExpiredAt: expiredAt } : {}),
      order: 'input',
      pacing: false,
      wcu: undefined,
      keyWcu: undefined,
      totalWcu: undefined,
      checkpointPath: undefined,
      rejectsPath: join(scratch, `pass-${pass}.rejects.jsonl`),
    };
  };
  const checkpoint =
    checkpointPath === undefined
      ? undefined
      : await VerifyCheckpoint.open(checkpointPath, opts.inputs, {
          ...writeAffectingOptions(normalizeOptions(dryOptions('', 0))),
          sample: verifyOpts.sample,
          excerpts: verifyOpts.excerpts,
          differences: resolve(differencesPath),
          loadRejects: loadRejects.found ? { rows: loadRejects.rows.size, sha256: sha256Of([...loadRejects.rows].sort().join('\n')) } : null,
          ...(conditionKept?.found ? { conditionKept: { rows: conditionKept.rows.size, sha256: sha256Of([...conditionKept.rows].sort().join('\n')) } } : {}),
        });
  const resumed = checkpoint?.resumed;
  const differences = new DifferencesFile(differencesPath);
  const ownsClient = deps.client === undefined;
  let client: DynamoDBDocumentClient | undefined;
  let scratch: string | undefined;
  // The progress saved when the verify stops before it finishes: the keys' (a stop during --scan scans again).
  let progressAtStop: (() => VerifyProgress) | undefined;
  // The shared read rate's state beside --listing, and the S3 client of one on S3.
  let sharing: SharedReadRate | undefined;
  let s3Access: Promise<S3Access> | undefined;
  let stopped = false;
  try {
    // A clean run must not leave an earlier run's differences behind to be read as this one's; a resumed one
    // goes on from the bytes its checkpoint recorded (a killed run may have written more).
    if (resumed) await differences.resume(resumed.differences.bytes, resumed.differences.count, checkpoint!.path, resumed.differences.sha256);
    else await rm(differencesPath, { force: true });
    client = deps.client ?? createClient({ ...opts, maxSockets: Math.max(50, opts.concurrency * 2) });
    scratch = await mkdtemp(join(opts.tempDir ?? tmpdir(), 'ddb-spread-verify-'));
    // A line verify rejects for its own condition (no --item-conditions here) that the load did not reject: the
    // load applied it, and its key would go uncompared while verify called the table matched.
    let unreadCondition: RowOrigin | undefined;
    const events = (event: LoadEvent) => {
      if (event.type === 'warning') deps.onEvent?.(event);
      if (event.type === 'rowRejected' && event.row.code === 'ITEM_CONDITION' && !loadRejects.rows.has(rowId(event.row.origin.file, event.row.origin.line)))
        unreadCondition ??= event.row.origin;
    };
    deps.onProgress?.({
      phase: 'reading the input',
      planned: 0,
      settled: 0,
      checked: 0,
      differing: 0,
      consumedRcu: 0,
      keysRead: 0,
      elapsedMs: performance.now() - startedAt,
    });
    const common = { client, ...(deps.signal ? { signal: deps.signal } : {}), onEvent: events, ...(deps.testSeams ? { testSeams: deps.testSeams } : {}) };

    // Pass one: each key's last write that landed.
    const last = new LastWrites();
    let table: TableInfo | undefined;
    let seq = 0;
    // What --scan auto prices the two reads by (as the estimate's tally counts them).
    const tally: InputReadTally & { puts: number } = { writes: 0, keys: 0, strongReadUnits: 0, putBytes: 0, puts: 0 };
    const keptRows = conditionKept?.found ? new ConditionKeptRows(conditionKept, opts.conditionFailuresPath!) : undefined;
    await finished(
      dryRunLoad(dryOptions(scratch, 1), {
        ...common,
        dryRun: {
          onTable: (t) => void (table = t),
          onPlanned: (write) => {
            const id = rowId(write.origin.file, write.origin.line);
            if (keptRows && !table) throw bug('a verify dry run planned a write before describing the table');
            const kept = keptRows?.kept(write, id, table!.keySchema) ?? false;
            last.note(write.keyId, seq++, loadRejects.rows.has(id) ? 'refused' : kept ? 'kept' : 'landed');
            tally.strongReadUnits += readUnitsOf(write.op === 'delete' ? 0 : write.size, true);
            if (write.op !== 'delete') {
              tally.putBytes += write.size;
              tally.puts++;
            }
            return write;
          },
          record: () => undefined,
        },
      }),
    );
    last.seal();
    if (unreadCondition)
      throw new LoaderError(
        'INVALID_OPTION',
        `line ${unreadCondition.line} of ${unreadCondition.file} carries its own condition, which the load applied (its reject file ${opts.rejectsPath} does not list the row): pass --item-conditions to verify, as to the load, so that its key is compared`,
        { file: unreadCondition.file, line: unreadCondition.line, field: 'ConditionExpression' },
      );
    // Every line of the --condition-failures file must be a write of this input (conditionKept.ts).
    await keptRows?.check(expiredAt !== undefined);
    const planned = seq;
    tally.writes = planned;
    tally.keys = last.keys;
    if (!table) throw bug('the dry run finished without describing the table');
    const schema = table.keySchema;
    checkpoint?.checkTable(opts.table, table.identity);
    if (resumed && resumed.planned >= 0 && resumed.planned !== planned)
      throw new LoaderError(
        'CHECKPOINT_MISMATCH',
        `the input plans ${planned} writes, but checkpoint ${checkpoint!.path} was taken over ${resumed.planned}: the input or what makes its items changed; delete ${checkpoint!.path} to verify from the start`,
        { file: checkpoint!.path },
      );

    // Pass two: each key checked once, against its last write. --skip-expired names the TTL attribute: an
    // item whose TTL passes between the load and this check may be gone, judged at this run's start.
    const ttl: Ttl | undefined = loadOptions.skipExpired === undefined ? undefined : { attribute: loadOptions.skipExpired, now: Math.floor(Date.now() / 1000) };
    const consistentRead = verifyOpts.consistentRead;
    // --segment with --listing: the workers share one rate, the whole table's (sharedReadRate.ts); else each paces its own.
    const shared = verifyOpts.rcu !== undefined && opts.segment !== undefined && opts.segment.count > 1 && opts.listing !== undefined;
    const whole = verifyOpts.rcu === undefined ? undefined : await readRateOf(verifyOpts.rcu, client, opts, table, deps.signal, shared ? 1 : undefined);
    const rate =
      whole && shared
        ? {
            rcu: whole.rcu / opts.segment!.count,
            reason: `${whole.reason}, shared by the ${opts.segment!.count} workers of --listing ${opts.listing!} (each its part of those running)`,
          }
        : whole;
    const plan = planTableRead(verifyOpts.scanSegments, {
      tally,
      tableBytes: table.sizeBytes,
      consistent: consistentRead,
      sample: verifyOpts.sample,
      rcu: rate?.rcu,
      billing: table.billingMode,
      segmented: opts.segment !== undefined,
    });
    const reader = new TableReader({
      client,
      table: opts.table,
      keySchema: schema,
      consistentRead,
      rcu: rate?.rcu,
      keyRcu: verifyOpts.keyRcu,
      maxAttempts: opts.maxAttempts,
      aws: { table: opts.table, region: opts.region, endpoint: opts.endpoint },
      signal: deps.signal,
    });
    if (shared && whole) {
      sharing = new SharedReadRate({
        total: whole.rcu,
        table: opts.table,
        segment: opts.segment!,
        ...verifyWorkerStores(opts.listing!, opts.segment!, () => (s3Access ??= s3AccessOf(opts))),
        beatMs: deps.testSeams?.heartbeatMs ?? rateBeatMs(opts.segment!.count),
        setRate: (rcu) => reader.setRate(rcu),
        consumed: () => reader.counters.consumedRcu,
        warn: (message) => deps.onEvent?.({ type: 'warning', message }),
      });
      await sharing.start();
    }
    // The counts of the planned writes before `done` (the first, in input order, whose fate is settled): a
    // resumed verify's start from its checkpoint's, and it reads none of those keys again.
    // (A checkpoint of a release before an outcome was added holds no count of it.)
    const outcomes = { ...(Object.fromEntries([...OUTCOMES, 'extra'].map((o) => [o, 0])) as Record<Outcome, number>), ...resumed?.outcomes };
    const examples: Difference[] = resumed ? [...resumed.examples] : [];
    const counts = resumed ? { ...resumed.writes } : { superseded: 0, notSampled: 0, checked: 0 };
    const resumedFrom = resumed?.done ?? 0;
    let done = resumedFrom;
    const readsBefore = resumed?.reads ?? { calls: 0, keys: 0, consumedRcu: 0 };
    const progress = (): VerifyProgress => ({
      planned,
      done,
      writes: { ...counts },
      outcomes: { ...outcomes },
      differences: { bytes: differences.bytes, count: differences.count, sha256: differences.sha256 },
      examples,
      reads: {
        calls: readsBefore.calls + reader.counters.calls,
        keys: readsBefore.keys + reader.counters.keys,
        consumedRcu: readsBefore.consumedRcu + reader.counters.consumedRcu,
      },
    });
    progressAtStop = progress;
    const report = (phase: VerifyProgressEvent['phase']) =>
      deps.onProgress?.({
        phase,
        planned,
        settled: done,
        checked: counts.checked,
        differing: DIFFERENCES.reduce((sum, o) => sum + outcomes[o], 0),
        consumedRcu: reader.counters.consumedRcu,
        keysRead: reader.counters.keys,
        elapsedMs: performance.now() - startedAt,
      });

    // The Scan read: the whole table, before the keys are checked. Each item of a key the input writes
    // (and the sample takes) is kept as its fingerprint, to be compared as pass two reaches the key; an
    // item no row writes is extra, counted once the keys are (a stop before then counts none of them). A
    // resumed verify scans the whole table again: what its earlier run scanned is not kept.
    const scanned = new Map<string, string>();
    const extras: Array<Record<string, AttributeValue>> = [];
    let scan: VerifyResult['scan'];
    if (plan.read === 'scan') {
      report('scanning the table');
      let items = 0;
      let expired = 0;
      const keyNames = [schema.partitionKey.name, ...(schema.sortKey ? [schema.sortKey.name] : [])];
      const page = rate === undefined ? undefined : scanPage(rate.rcu, tally.puts > 0 ? tally.putBytes / tally.puts : 0, consistentRead);
      await Promise.all(
        Array.from({ length: plan.segments }, (_, segment) =>
          reader.scanSegment(
            segment,
            plan.segments,
            (keyId, item) => {
              if (++items % 1000 === 0) report('scanning the table');
              if (last.has(keyId)) {
                if (verifyOpts.sample >= 1 || inSample(keyId, verifyOpts.sample)) scanned.set(keyId, itemFingerprint(item));
              } else if (ttl && wireExpired(item[ttl.attribute], ttl.now)) expired++;
              // An item whose TTL has passed is DynamoDB's to delete (an expired row the load skipped, say), not extra.
              else extras.push(Object.fromEntries(keyNames.map((name) => [name, item[name]!])));
            },
            'all',
            page,
          ),
        ),
      );
      scan = { segments: plan.segments, items, ...(ttl ? { expired } : {}) };
    }
    report('checking keys');
    let failure: unknown;
    const save = (status: 'running' | 'stopped' | 'complete', state: VerifyProgress) =>
      checkpoint
        ?.save(status, state, () => differences.sync())
        .catch((error: unknown) => {
          failure ??= error;
        });

    // The keys are read in chunks of 100, several at once; their results are settled in input order (the
    // counts, the examples, the differences file), so that what a checkpoint records is a prefix of the
    // planned writes, and the differences file lists the keys in the same order on every run.
    const pending: Check[] = [];
    let skipped = { superseded: 0, notSampled: 0 };
    let chunksTaken = 0;
    let chunksSettled = 0;
    const judgedChunks = new Map<number, Array<{ check: Check; shown: Difference | undefined; record: DifferenceRecord | undefined; outcome: Outcome }>>();
    const settle = () => {
      const records: DifferenceRecord[] = [];
      for (let chunk = judgedChunks.get(chunksSettled); chunk !== undefined; chunk = judgedChunks.get(chunksSettled)) {
        judgedChunks.delete(chunksSettled++);
        for (const { check, shown, record, outcome } of chunk) {
          counts.superseded += check.skippedBefore.superseded;
          counts.notSampled += check.skippedBefore.notSampled;
          counts.checked++;
          outcomes[outcome]++;
          if (shown && examples.length < MAX_EXAMPLES) examples.push(shown);
          if (record) records.push(record);
          done = check.seq + 1;
        }
      }
      differences.write(records).catch((error: unknown) => {
        failure ??= error;
      });
      if (checkpoint?.due) void save('running', progress());
      report('checking keys');
    };
    const checkChunk = async (index: number, chunk: Check[]) => {
      const keys: KeyToRead[] = chunk.map(({ write }) => ({
        keyId: write.keyId,
        key: toWireItem(keyOf(write.item, schema)),
        units: readUnitsOf(write.op === 'delete' ? 0 : write.size, consistentRead),
      }));
      // A key the load's condition kept is not compared: not read either.
      const stored = plan.read === 'scan' ? await scannedItems(chunk, keys) : await reader.read(keys.filter((_, i) => !chunk[i]!.kept));
      judgedChunks.set(
        index,
        chunk.map((check) => {
          const difference = judge(check, stored.get(check.write.keyId), verifyOpts.excerpts, ttl);
          if (!DIFFERENCES.includes(difference.outcome)) return { check, shown: undefined, record: undefined, outcome: difference.outcome };
          const key = keyForDisplay(check.write.item, schema);
          const shown: Difference = { ...difference, file: check.write.origin.file, line: check.write.origin.line, key: verifyOpts.excerpts ? key : undefined };
          return { check, shown, record: recordOf(shown, key, check.write.origin.raw, verifyOpts.excerpts), outcome: difference.outcome };
        }),
      );
      settle();
    };
    // The Scan read's items of a chunk: a key the Scan did not see has none; one whose fingerprint is the
    // expected item's matched (the expected item stands in for it); any other is read again by key
    // (BatchGetItem), so that what differs is named from the item itself, as the table holds it now.
    const scannedItems = async (chunk: Check[], keys: KeyToRead[]): Promise<Map<string, Record<string, AttributeValue>>> => {
      // Most chunks send no call (the Scan read them), so the stop is looked for here.
      if (deps.signal?.aborted) throw new LoaderError('ABORTED', 'the verify was stopped');
      const stored = new Map<string, Record<string, AttributeValue>>();
      const again: KeyToRead[] = [];
      chunk.forEach((check, i) => {
        const keyId = check.write.keyId;
        const fingerprint = scanned.get(keyId);
        scanned.delete(keyId);
        if (fingerprint === undefined || check.kept) return;
        if (check.refused || check.write.op === 'delete') again.push(keys[i]!);
        else {
          const expected = toWireItem(check.write.item);
          if (itemFingerprint(expected) === fingerprint) stored.set(keyId, expected);
          else again.push(keys[i]!);
        }
      });
      if (again.length > 0) for (const [keyId, item] of await reader.read(again)) stored.set(keyId, item);
      return stored;
    };
    const take = () => {
      const index = chunksTaken++;
      return checkChunk(index, pending.splice(0, MAX_KEYS_PER_CALL));
    };
    // The chunks taken while the dry run goes on, each by the batch slot that took it; a failure stops the dry run.
    const takeFull = async () => {
      while (pending.length >= MAX_KEYS_PER_CALL && failure === undefined) {
        try {
          await take();
        } catch (error) {
          failure ??= error;
        }
      }
      if (failure !== undefined) throw failure;
    };
    seq = 0;
    const second = await finished(
      dryRunLoad(dryOptions(scratch, 2), {
        ...common,
        dryRun: {
          tableInfo: table,
          onPlanned: (write) => {
            const at = seq++;
            // Settled by an earlier run of this checkpoint: neither read nor counted again.
            if (at < resumedFrom) return write;
            const verdict = last.verdict(write.keyId, at);
            if (verdict === 'superseded') skipped.superseded++;
            else if (verifyOpts.sample < 1 && !inSample(write.keyId, verifyOpts.sample)) skipped.notSampled++;
            else {
              pending.push({ write, refused: verdict === 'refused', kept: verdict === 'kept', seq: at, skippedBefore: skipped });
              skipped = { superseded: 0, notSampled: 0 };
            }
            return write;
          },
          record: takeFull,
        },
      }),
    ).catch((error: unknown) => {
      throw failure ?? error;
    });
    if (seq !== planned)
      throw new LoaderError(
        'INPUT_CHANGED',
        `the input changed while it was verified: its first reading planned ${planned} writes, its second ${seq}; run the verify again`,
      );
    // What is left, a few calls at a time.
    const lanes = Math.max(1, opts.concurrency);
    while (pending.length > 0) {
      const batch: Array<Promise<void>> = [];
      while (pending.length > 0 && batch.length < lanes) batch.push(take());
      await Promise.all(batch);
    }
    if (failure !== undefined) throw failure;
    // The writes after the last key checked: superseded or outside the sample.
    counts.superseded += skipped.superseded;
    counts.notSampled += skipped.notSampled;
    done = planned;
    const keysChecked = progress();
    progressAtStop = () => keysChecked;
    await save('running', keysChecked);

    // The Scan read's extra items, once every key is settled (a resumed run scanned again and found them anew).
    if (plan.read === 'scan') {
      const records: DifferenceRecord[] = [];
      for (const key of extras) {
        outcomes.extra++;
        const shown = keyForDisplay(keyFromWire(key, schema), schema);
        const difference: Difference = { outcome: 'extra', file: `table:${opts.table}`, line: 0, key: verifyOpts.excerpts ? shown : undefined };
        if (examples.length < MAX_EXAMPLES) examples.push(difference);
        records.push({
          file: difference.file,
          line: 0,
          code: 'EXTRA',
          message: messageOf(difference, verifyOpts.excerpts),
          ...(shown ? { key: shown } : {}),
          raw: JSON.stringify(plain({ M: key })),
        });
      }
      await differences.write(records);
    }
    await differences.close();

    const checked = OUTCOMES.reduce((sum, o) => sum + outcomes[o], 0);
    if (checked !== counts.checked || counts.checked + counts.superseded + counts.notSampled !== planned)
      throw bug(
        `verify counted ${planned} planned writes but ${counts.checked} checked (${checked} judged), ${counts.superseded} superseded, ${counts.notSampled} outside the sample`,
      );
    progressAtStop = undefined;
    await save('complete', progress());
    report('done');
    if (failure !== undefined) throw failure;
    const differing = DIFFERENCES.reduce((sum, o) => sum + outcomes[o], 0);
    const differingKeys = differing - outcomes.extra;
    const elapsedMs = performance.now() - startedAt;
    const checkedNow = checked - (resumed?.writes.checked ?? 0);
    return {
      table: opts.table,
      input: opts.input,
      outcomes,
      checked,
      differing,
      writes: { planned, checked, superseded: counts.superseded, notSampled: counts.notSampled },
      rows: rowsOf(second),
      loadRejects: loadRejects.found ? { path: opts.rejectsPath, rows: loadRejects.rows.size } : undefined,
      keys: last.keys,
      scan,
      tableRead: { ...plan, ...(plan.read === 'scan' && resumed ? { rescanned: true } : {}) },
      sample: verifyOpts.sample < 1 ? { share: verifyOpts.sample, ...sampleStatement(checked, differingKeys) } : undefined,
      reads: { ...reader.counters, consistentRead, rcu: rate?.rcu, keyRcu: verifyOpts.keyRcu ?? DEFAULT_KEY_RCU, ...(rate ? { rcuReason: rate.reason } : {}) },
      differencesPath: differences.count > 0 ? differencesPath : undefined,
      examples,
      elapsedMs,
      itemsPerSecond: elapsedMs > 0 ? (checkedNow * 1000) / elapsedMs : 0,
      ...(checkpoint ? { checkpoint: { path: checkpoint.path, resumedFrom, checkedBefore: resumed?.writes.checked ?? 0, readsTotal: progress().reads } } : {}),
    };
  } catch (error) {
    stopped = true;
    // Stopped (a signal, a failure): the progress settled so far, so that running the same command goes on from it.
    if (checkpoint && progressAtStop) await checkpoint.save('stopped', progressAtStop(), () => differences.sync()).catch(() => undefined);
    throw error;
  } finally {
    // Its part freed for the other workers (a failure to say so is told by the board and costs nothing here).
    await sharing?.end(stopped ? 'stopped' : 'finished');
    await s3Access?.then((s3) => s3.destroy()).catch(() => undefined);
    await differences.close().catch(() => undefined);
    if (scratch !== undefined) await rm(scratch, { recursive: true, force: true });
    if (ownsClient) client?.destroy();
    await checkpoint?.release();
  }
}

const sha256Of = (text: string) => createHash('sha256').update(text).digest('hex');

/**
 * The read rate of --rcu: a number as given; auto from the table's read capacity (one more DescribeTable:
 * the warm throughput and on-demand ceiling the load's TableInfo does not keep), divided among --segment's workers.
 */
async function readRateOf(
  spec: RcuSpec,
  client: DynamoDBDocumentClient,
  opts: NormalizedLoadOptions,
  table: TableInfo,
  signal: AbortSignal | undefined,
  /** The workers it is divided among: --segment's N unless the workers share the whole rate. */
  workers = opts.segment?.count ?? 1,
): Promise<{ rcu: number; reason: string }> {
  if (spec.kind === 'fixed') return chooseReadRate(spec, { billingMode: table.billingMode });
  let description: TableDescription | undefined;
  try {
    description = (await client.send(new DescribeTableCommand({ TableName: opts.table }), signal ? { abortSignal: signal } : {})).Table;
  } catch (error) {
    if (signal?.aborted) throw new LoaderError('ABORTED', 'the verify was stopped', { cause: error });
    throw fatalAwsError(error, { table: opts.table, region: opts.region, endpoint: opts.endpoint });
  }
  return chooseReadRate(
    spec,
    {
      billingMode: table.billingMode,
      provisionedRcu: table.provisionedRcu ?? description?.ProvisionedThroughput?.ReadCapacityUnits,
      warmReadUnits: description?.WarmThroughput?.ReadUnitsPerSecond,
      maxReadUnits: description?.OnDemandThroughput?.MaxReadRequestUnits,
    },
    workers,
  );
}

/** This verify worker's state document beside the listing, and its peers'. */
function verifyWorkerStores(listing: string, segment: Segment, s3: () => Promise<S3Access>): { own: WorkerDocStore; peers: WorkerDocStore[] } {
  const store = (index: number) => {
    const path = verifyWorkerDocPath(listing, { index, count: segment.count });
    return path.startsWith('s3://') ? s3WorkerStore(path, s3) : localWorkerStore(path);
  };
  const others = Array.from({ length: segment.count }, (_, index) => index).filter((index) => index !== segment.index);
  return { own: store(segment.index), peers: others.map(store) };
}

/** An S3 client for a listing on S3, as the load's (prepareLoad.ts) is made: the S3 SDK loaded only then. */
async function s3AccessOf(opts: NormalizedLoadOptions): Promise<S3Access> {
  const { createS3Access } = await import('../reading/s3Part.js');
  return createS3Access({
    region: opts.region,
    profile: opts.profile,
    endpoint: opts.s3Endpoint,
    forcePathStyle: opts.s3PathStyle,
    caBundle: opts.caBundle,
    requestTimeoutMs: opts.requestTimeoutMs,
  });
}

/**
 * The Scan's pages under --rcu: at most about a second of the rate (and 1 MB, DynamoDB's own bound), by a
 * Limit of items of the input's average size, whose read units each page reserves before it is sent.
 */
function scanPage(rcu: number, averageBytes: number, consistent: boolean): { limit: number; units: number } {
  const unitBytes = consistent ? 4096 : 8192;
  const target = Math.max(1, Math.min(rcu, (1024 * 1024) / unitBytes));
  const limit = Math.max(1, Math.floor((target * unitBytes) / Math.max(1, averageBytes)));
  return { limit, units: Math.max(consistent ? 1 : 0.5, Math.ceil((limit * averageBytes) / 4096) * (consistent ? 1 : 0.5)) };
}

/** --skip-expired's attribute, and the time items are judged expired at (epoch seconds). */
interface Ttl {
  attribute: string;
  now: number;
}

/** Whether a stored TTL attribute has passed at `now`, by DynamoDB's rules (a Number of epoch seconds, at most five years old). */
function wireExpired(value: AttributeValue | undefined, now: number): boolean {
  if (value?.N === undefined) return false;
  const seconds = Number(value.N);
  return Number.isFinite(seconds) && seconds < now && now - seconds <= TTL_MAX_AGE_SECONDS;
}

/** The dry run's result; a dry run that asked to start over cannot happen here (no onTable asks it). */
async function finished(run: ReturnType<typeof dryRunLoad>): Promise<LoadResult> {
  const outcome = await run;
  if ('startOver' in outcome) throw bug('a verify dry run was asked to start over');
  return outcome.result;
}

function rowsOf(result: LoadResult): VerifyResult['rows'] {
  return { read: result.rowsRead, rejected: result.rejected, otherSegment: result.otherSegments };
}

/** A key's outcome: the stored item (or none) against the write that decides it. */
function judge(
  check: Check,
  stored: Record<string, AttributeValue> | undefined,
  excerpts: boolean,
  ttl: Ttl | undefined,
): Pick<Difference, 'outcome' | 'attributes' | 'values'> {
  const { write, refused } = check;
  if (check.kept) return { outcome: 'conditionKept' };
  if (refused) return { outcome: stored ? 'rejectedButPresent' : 'absent' };
  if (write.op === 'delete') return { outcome: stored ? 'deletedButPresent' : 'absent' };
  // Its TTL passed since the load (a row expired at the load's time was skipped, and is not checked): DynamoDB may have deleted it.
  if (!stored) return { outcome: ttl && expiryOf(write.item, ttl.attribute, ttl.now) === 'expired' ? 'expired' : 'missing' };
  const expected = toWireItem(write.item);
  const attributes = differingAttributes(expected, stored);
  if (attributes.length === 0) return { outcome: 'matched' };
  if (!excerpts) return { outcome: 'different', attributes };
  const values: NonNullable<Difference['values']> = {};
  for (const name of attributes) values[name] = { expected: plain(expected[name]), stored: plain(stored[name]) };
  return { outcome: 'different', attributes, values };
}

/** An attribute value as JSON can hold it (DynamoDB JSON, binary as base64); undefined when absent. */
function plain(value: AttributeValue | undefined): unknown {
  if (value === undefined) return undefined;
  return JSON.parse(
    JSON.stringify(value, (_key, v: unknown) =>
      v instanceof Uint8Array ? Buffer.from(v.buffer, v.byteOffset, v.byteLength).toString('base64') : v instanceof Set ? [...(v as Set<unknown>)] : v,
    ),
  ) as unknown;
}

const CODES: Record<Outcome, DifferenceRecord['code'] | undefined> = {
  matched: undefined,
  absent: undefined,
  missing: 'MISSING',
  different: 'DIFFERENT',
  deletedButPresent: 'DELETED_BUT_PRESENT',
  rejectedButPresent: 'REJECTED_BUT_PRESENT',
  extra: 'EXTRA',
  expired: undefined,
  conditionKept: undefined,
};

/** A difference as a line of the differences file. */
function recordOf(difference: Difference, key: Record<string, string> | undefined, raw: string, excerpts: boolean): DifferenceRecord {
  return {
    file: difference.file,
    line: difference.line,
    code: CODES[difference.outcome]!,
    message: messageOf(difference, excerpts),
    ...(difference.attributes?.length === 1 ? { field: difference.attributes[0]! } : {}),
    ...(key ? { key } : {}),
    raw,
  };
}

/** One sentence for a difference; values only with excerpts. */
export function messageOf(difference: Difference, excerpts: boolean): string {
  switch (difference.outcome) {
    case 'missing':
      return 'the table has no item with this key; the row should have written one';
    case 'deletedButPresent':
      return 'the row deletes this key, but the table still has an item with it';
    case 'rejectedButPresent':
      return "every row of this key is in the load's reject file, but the table has an item with it";
    case 'extra':
      return 'the table has an item with this key, which no row of the input writes';
    case 'different': {
      const names = difference.attributes ?? [];
      if (!excerpts || !difference.values) return `the stored item differs in ${names.map((n) => JSON.stringify(n)).join(', ')}`;
      const parts = names.map((n) => `${JSON.stringify(n)}: expected ${show(difference.values![n]!.expected)}, stored ${show(difference.values![n]!.stored)}`);
      return `the stored item differs: ${parts.join('; ')}`;
    }
    default:
      return difference.outcome;
  }
}

const show = (value: unknown) => (value === undefined ? '(absent)' : JSON.stringify(value));

/** The verify's own options, checked (the load's are checked by normalizeOptions). */
function checkVerifyOptions(options: VerifyOptions): {
  rcu: RcuSpec | undefined;
  keyRcu: number | undefined;
  consistentRead: boolean;
  sample: number;
  differencesPath: string | undefined;
  excerpts: boolean;
  scanSegments: number | 'auto' | undefined;
} {
  const { rcu, keyRcu, consistentRead, sample, differencesPath, excerpts, scanSegments } = options;
  if (keyRcu !== undefined && (typeof keyRcu !== 'number' || !Number.isFinite(keyRcu) || keyRcu < 1))
    throw new LoaderError('INVALID_OPTION', `--key-rcu takes read units per second from 1 up, got ${String(keyRcu)}`);
  if (scanSegments !== undefined && scanSegments !== 'auto' && (!Number.isInteger(scanSegments) || scanSegments < 1 || scanSegments > 1_000_000))
    throw new LoaderError('INVALID_OPTION', `--scan takes a number of parallel Scan segments from 1 to 1,000,000, or auto, got ${String(scanSegments)}`);
  // --scan auto with --segment reads the keys (tableReadPlan.ts says why).
  if (typeof scanSegments === 'number' && options.segment !== undefined)
    throw new LoaderError(
      'INVALID_OPTION',
      "--scan reads the whole table, whose other segments' items this --segment's input does not explain: scan without --segment",
    );
  if (sample !== undefined && (typeof sample !== 'number' || !(sample > 0) || sample > 1))
    throw new LoaderError('INVALID_OPTION', `sample takes a share of the keys above 0 and at most 1 (--sample 1% is 0.01), got ${String(sample)}`);
  if (differencesPath !== undefined && (typeof differencesPath !== 'string' || differencesPath === ''))
    throw new LoaderError('INVALID_OPTION', `--differences takes a file path, got ${String(differencesPath)}`);
  return {
    rcu: rcu === undefined ? undefined : parseRcuSpec(rcu),
    keyRcu,
    consistentRead: consistentRead !== false,
    sample: sample ?? 1,
    differencesPath,
    excerpts: excerpts !== false,
    scanSegments,
  };
}

/** The differences file may be neither an input nor the load's reject file (both are read). */
function checkDifferencesPath(path: string, opts: NormalizedLoadOptions): void {
  const target = resolve(path);
  const read = [...opts.inputs.filter((input) => !input.startsWith('s3://')), opts.rejectsPath].find((file) => resolve(file) === target);
  if (read !== undefined)
    throw new LoaderError(
      'INVALID_OPTION',
      `--differences ${path} is ${read === opts.rejectsPath ? "the load's reject file" : 'an input'}, which the verify reads: choose another path`,
    );
}

/**
 * The seed of random:N suffixes: the one given, else the one the load's shard manifest recorded (the
 * suffixes follow from it and the key); a verify cannot draw its own.
 */
async function seedOf(opts: NormalizedLoadOptions, given: number | undefined): Promise<number | undefined> {
  if (given !== undefined || !opts.shard?.rules.some((rule) => rule.kind === 'random')) return given;
  const path = opts.shard.manifestPath;
  try {
    const manifest = JSON.parse(await readFile(path, 'utf8')) as { seed?: unknown };
    if (typeof manifest.seed === 'number' && Number.isInteger(manifest.seed)) return manifest.seed;
  } catch {
    // Said below.
  }
  throw new LoaderError(
    'INVALID_OPTION',
    `--shard random:N needs the seed the items were written with: pass --shard-seed, or --shard-manifest with the load's manifest (${path} holds no seed)`,
  );
}
