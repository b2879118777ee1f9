import { normalize } from 'node:path/posix';
import type { Segment } from './segment.js';

/**
 * Where a load's own files go by default, and which output paths may not be used: pure, so both rules
 * are unit-tested without a file system (src/load/outputFiles.ts resolves the paths and calls them).
 */

/** What the default path is for: the reject file or the shard manifest. */
export type OutputKind = 'rejects' | 'shards';

const EXTENSIONS: Record<OutputKind, string> = { rejects: 'rejects.jsonl', shards: 'shards.json' };

/**
 * The default path of a load's reject file or shard manifest: next to the input, keeping its whole name
 * (`data/x.csv` -> `data/x.csv.rejects.jsonl`, so `x.csv` and `x.jsonl` never share one), a manifest with
 * its table (`data/x.csv.Orders.shards.json`), with the
 * segment in it (`x.csv.seg-0-of-4.rejects.jsonl`, so workers over one file never share one), and a dry
 * run's reject file apart from the real load's (`x.csv.dry-run.rejects.jsonl`). Stdin: `stdin.*` in the
 * working folder; so are pipes named by the system (`<(zcat x.gz)` is /dev/fd/63: `63.*`), whose folder
 * takes no files.
 */
export function defaultOutputPath(
  input: string,
  kind: OutputKind,
  context: { segment?: Segment | undefined; dryRun?: boolean; table?: string | undefined } = {},
): string {
  const base = input === '-' ? 'stdin' : /^\/(dev|proc)\//.test(input) ? input.split('/').pop()! : outputBase(input);
  // The manifest describes one table's suffixes: one input loaded into two tables keeps both.
  const table = kind === 'shards' && context.table !== undefined ? `.${tableFileName(context.table)}` : '';
  const segment = context.segment ? `.seg-${context.segment.index}-of-${context.segment.count}` : '';
  const dryRun = context.dryRun && kind === 'rejects' ? '.dry-run' : '';
  return `${base}${table}${segment}${dryRun}.${EXTENSIONS[kind]}`;
}

/**
 * The --condition-failures file of a segment: each worker its own, as each has its own reject file
 * (`failed.jsonl` -> `failed.seg-1-of-4.jsonl`; a path not ending in .jsonl gets the segment at its end).
 */
export function conditionFailuresPathOf(path: string, segment: Segment | undefined): string {
  if (!segment) return path;
  const tag = `.seg-${segment.index}-of-${segment.count}`;
  return path.endsWith('.jsonl') && !path.endsWith('/.jsonl') ? `${path.slice(0, -'.jsonl'.length)}${tag}.jsonl` : `${path}${tag}`;
}

/** A table name, or the name in a table ARN (arn:aws:dynamodb:…:table/Orders), as a file name part. */
function tableFileName(table: string): string {
  const name = table.startsWith('arn:') ? (table.split('/')[1] ?? table) : table;
  return name.replace(/[^A-Za-z0-9_.-]/g, '_');
}

/** A file the load reads or writes, resolved by the I/O layer. */
export interface ResolvedFile {
  /** The option that names it, e.g. "--rejects", or "the input". */
  option: string;
  /** As given. */
  path: string;
  /** Absolute, with symlinks in it resolved (the folder's, for a file that does not exist yet). */
  resolved: string;
  /** "dev:ino" of an existing file (the target of a symlink): hard links to one file share it. */
  inode?: string | undefined;
}

const sameFile = (a: ResolvedFile, b: ResolvedFile) => a.resolved === b.resolved || (a.inode !== undefined && a.inode === b.inode);

/**
 * Why these outputs cannot be written, in one sentence naming the option, the path and what to do: an
 * output that is one of the files read (by path, through a symlink or as a hard link), or two outputs
 * that are one file. Undefined when none.
 */
export function findOutputConflict(reads: readonly ResolvedFile[], writes: readonly ResolvedFile[]): string | undefined {
  for (const write of writes) {
    const read = reads.find((r) => sameFile(r, write));
    if (read) {
      const how = read.resolved === write.resolved ? (read.path === write.path ? '' : ` (${write.path} resolves to ${read.resolved})`) : ' (a hard link to it)';
      return `${write.option} ${write.path} is ${read.option === 'the input' ? 'the input file' : `the file of ${read.option}`} ${read.path}${how}; writing it would destroy what is being read: choose another path for ${write.option}`;
    }
  }
  for (let i = 0; i < writes.length; i++) {
    for (let j = i + 1; j < writes.length; j++) {
      const a = writes[i]!;
      const b = writes[j]!;
      if (sameFile(a, b)) return `${a.option} ${a.path} and ${b.option} ${b.path} are the same file; give each its own path`;
    }
  }
  return undefined;
}

/**
 * Where outputs named after an input go: an S3 input's last name in the working folder (s3://b/exports/
 * -> exports), a folder's name beside it (data/ -> data), a glob's folder (out/part-*.csv -> out/part-).
 */
function outputBase(input: string): string {
  if (input.startsWith('s3://')) {
    const names = input.slice(5).split('/').filter(Boolean);
    return (names[names.length - 1] ?? 's3').replace(/[*?]/g, '');
  }
  const glob = input.search(/[*?]/);
  const base = glob === -1 ? input : input.slice(0, glob);
  // Spelling aside (`d/.`, `./d`, `d//`): `d/.` would otherwise put `..rejects.jsonl` inside the folder read.
  const trimmed = base === '' ? '' : normalize(base).replace(/\/+$/, '');
  return trimmed === '' || trimmed === '.' ? 'input' : trimmed;
}
