/**
 * The migration path's adversarial inputs (test/adversarial/migration.test.ts): parts of several formats
 * and compressions with a small row model, folder layouts with hostile names, markers, checksums and
 * symbolic links, and the oracle of what a load of them must leave. The oracle is the test's own model of
 * the documented rules (docs/REFERENCE.md, on folders, globs and S3 prefixes), never src/reading/listing.ts: a part is
 * data unless a segment of its path under the folder starts with "." or "_", or it is a checksum; parts are
 * read in byte order of that path; of two names of one file, the one reached without a link is read.
 */
import fc from 'fast-check';
import { execFileSync } from 'node:child_process';
import { mkdir, symlink, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { gzipSync } from 'node:zlib';
import { keyOf, type PlainItem } from './adversarialOracle.js';

/** A row: `n` is 'bad' for a row whose number is not one (TYPE_ERROR with --types n:N). */
export interface MRow {
  pk: string;
  sk: number;
  v: string;
  n: number | 'bad';
}
export type PartFormat = 'csv' | 'tsv' | 'jsonl';
export type Compression = 'none' | 'gz' | 'bz2';
export interface PartModel {
  format: PartFormat;
  compression: Compression;
  rows: MRow[];
}

/** --types of every part. */
export const MIGRATION_TYPES = { n: 'N' as const };
/** Few partition keys, so rows of different parts write the same items and part order shows. */
const PKS = ['a', 'b', 'ü', '𝔸', 'k,1'];
const VALUES = ['a', 'b c', 'é', '中', '😀', 'x.y', 'k,1'];

export const mrow = (badShare: number): fc.Arbitrary<MRow> =>
  fc
    .record({
      pk: fc.constantFrom(...PKS),
      sk: fc.integer({ min: 0, max: 3 }),
      v: fc.constantFrom(...VALUES),
      n: fc.integer({ min: -1000, max: 1000 }),
      coin: fc.noBias(fc.integer({ min: 0, max: 99 })),
    })
    .map(({ pk, sk, v, n, coin }) => ({ pk, sk, v, n: coin < badShare * 100 ? ('bad' as const) : n }));

export const partModel = (opts: { minRows: number; maxRows: number; badShare: number; compressions?: Compression[] }): fc.Arbitrary<PartModel> =>
  fc.record({
    format: fc.constantFrom<PartFormat>('csv', 'tsv', 'jsonl'),
    compression: fc.constantFrom<Compression>(...(opts.compressions ?? ['none', 'none', 'gz', 'bz2'])),
    rows: fc.array(mrow(opts.badShare), { minLength: opts.minRows, maxLength: opts.maxRows }),
  });

export const extOf = (p: Pick<PartModel, 'format' | 'compression'>) => `.${p.format}${p.compression === 'none' ? '' : `.${p.compression}`}`;

const csvField = (s: string) => (/[",\n]/.test(s) ? `"${s.replace(/"/g, '""')}"` : s);

/** The text of a part (uncompressed). */
export function partText(part: Pick<PartModel, 'format' | 'rows'>): string {
  const n = (r: MRow) => (r.n === 'bad' ? '12x' : String(r.n));
  if (part.format === 'jsonl') return part.rows.map((r) => `${JSON.stringify({ pk: r.pk, sk: r.sk, v: r.v, n: r.n === 'bad' ? '12x' : r.n })}\n`).join('');
  if (part.format === 'tsv') return ['pk\tsk\tv\tn', ...part.rows.map((r) => [r.pk, String(r.sk), r.v, n(r)].join('\t'))].join('\n') + '\n';
  return ['pk,sk,v,n', ...part.rows.map((r) => [r.pk, String(r.sk), r.v, n(r)].map(csvField).join(','))].join('\n') + '\n';
}

export function partBytes(part: PartModel): Buffer {
  const raw = Buffer.from(partText(part), 'utf8');
  if (part.compression === 'gz') return gzipSync(raw);
  if (part.compression === 'bz2') return execFileSync('bzip2', ['-c'], { input: raw });
  return raw;
}

/** The line row `i` of a part starts on (a header is line 1). */
export const lineOf = (part: Pick<PartModel, 'format'>, i: number) => (part.format === 'jsonl' ? i + 1 : i + 2);

/** What a load of `parts`, in this order, must leave: the table row by row, and the rejects by file and line. */
export interface MigrationExpected {
  table: Map<string, PlainItem>;
  /** `${file}\u0000${line}` -> code. */
  rejects: Map<string, string>;
  rows: number;
  good: number;
}

export function expectedOfParts(parts: ReadonlyArray<{ name: string; part: Pick<PartModel, 'format' | 'rows'> }>): MigrationExpected {
  const table = new Map<string, PlainItem>();
  const rejects = new Map<string, string>();
  let rows = 0;
  let good = 0;
  for (const { name, part } of parts) {
    part.rows.forEach((r, i) => {
      rows++;
      if (r.n === 'bad') return void rejects.set(`${name}\u0000${lineOf(part, i)}`, 'TYPE_ERROR');
      good++;
      table.set(keyOf(r.pk, String(r.sk)), { n: { N: String(r.n) }, pk: { S: r.pk }, sk: { N: String(r.sk) }, v: { S: r.v } });
    });
  }
  return { table, rejects, rows, good };
}

/** Byte order of UTF-8 paths (as S3 lists keys, and as docs/REFERENCE.md says folders are read). */
export const byUtf8 = (a: string, b: string) => Buffer.compare(Buffer.from(a, 'utf8'), Buffer.from(b, 'utf8'));

/* ==== local folder layouts ==== */

/** Pieces of data names: dots, underscores and dashes inside, unicode, spaces; a name never starts with "." or "_". */
const NAME_PIECES = ['a', '.b', '_c', 'é', '中文', ' s', 'ｆ', '😀', '-1', '..', 'part-0'];
const DIRS = ['', '', 'sub', 'y z', 'ü.d', 'd_1'];

/** A junk entry: never data, holds rows with their own keys (pk "JUNK"), so a junk entry read shows in the table. */
const JUNK = ['_SUCCESS', '_tmp.csv', '.hidden.csv', '_temporary/0/p.csv', '.spark/p.csv', 'sub/_SUCCESS', 'sub/.p.jsonl', 'y z/_committed_1'] as const;

export interface DataFile {
  rel: string;
  part: PartModel;
}

export interface LocalLayout {
  data: DataFile[];
  /** Junk entries (by path under the folder), and a checksum file per data file chosen. */
  junk: string[];
  crcOf: number[];
  /** A link to a data file of the folder (by index): read once, under the file's own name. */
  fileLinks: number[];
  broken: boolean;
  /** A link to a folder outside, holding this part: read through the link. */
  outsideFolder: PartModel | null;
  /** A link to a file outside: read under the link's name. */
  outsideFile: PartModel | null;
  /** A link "alias" to the subfolder of the first data file in one: its files read once, under "sub". */
  folderAlias: boolean;
}

export const localLayout = (part: fc.Arbitrary<PartModel>): fc.Arbitrary<LocalLayout> =>
  fc.record({
    data: fc.uniqueArray(
      fc
        .record({ dir: fc.constantFrom(...DIRS), pieces: fc.array(fc.constantFrom(...NAME_PIECES), { minLength: 1, maxLength: 3 }), part })
        .map(({ dir, pieces, part: p }) => ({ rel: `${dir === '' ? '' : `${dir}/`}p${pieces.join('')}${extOf(p)}`, part: p })),
      { minLength: 1, maxLength: 5, selector: (d) => d.rel },
    ),
    junk: fc.subarray([...JUNK]),
    crcOf: fc.uniqueArray(fc.nat(4), { maxLength: 2 }),
    fileLinks: fc.uniqueArray(fc.nat(4), { maxLength: 2 }),
    broken: fc.boolean(),
    outsideFolder: fc.option(part, { nil: null }),
    outsideFile: fc.option(part, { nil: null }),
    folderAlias: fc.boolean(),
  });

const JUNK_TEXT = 'pk,sk,v,n\nJUNK,0,junk,1\nJUNK,1,junk,2\n';

export interface Materialized {
  /** The data parts in the order a load must read them: name (as the load names them, under `root`) and model. */
  parts: Array<{ name: string; rel: string; part: PartModel }>;
  /** Entries (by path under root) that must be named in skipped, themselves or through a folder holding them. */
  skipped: string[];
}

/**
 * Writes the layout under `root` (outside files in `outside`) and returns what a load of the folder must
 * read, in order, and what it must skip. Names are `join(spelledRoot, rel)`.
 */
export async function materialize(layout: LocalLayout, root: string, outside: string): Promise<Materialized> {
  const parts: Materialized['parts'] = [];
  const skipped: string[] = [];
  const put = async (path: string, body: string | Buffer) => {
    await mkdir(dirname(path), { recursive: true });
    await writeFile(path, body);
  };
  await mkdir(root, { recursive: true });
  await mkdir(outside, { recursive: true });
  for (const d of layout.data) {
    await put(join(root, d.rel), partBytes(d.part));
    parts.push({ name: d.rel, rel: d.rel, part: d.part });
  }
  for (const j of layout.junk) {
    await put(join(root, j), JUNK_TEXT);
    skipped.push(j);
  }
  for (const i of new Set(layout.crcOf.map((c) => c % layout.data.length))) {
    const rel = `${layout.data[i]!.rel}.crc`;
    await put(join(root, rel), JUNK_TEXT);
    skipped.push(rel);
  }
  for (const [k, i] of [...new Set(layout.fileLinks.map((c) => c % layout.data.length))].entries()) {
    const target = layout.data[i]!.rel;
    const rel = `lnk-${k}${extOf(layout.data[i]!.part)}`;
    await symlink(join(root, target), join(root, rel));
    skipped.push(rel);
  }
  if (layout.broken) {
    await symlink(join(root, 'nowhere.csv'), join(root, 'broken.csv'));
    skipped.push('broken.csv');
  }
  if (layout.outsideFolder) {
    const f = `e${extOf(layout.outsideFolder)}`;
    await put(join(outside, 'ext', f), partBytes(layout.outsideFolder));
    await symlink(join(outside, 'ext'), join(root, 'linked'));
    parts.push({ name: `linked/${f}`, rel: `linked/${f}`, part: layout.outsideFolder });
  }
  if (layout.outsideFile) {
    const f = `out${extOf(layout.outsideFile)}`;
    await put(join(outside, f), partBytes(layout.outsideFile));
    await symlink(join(outside, f), join(root, f));
    parts.push({ name: f, rel: f, part: layout.outsideFile });
  }
  const inSub = layout.data.find((d) => d.rel.startsWith('sub/'));
  if (layout.folderAlias && inSub) {
    await symlink(join(root, 'sub'), join(root, 'alias'));
    for (const d of layout.data.filter((e) => e.rel.startsWith('sub/'))) skipped.push(`alias/${d.rel.slice(4)}`);
    // Junk under sub/ seen again through the alias: skipped either way.
    for (const j of layout.junk.filter((e) => e.startsWith('sub/'))) skipped.push(`alias/${j.slice(4)}`);
    for (const i of new Set(layout.crcOf.map((c) => c % layout.data.length)))
      if (layout.data[i]!.rel.startsWith('sub/')) skipped.push(`alias/${layout.data[i]!.rel.slice(4)}.crc`);
  }
  parts.sort((a, b) => byUtf8(a.rel, b.rel));
  return { parts, skipped };
}

/** Spellings of one folder: repeated separators, "./" and "/." inside, a trailing slash. */
export function spell(parent: string, a: string, b: string, how: number): string {
  switch (how % 6) {
    case 0:
      return `${parent}/${a}/${b}`;
    case 1:
      return `${parent}/${a}//${b}`;
    case 2:
      return `${parent}/./${a}/${b}`;
    case 3:
      return `${parent}/${a}/${b}/.`;
    case 4:
      return `${parent}/${a}/${b}/`;
    default:
      return `${parent}//${a}/./${b}//`;
  }
}

/* ==== S3 prefixes ==== */

/**
 * Pieces of keys. `./x` and `dir/./x` are stored by s3rver as `x` and `dir/x` (the path's dot segments are
 * resolved on the way), so the model keys are those (storedKey). A key with `//` cannot be stored in s3rver
 * at all (its PUT answers 404), so it is left out here; listing.ts's unit tests hold that spelling.
 */
const KEY_PIECES = ['a', './x', 'é', '中', 'ｆ', '😀', 'p q', 'n.1', 'u_v', 'dir/', '.d.'];
const S3_JUNK = ['_SUCCESS', 'x/_temporary/y.csv', '.hidden.csv', 'p.csv.crc', 'dir/', 'z/_committed_1'] as const;

export interface S3Layout {
  data: DataFile[];
  junk: string[];
}

export const s3Layout = (part: fc.Arbitrary<PartModel>): fc.Arbitrary<S3Layout> =>
  fc.record({
    data: fc.uniqueArray(
      fc.record({ pieces: fc.array(fc.constantFrom(...KEY_PIECES), { minLength: 1, maxLength: 3 }), part }).map(({ pieces, part: p }) => ({
        rel: storedKey(`${pieces.join('')}p${extOf(p)}`),
        part: p,
      })),
      { minLength: 1, maxLength: 4, selector: (d) => d.rel },
    ),
    junk: fc.subarray([...S3_JUNK]),
  });

/** A key as s3rver stores it: its "." segments resolved. */
export const storedKey = (key: string) =>
  key
    .split('/')
    .filter((s) => s !== '.')
    .join('/');

export const JUNK_BODY = (rel: string) => (rel.endsWith('/') ? '' : JUNK_TEXT);
