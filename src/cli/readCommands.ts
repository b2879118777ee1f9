import type { Command } from 'commander';
import { LoaderError } from '../shared/errors.js';
import type { ShardRule, SuffixBase } from '../sharding/shardRule.js';
import type { ReadOptions, ShardRulesSpec } from '../querying/readOptions.js';
import { EXIT, exitCodeForError } from './exitCodes.js';
import { addTableOptions } from './commandOptions.js';
import type { CliIo } from './terminal.js';

/** The flags of `query` and `get`. */
interface ReadFlags {
  table: string;
  key: string;
  manifest?: string;
  shard?: ShardRule[];
  shardSeparator?: string;
  shardSeed?: number;
  shardBase?: SuffixBase;
  shardKeys?: string[];
  keepOriginalKey?: string;
  ddbJson?: boolean;
  consistentRead?: boolean;
  concurrency?: number;
  pageSize?: number;
  sort?: string;
  value?: Record<string, string>;
  region?: string;
  profile?: string;
  endpointUrl?: string;
  caBundle?: string;
  verbose?: boolean;
}

const READ_EXAMPLES = `
Examples:
  # Every event of user-1, across its shards, in sort key order (the manifest the load wrote)
  $ ddb-spread query --table Events --key user-1 --manifest events.jsonl.Events.shards.json

  # The same without the manifest: the load's rules and seed (time rules need the manifest)
  $ ddb-spread query --table Events --key user-1 --shard random:8 --shard-seed 42 --ddb-json

  # One item: its suffix is computed from the key (random, hash of the sort key, time of the sort key)
  $ ddb-spread get --table Events --key user-1 --sort evt-0042 --manifest events.jsonl.Events.shards.json

Output: one JSON object per line on stdout (plain JSON, numbers with every digit, binary as base64;
--ddb-json for DynamoDB JSON). Exit codes: 0 done (get: the item was found), 1 get found no item,
64 usage, 66 manifest missing, 78 no such table or a manifest that does not fit, 75 worth retrying.`;

/** Adds `query` and `get` to the program; `done` receives each run's exit code. */
export function addReadCommands(program: Command, io: Pick<CliIo, 'stdout' | 'stderr'>, done: (code: number) => void): void {
  const query = program
    .command('query')
    .description('Read every item of a sharded key back: one Query per shard, in parallel, merged by sort key, as JSON lines.');
  addTableOptions(query, 'query')
    .addHelpText('after', READ_EXAMPLES)
    .action(async (flags: ReadFlags) => done(await runQuery(io, flags)));

  const get = program.command('get').description('Read one item of a sharded key: its shard suffix is computed, then one GetItem.');
  addTableOptions(get, 'get')
    .addHelpText('after', READ_EXAMPLES)
    .action(async (flags: ReadFlags) => done(await runGet(io, flags)));
}

/** The reader's options from the flags: the manifest, or the load's rules. */
function readOptionsOf(flags: ReadFlags): ReadOptions {
  if (flags.manifest !== undefined && flags.shard !== undefined) {
    throw new LoaderError('INVALID_OPTION', "give either --manifest or the load's --shard rules, not both (the manifest records the rules)");
  }
  let manifest: ReadOptions['manifest'];
  if (flags.manifest !== undefined) manifest = flags.manifest;
  else if (flags.shard !== undefined) {
    const spec: ShardRulesSpec = { rules: flags.shard };
    if (flags.shardSeparator !== undefined) spec.separator = flags.shardSeparator;
    if (flags.shardSeed !== undefined) spec.seed = flags.shardSeed;
    if (flags.shardBase !== undefined) spec.suffixBase = flags.shardBase;
    if (flags.shardKeys !== undefined) spec.keys = flags.shardKeys;
    if (flags.keepOriginalKey !== undefined) spec.keepOriginalKey = flags.keepOriginalKey;
    manifest = spec;
  } else {
    throw new LoaderError(
      'INVALID_OPTION',
      "how the key was sharded is unknown: give --manifest (the load wrote it as <input>.<table>.shards.json next to its input, or at --shard-manifest), or the load's --shard rules",
    );
  }
  return {
    table: flags.table,
    key: flags.key,
    manifest,
    region: flags.region,
    profile: flags.profile,
    endpoint: flags.endpointUrl,
    caBundle: flags.caBundle,
    consistentRead: flags.consistentRead === true,
  };
}

async function runQuery(io: Pick<CliIo, 'stdout' | 'stderr'>, flags: ReadFlags): Promise<number> {
  try {
    const options = {
      ...readOptionsOf(flags),
      ...(flags.concurrency !== undefined ? { concurrency: flags.concurrency } : {}),
      ...(flags.pageSize !== undefined ? { pageSize: flags.pageSize } : {}),
    };
    // Loaded when the command runs: the other commands, --help and --version never need the readers.
    const [{ queryShards }, { itemJsonLine }] = await Promise.all([import('../querying/queryShards.js'), import('../querying/itemJson.js')]);
    for await (const item of queryShards(options)) {
      // A reader that went away (| head -1): stop querying.
      if ((io.stdout as { destroyed?: boolean }).destroyed) break;
      if (!io.stdout.write(itemJsonLine(item, flags.ddbJson === true))) await drained(io.stdout);
    }
    return EXIT.OK;
  } catch (error) {
    return failed(io, flags, error);
  }
}

async function runGet(io: Pick<CliIo, 'stdout' | 'stderr'>, flags: ReadFlags): Promise<number> {
  try {
    const [{ getSharded }, { itemJsonLine }] = await Promise.all([import('../querying/getSharded.js'), import('../querying/itemJson.js')]);
    const item = await getSharded({
      ...readOptionsOf(flags),
      ...(flags.sort !== undefined ? { sort: flags.sort } : {}),
      ...(flags.value !== undefined ? { values: flags.value } : {}),
    });
    if (item === undefined) {
      io.stderr.write(
        `ddb-spread: no item with key "${flags.key}"${flags.sort !== undefined ? ` and sort key "${flags.sort}"` : ''} in table ${flags.table}\n`,
      );
      return EXIT.FATAL;
    }
    io.stdout.write(itemJsonLine(item, flags.ddbJson === true));
    return EXIT.OK;
  } catch (error) {
    return failed(io, flags, error);
  }
}

function failed(io: Pick<CliIo, 'stderr'>, flags: ReadFlags, error: unknown): number {
  io.stderr.write(`ddb-spread: error: ${(error as Error).message}\n`);
  if (flags.verbose && (error as Error).stack) io.stderr.write(`${(error as Error).stack}\n`);
  return exitCodeForError(error instanceof LoaderError ? error.code : undefined);
}

function drained(stream: NodeJS.WritableStream): Promise<void> {
  return new Promise((resolve) => {
    const done = () => {
      stream.off('drain', done);
      stream.off('close', done);
      resolve();
    };
    stream.on('drain', done);
    stream.on('close', done);
  });
}
