import { constants, existsSync } from 'node:fs';
import { access, lstat, realpath, stat } from 'node:fs/promises';
import { basename, dirname, join, resolve } from 'node:path';
import { FileLock, type NamedFile } from '../files/fileLock.js';
import { LoaderError } from '../shared/errors.js';
import type { NormalizedLoadOptions } from './options.js';
import { defaultOutputPath, findOutputConflict, type ResolvedFile } from './outputPaths.js';
import { hasGlob } from '../reading/glob.js';

/**
 * The files a load writes (reject file, shard manifest, checkpoint, report, the order's temporary files):
 * checked before the first row is read, then created private (files/privateFiles.ts), and the reject
 * file locked against a second process (files/fileLock.ts). Rows are in these files, and a path mistaken for the
 * input destroyed the input while it was read.
 */

interface Inspected extends ResolvedFile {
  /** What lstat saw at the path itself. */
  kind: 'missing' | 'file' | 'directory' | 'symlink' | 'other';
}

async function inspect(file: NamedFile): Promise<Inspected> {
  const absolute = resolve(file.path);
  let kind: Inspected['kind'];
  try {
    const info = await lstat(absolute);
    kind = info.isSymbolicLink() ? 'symlink' : info.isDirectory() ? 'directory' : info.isFile() ? 'file' : 'other';
  } catch {
    kind = 'missing';
  }
  let resolved: string;
  let inode: string | undefined;
  try {
    resolved = await realpath(absolute);
    const info = await stat(resolved);
    inode = `${info.dev}:${info.ino}`;
  } catch {
    // Not there (or a dangling link): the folder's real path and the name.
    resolved = await realpath(dirname(absolute)).then(
      (folder) => join(folder, basename(absolute)),
      () => absolute,
    );
  }
  return { option: file.option, path: file.path, resolved, inode, kind };
}

/**
 * Refuses, before anything is read or written, outputs that cannot be written safely: one that is a file
 * read (the input, by path, symlink or hard link), two outputs that are one file, a symlink, a folder or
 * anything but a regular file, and a path whose folder is missing or not writable. Each refusal is a
 * LoaderError naming the option, the path and what to do.
 */
export async function checkOutputFiles(reads: readonly NamedFile[], writes: readonly NamedFile[]): Promise<void> {
  const readFiles = await Promise.all(reads.filter((r) => r.path !== '-').map(inspect));
  const writeFiles = await Promise.all(writes.map(inspect));
  const conflict = findOutputConflict(readFiles, writeFiles);
  if (conflict) throw new LoaderError('INVALID_OPTION', conflict, { file: writeFiles.find((w) => conflict.startsWith(`${w.option} ${w.path} `))?.path });
  for (const [i, file] of writeFiles.entries()) {
    const code = writes[i]!.code ?? 'INVALID_OPTION';
    const refuse = (why: string, cause?: unknown) =>
      new LoaderError(code, `${file.option} ${file.path} ${why}`, { file: file.path, ...(cause === undefined ? {} : { cause }) });
    if (file.kind === 'symlink')
      throw refuse(`is a symbolic link; ddb-spread never writes through a link (it could point anywhere): give the real path, or remove the link`);
    if (file.kind === 'directory') throw refuse('is a folder: give a file path');
    if (file.kind === 'other') throw refuse('is not a regular file: give the path of a file');
    const folder = dirname(resolve(file.path));
    try {
      if (!(await stat(folder)).isDirectory()) throw refuse(`cannot be created: ${folder} is not a folder; choose another path for ${file.option}`);
      await access(folder, constants.W_OK);
      if (file.kind === 'file') await access(file.path, constants.W_OK);
    } catch (error) {
      if (error instanceof LoaderError) throw error;
      const errno = (error as NodeJS.ErrnoException).code;
      if (errno === 'ENOENT' || errno === 'ENOTDIR')
        throw refuse(`cannot be created: the folder ${folder} does not exist; create it or choose another path for ${file.option}`, error);
      throw refuse(`is not writable (${errno ?? (error as Error).message}); choose a writable path for ${file.option}`, error);
    }
  }
}

