import { describe, expect, it } from 'vitest';
import { defaultOutputPath, findOutputConflict, type ResolvedFile } from '../../../src/load/outputPaths.js';

const input: ResolvedFile = { option: 'the input', path: 'in.csv', resolved: '/data/in.csv', inode: '1:100' };
const out = (option: string, path: string, resolved: string, inode?: string): ResolvedFile => ({ option, path, resolved, inode });

describe('defaultOutputPath', () => {
  it.each<[string, Parameters<typeof defaultOutputPath>[1], Parameters<typeof defaultOutputPath>[2], string]>([
    ['data/x.csv', 'rejects', {}, 'data/x.csv.rejects.jsonl'],
    ['data/x.jsonl', 'rejects', {}, 'data/x.jsonl.rejects.jsonl'],
    ['data/x.csv', 'rejects', { segment: { index: 0, count: 4 } }, 'data/x.csv.seg-0-of-4.rejects.jsonl'],
    ['data/x.csv', 'rejects', { dryRun: true }, 'data/x.csv.dry-run.rejects.jsonl'],
    ['data/x.csv', 'shards', { segment: { index: 3, count: 4 } }, 'data/x.csv.seg-3-of-4.shards.json'],
    ['data/x.csv', 'shards', { table: 'Orders', segment: { index: 3, count: 4 } }, 'data/x.csv.Orders.seg-3-of-4.shards.json'],
    ['data/x.csv', 'shards', { table: 'Orders' }, 'data/x.csv.Orders.shards.json'],
    ['data/x.csv', 'rejects', { table: 'Orders' }, 'data/x.csv.rejects.jsonl'],
    // A dry run writes no manifest; its name does not change.
    ['data/x.csv', 'shards', { dryRun: true }, 'data/x.csv.shards.json'],
    ['-', 'rejects', {}, 'stdin.rejects.jsonl'],
    ['-', 'rejects', { segment: { index: 1, count: 2 } }, 'stdin.seg-1-of-2.rejects.jsonl'],
    // A pipe the system names (process substitution, /dev/stdin): its folder takes no files.
    ['/dev/fd/63', 'rejects', {}, '63.rejects.jsonl'],
    ['/dev/stdin', 'shards', {}, 'stdin.shards.json'],
    ['/proc/self/fd/0', 'rejects', {}, '0.rejects.jsonl'],
    // A folder, however spelled, gets its file beside it, never inside it (`d/.` wrote d/..rejects.jsonl).
    ['d/.', 'rejects', {}, 'd.rejects.jsonl'],
    ['./d/', 'rejects', {}, 'd.rejects.jsonl'],
    ['/w/./d//', 'rejects', {}, '/w/d.rejects.jsonl'],
    ['.', 'rejects', {}, 'input.rejects.jsonl'],
    ['./out//part-*.csv', 'rejects', {}, 'out/part-.rejects.jsonl'],
  ])('%s %s %j -> %s', (file, kind, context, expected) => {
    expect(defaultOutputPath(file, kind, context)).toBe(expected);
  });
});

describe('findOutputConflict', () => {
  it('no conflict between distinct files', () => {
    expect(findOutputConflict([input], [out('--rejects', 'r.jsonl', '/data/r.jsonl'), out('--report', 'p.json', '/data/p.json', '1:7')])).toBeUndefined();
  });

  it.each(['--rejects', '--shard-manifest', '--checkpoint', '--report'])('%s naming the input by its path is refused', (option) => {
    const message = findOutputConflict([input], [out(option, 'in.csv', '/data/in.csv', '1:100')]);
    expect(message).toMatch(new RegExp(`^${option} in.csv is the input file in.csv;`));
    expect(message).toMatch(/choose another path/);
  });

  it('through a symlink or another spelling: names where it resolves to', () => {
    expect(findOutputConflict([input], [out('--rejects', 'link.csv', '/data/in.csv', '1:100')])).toMatch(
      /^--rejects link.csv is the input file in.csv \(link.csv resolves to \/data\/in.csv\)/,
    );
  });

  it('a hard link: the same device and inode under another path', () => {
    expect(findOutputConflict([input], [out('--checkpoint', 'hard.csv', '/data/hard.csv', '1:100')])).toMatch(
      /^--checkpoint hard.csv is the input file in.csv \(a hard link to it\)/,
    );
  });

  it('another file read (--schema) is protected too', () => {
    const schema = out('--schema', 's.json', '/data/s.json', '1:5');
    expect(findOutputConflict([input, schema], [out('--report', 's.json', '/data/s.json', '1:5')])).toMatch(/^--report s.json is the file of --schema s.json/);
  });

  it('a file that does not exist yet matches by its resolved path only', () => {
    expect(findOutputConflict([input], [out('--rejects', 'new.jsonl', '/data/new.jsonl')])).toBeUndefined();
    expect(findOutputConflict([{ ...input, inode: undefined }], [out('--rejects', './in.csv', '/data/in.csv')])).toMatch(/is the input file/);
  });

  it('two outputs that are one file are refused', () => {
    expect(findOutputConflict([input], [out('--rejects', 'a.json', '/data/a.json'), out('--report', './a.json', '/data/a.json')])).toBe(
      '--rejects a.json and --report ./a.json are the same file; give each its own path',
    );
    expect(findOutputConflict([input], [out('--checkpoint', 'c.json', '/data/c.json', '1:9'), out('--report', 'h.json', '/data/h.json', '1:9')])).toMatch(
      /^--checkpoint c.json and --report h.json are the same file/,
    );
  });
});