/** Files a caller of load() reads or will write besides load's own (the CLI's --schema, --config, --report). */
export interface CallerFiles {
  reads?: NamedFile[];
  writes?: NamedFile[];
}

/**
 * Everything load() does with its output files before the first row: the checks above over the input,
 * the reject file, the manifest, the checkpoint and the caller's files; a dry run's guard; then the lock
 * on the reject file, which the caller releases when the load ends.
 */
export async function prepareOutputFiles(opts: NormalizedLoadOptions, dryRun: boolean, caller: CallerFiles = {}): Promise<FileLock> {
  const rejects: NamedFile = { option: '--rejects', path: opts.rejectsPath, code: 'REJECTS_UNWRITABLE' };
  const writes: NamedFile[] = [rejects];
  if (opts.conditionFailuresPath !== undefined && !dryRun)
    writes.push({ option: '--condition-failures', path: opts.conditionFailuresPath, code: 'CONDITION_FAILURES_UNWRITABLE' });
  if (opts.shard && !dryRun) writes.push({ option: '--shard-manifest', path: opts.shard.manifestPath, code: 'MANIFEST_UNWRITABLE' });
  if (opts.checkpointPath && !dryRun) writes.push({ option: '--checkpoint', path: opts.checkpointPath, code: 'CHECKPOINT_UNWRITABLE' });
  // Its write-reject log (CheckpointStore.rejectLogPath) is created, emptied, beside it: an output too.
  if (opts.checkpointPath && !dryRun)
    writes.push({ option: 'the write-reject log of --checkpoint', path: `${opts.checkpointPath}.write-rejects`, code: 'CHECKPOINT_UNWRITABLE' });
  writes.push(...(caller.writes ?? []));
  const inputs = opts.inputs.filter((input) => !input.startsWith('s3://')).map((path) => ({ option: 'the input', path }));
  await checkInputsExist(inputs.map((input) => input.path));
  await checkOutputFiles([...inputs, ...(caller.reads ?? [])], writes);
  if (dryRun) await checkDryRunOutput(rejects, defaultOutputPath(opts.inputs[0]!, 'rejects', { segment: opts.segment, dryRun: true }));
  return FileLock.acquire(rejects);
}

/**
 * A local input named by its path (not a glob, not stdin) that is not there is reported as the missing
 * input (66) before the outputs are checked: the default reject file sits beside the input, so the first
 * refusal was "--rejects missing-dir/file.csv.rejects.jsonl cannot be created", about a file never asked for.
 */
async function checkInputsExist(paths: readonly string[]): Promise<void> {
  for (const path of paths) {
    if (path === '-' || hasGlob(path)) continue;
    await stat(path).catch((error: NodeJS.ErrnoException) => {
      if (error.code !== 'ENOENT' && error.code !== 'ENOTDIR') return;
      throw new LoaderError('INPUT_NOT_FOUND', `input file ${path} does not exist${folderNote(path)}`, { file: path, cause: error });
    });
  }
}

/** Says so when the input's folder is missing too: the likelier typo. */
function folderNote(path: string): string {
  const folder = dirname(path);
  return folder === '.' || existsSync(folder) ? '' : ` (nor does its folder ${folder})`;
}

/**
 * A dry run never overwrites an existing file other than its own default reject file: a real load's reject
 * file may be the only list of rows missing from the table. Empty files are fine.
 */
export async function checkDryRunOutput(file: NamedFile, ownDefault: string): Promise<void> {
  if (resolve(file.path) === resolve(ownDefault)) return;
  const info = await stat(file.path).catch(() => undefined);
  if (info && info.size > 0) {
    throw new LoaderError(
      'INVALID_OPTION',
      `${file.option} ${file.path} exists (it may hold the rows a real load rejected); a dry run never overwrites a file: leave ${file.option} out (a dry run writes ${ownDefault}), choose a new path, or remove the file`,
      { file: file.path },
    );
  }
}
