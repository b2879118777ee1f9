/**
 * The adversarial inputs (pure): a row model -> the bytes of a CSV or JSON Lines file, with the
 * line each row starts on. Keys come from a small key space so primary keys repeat; attribute names,
 * values, quoting, line endings, BOM, gzip, blank lines and bad rows are drawn at random. Every row knows
 * its fate (written, or rejected with a code), which test/support/adversarialOracle.ts replays.
 *
 * The table is always pk (S) + sk (N). Every file has one N column and one JSON column (typed with
 * --types) plus 0-3 more columns of any kind, so each bad-row kind has a place to go.
 */
import fc from 'fast-check';
import { gzipSync } from 'node:zlib';

/** A JSON value with its numbers kept as canonical text and objects as entry lists (so `__proto__` is a plain key). */
export type JsonTree = string | boolean | null | { num: string } | { list: JsonTree[] } | { entries: [string, JsonTree][] };

export type ColumnKind = 'S' | 'N' | 'JSON';
export interface Column {
  name: string;
  kind: ColumnKind;
}

/** A cell: undefined is an empty CSV cell / an absent JSON property. */
export type CellValue = { kind: 'S'; text: string } | { kind: 'N'; text: string } | { kind: 'JSON'; value: JsonTree } | undefined;

/**
 * What makes a row bad, and the reject code it must get:
 * missingKey -> MISSING_KEY, badNumber -> TYPE_ERROR, syntax -> CSV_SYNTAX / JSON_SYNTAX, notObject -> NOT_AN_OBJECT (JSONL),
 * tooLarge -> ITEM_TOO_LARGE, invalidUtf8 -> INVALID_UTF8, tooDeep -> TOO_DEEP (see the oracle).
 */
export type BadKind = 'missingKey' | 'badNumber' | 'syntax' | 'notObject' | 'tooLarge' | 'invalidUtf8' | 'tooDeep';

export interface Row {
  pk: string;
  sk: number;
  /** One per column, in column order. */
  cells: CellValue[];
  bad?: BadKind;
  /** invalidUtf8: the bytes that follow pk in the key cell (not UTF-8). */
  invalidBytes?: number[];
  /** tooDeep: the nesting depth of the JSON column's value. */
  depth?: number;
}

export type Format = 'csv' | 'jsonl';
export type Quoting = 'minimal' | 'always' | 'random';

export interface FileModel {
  format: Format;
  columns: Column[];
  rows: Row[];
  quoting: Quoting;
  /** Per line (header first for CSV): true = CRLF. */
  crlf: boolean[];
  /** Blank lines before each row (its index). */
  blankBefore: number[];
  /** Per field, for quoting 'random'. */
  quoteCoins: boolean[];
  bom: boolean;
  gzip: boolean;
  trailingNewline: boolean;
}

/** Which hostile dimensions a generated file may use: 'plain' is what the loader handles today. */
export interface Profile {
  /** Object.prototype member names (constructor, __proto__, ...) as attribute and map names. */
  prototypeNames: boolean;
  /** LF and CRLF mixed within one file (else one ending per file). */
  mixedLineEndings: boolean;
  /** Rows whose key holds bytes that are not UTF-8. */
  invalidUtf8: boolean;
  /** JSON nested deeper than DynamoDB's 32 levels. */
  tooDeep: boolean;
  /** A 410 KB value (ITEM_TOO_LARGE): slow to send, off where many rows go over the wire again and again. */
  tooLarge: boolean;
  /** Gzip the file. */
  gzip: boolean;
  /** Format(s) to draw from. */
  formats: Format[];
  /** Rows per file. */
  minRows: number;
  maxRows: number;
  /** Share of bad rows, 0..1. */
  badShare: number;
}

export const PLAIN: Profile = {
  prototypeNames: false,
  mixedLineEndings: false,
  invalidUtf8: false,
  tooDeep: false,
  tooLarge: true,
  gzip: true,
  formats: ['csv', 'jsonl'],
  minRows: 1,
  maxRows: 40,
  badShare: 0.15,
};
export const HOSTILE: Profile = { ...PLAIN, prototypeNames: true, mixedLineEndings: true, invalidUtf8: true, tooDeep: true };

export const KEY_SCHEMA = { partitionKey: { name: 'pk', type: 'S' as const }, sortKey: { name: 'sk', type: 'N' as const } };

/** Partition key values: few, so keys repeat; quotes, commas, spaces and astral characters included. */
const PLAIN_PKS = ['a', 'b', 'c', 'ü', '𝔸', 'a b', 'x"y', 'k,1', 'B'];
/** With invalid UTF-8 on: a legitimate key that a U+FFFD substitution of an invalid byte would collide with. */
const HOSTILE_PKS = [...PLAIN_PKS, 'B\uFFFD'];
/** Names without ',' or ':' so they can stand in --types. */
const PLAIN_TYPED_NAMES = ['qty', 'price', 'data', 'Straße', '名前', 'a b', 'n_1'];
const PLAIN_NAMES = [...PLAIN_TYPED_NAMES, 'note', 'x,y', 'say "hi"', '😀', 'city'];
const PROTOTYPE_NAMES = ['constructor', '__proto__', 'toString', 'valueOf', 'hasOwnProperty', 'isPrototypeOf', '__defineGetter__'];

/** Characters of string values: quotes, delimiters, CRLF and LF (never a lone CR, see the oracle), unicode incl. astral. */
const VALUE_UNITS = ['a', 'b', 'z', ' ', '"', ',', ';', '\t', '\n', '\r\n', 'é', '中', '😀', '𝔸', '\\', '|', '{', '[', "'", '#', '0'];

export const stringValue = fc.array(fc.constantFrom(...VALUE_UNITS), { maxLength: 8 }).map((units) => units.join(''));

/** Canonical DynamoDB numbers (as DynamoDB returns them): no leading/trailing zeros, no "-0", up to 38 digits. */
export const numberText = fc.oneof(
  fc.integer({ min: -1_000_000, max: 1_000_000 }).map(String),
  fc.tuple(fc.boolean(), fc.integer({ min: 0, max: 99_999 }), fc.integer({ min: 1, max: 9_999 })).map(([neg, i, f]) => {
    const frac = String(f).padStart(4, '0').replace(/0+$/, '');
    return `${neg ? '-' : ''}${i}.${frac}`;
  }),
  // 38 significant digits: no JS double holds this.
  fc
    .tuple(fc.boolean(), fc.integer({ min: 1, max: 9 }), fc.array(fc.integer({ min: 0, max: 9 }), { minLength: 37, maxLength: 37 }))
    .map(([neg, first, rest]) => `${neg ? '-' : ''}${first}${rest.join('')}`),
);

function jsonTree(names: string[]): fc.Arbitrary<JsonTree> {
  const { tree } = fc.letrec<{ tree: JsonTree }>((tie) => ({
    tree: fc.oneof(
      { depthSize: 'small', withCrossShrink: true },
      stringValue,
      fc.boolean(),
      fc.constant(null),
      numberText.map((num) => ({ num })),
      fc.array(tie('tree'), { maxLength: 3 }).map((list) => ({ list })),
      fc.uniqueArray(fc.tuple(fc.constantFrom(...names), tie('tree')), { maxLength: 3, selector: ([k]) => k }).map((entries) => ({ entries })),
    ),
  }));
  return tree;
}

function cellFor(column: Column, names: string[]): fc.Arbitrary<CellValue> {
  const value: fc.Arbitrary<CellValue> =
    column.kind === 'S'
      ? stringValue.map((text) => ({ kind: 'S' as const, text }))
      : column.kind === 'N'
        ? numberText.map((text) => ({ kind: 'N' as const, text }))
        : jsonTree(names).map((value) => ({ kind: 'JSON' as const, value }));
  return fc.option(value, { nil: undefined, freq: 6 });
}

export function fileModel(profile: Profile): fc.Arbitrary<FileModel> {
  const names = profile.prototypeNames ? [...PLAIN_NAMES, ...PROTOTYPE_NAMES] : PLAIN_NAMES;
  const typedNames = profile.prototypeNames ? [...PLAIN_TYPED_NAMES, ...PROTOTYPE_NAMES] : PLAIN_TYPED_NAMES;
  const pks = profile.invalidUtf8 ? HOSTILE_PKS : PLAIN_PKS;
  const badKinds: BadKind[] = ['missingKey', 'badNumber', 'syntax'];
  if (profile.tooLarge) badKinds.push('tooLarge');
  if (profile.invalidUtf8) badKinds.push('invalidUtf8');
  if (profile.tooDeep) badKinds.push('tooDeep');

  const columnsArb = fc
    .tuple(
      fc.uniqueArray(fc.constantFrom(...typedNames), { minLength: 2, maxLength: 2 }),
      fc.uniqueArray(fc.tuple(fc.constantFrom(...names), fc.constantFrom<ColumnKind>('S', 'S', 'N', 'JSON')), { maxLength: 3, selector: ([n]) => n }),
    )
    .map(([[nName, jsonName], extra]) => {
      const columns: Column[] = [
        { name: nName!, kind: 'N' },
        { name: jsonName!, kind: 'JSON' },
      ];
      for (const [name, kind] of extra) {
        // Extra typed columns must be nameable in --types; the rest are strings.
        if (columns.some((c) => c.name === name)) continue;
        columns.push({ name, kind: kind !== 'S' && !typedNames.includes(name) ? 'S' : kind });
      }
      return columns;
    });

  return fc.constantFrom(...profile.formats).chain((format) =>
    columnsArb.chain((columns) => {
      const row: fc.Arbitrary<Row> = fc
        .record({
          pk: fc.constantFrom(...pks),
          sk: fc.integer({ min: 0, max: 3 }),
          cells: fc.tuple(...columns.map((c) => cellFor(c, names))),
          // Unbiased: fast-check leans towards small numbers, which would make most rows bad.
          badCoin: fc.noBias(fc.integer({ min: 0, max: 9_999 })).map((i) => i / 10_000),
          bad: fc.constantFrom(...badKinds, ...(format === 'jsonl' ? (['notObject'] as BadKind[]) : [])),
          invalidBytes: fc.constantFrom<number[]>([0xff], [0xfe], [0xc3], [0xed, 0xa0, 0x80], [0xc0, 0xaf]),
          depth: fc.constantFrom(40, 3000),
        })
        .map(({ pk, sk, cells, badCoin, bad, invalidBytes, depth }): Row => {
          if (badCoin >= profile.badShare) return { pk, sk, cells };
          if (bad === 'invalidUtf8') return { pk: 'B', sk, cells, bad, invalidBytes };
          if (bad === 'tooDeep') return { pk, sk, cells, bad, depth };
          return { pk, sk, cells, bad };
        });
      return fc.array(row, { minLength: profile.minRows, maxLength: profile.maxRows }).chain((rows) => {
        const lines = rows.length + 1;
        return fc.record({
          format: fc.constant(format),
          columns: fc.constant(columns),
          rows: fc.constant(rows),
          quoting: fc.constantFrom<Quoting>('minimal', 'always', 'random'),
          crlf: profile.mixedLineEndings
            ? fc.array(fc.boolean(), { minLength: lines, maxLength: lines })
            : fc.boolean().map((c) => Array<boolean>(lines).fill(c)),
          blankBefore: fc.array(fc.constantFrom(0, 0, 0, 0, 0, 1, 2), { minLength: rows.length, maxLength: rows.length }),
          quoteCoins: fc.array(fc.boolean(), { minLength: lines * (columns.length + 3), maxLength: lines * (columns.length + 3) }),
          bom: fc.boolean(),
          gzip: profile.gzip ? fc.boolean() : fc.constant(false),
          trailingNewline: fc.boolean(),
        });
      });
    }),
  );
}

/* ==== serialisation ==== */

export interface SerializedFile {
  /** The file's bytes (gzipped when the model says so). */
  bytes: Buffer;
  /** The 1-based line each row starts on, by row index. */
  lines: number[];
  /** --types for the file: the N column and the JSON column (and any extra typed ones). */
  types: Record<string, 'N' | 'JSON'>;
}

/** A big value: the item goes over DynamoDB's 400 KB. */
export const TOO_LARGE_TEXT = 'x'.repeat(410 * 1024);

/** Own-property assignment, safe for a name like `__proto__`. */
export function setOwn<T>(target: Record<string, T>, name: string, value: T): void {
  Object.defineProperty(target, name, { value, enumerable: true, writable: true, configurable: true });
}

/** --types of a file: N columns, and for CSV the JSON columns (JSON Lines values are JSON already; a JSON type there would parse strings again). */
export function typesOf(columns: Column[], format: Format): Record<string, 'N' | 'JSON'> {
  const types: Record<string, 'N' | 'JSON'> = {};
  for (const c of columns) if (c.kind === 'N' || (c.kind === 'JSON' && format === 'csv')) setOwn(types, c.name, c.kind);
  return types;
}

export function jsonText(tree: JsonTree): string {
  if (typeof tree === 'string' || typeof tree === 'boolean' || tree === null) return JSON.stringify(tree);
  if ('num' in tree) return tree.num;
  if ('list' in tree) return `[${tree.list.map(jsonText).join(',')}]`;
  return `{${tree.entries.map(([k, v]) => `${JSON.stringify(k)}:${jsonText(v)}`).join(',')}}`;
}

const deepJson = (depth: number) => `${'['.repeat(depth)}1${']'.repeat(depth)}`;

/** Line breaks a text spans: "\n" and "\r\n" count once (no lone CR is generated). */
const breaksIn = (text: string) => (text.match(/\n/g) ?? []).length;

/** A byte piece of a line: text, or raw bytes (invalid UTF-8). */
type Piece = string | Buffer;

export function serialize(model: FileModel): SerializedFile {
  const parts: Piece[] = [];
  const lines: number[] = [];
  let line = 1;
  let coin = 0;
  const eol = (i: number) => (model.crlf[i] ? '\r\n' : '\n');
  const emit = (pieces: Piece[], lineIndex: number, last: boolean) => {
    for (const p of pieces) {
      parts.push(p);
      if (typeof p === 'string') line += breaksIn(p);
    }
    if (!last || model.trailingNewline) parts.push(eol(lineIndex));
    line++;
  };

  if (model.bom) parts.push('\uFEFF');
  if (model.format === 'csv') {
    const field = (text: string): string => {
      const needs = /[",\r\n]/.test(text);
      const quote = needs || model.quoting === 'always' || (model.quoting === 'random' && model.quoteCoins[coin++ % model.quoteCoins.length] === true);
      return quote ? `"${text.replace(/"/g, '""')}"` : text;
    };
    const header = ['pk', 'sk', ...model.columns.map((c) => c.name)].map(field).join(',');
    emit([header], 0, model.rows.length === 0);
    model.rows.forEach((row, r) => {
      for (let b = 0; b < (model.blankBefore[r] ?? 0); b++) emit([], r + 1, false);
      lines.push(line);
      const cells = model.columns.map((c, i) => field(csvCell(row, c, i)));
      const key = field(row.bad === 'missingKey' ? '' : row.pk);
      const quoted = key.startsWith('"');
      const pieces: Piece[] =
        row.bad === 'invalidUtf8'
          ? [Buffer.concat([Buffer.from(quoted ? key.slice(0, -1) : key), Buffer.from(row.invalidBytes ?? [0xff]), Buffer.from(quoted ? '"' : '')])]
          : [key];
      // A record with one field too many: csv-parse reports it (CSV_SYNTAX).
      if (row.bad === 'syntax') cells.push('extra');
      pieces.push(`,${field(String(row.sk))},${cells.join(',')}`);
      emit(pieces, r + 1, r === model.rows.length - 1);
    });
  } else {
    model.rows.forEach((row, r) => {
      for (let b = 0; b < (model.blankBefore[r] ?? 0); b++) emit([], r, false);
      lines.push(line);
      emit(jsonLine(row, model.columns), r, r === model.rows.length - 1);
    });
  }
  const raw = Buffer.concat(parts.map((p) => (typeof p === 'string' ? Buffer.from(p, 'utf8') : p)));
  return { bytes: model.gzip ? gzipSync(raw) : raw, lines, types: typesOf(model.columns, model.format) };
}

function csvCell(row: Row, column: Column, index: number): string {
  if (index === 0 && row.bad === 'badNumber') return '12x';
  if (index === 1 && row.bad === 'tooDeep') return deepJson(row.depth ?? 40);
  if (index === 1 && row.bad === 'tooLarge') return JSON.stringify(TOO_LARGE_TEXT);
  const cell = row.cells[index];
  if (cell === undefined) return '';
  if (cell.kind === 'JSON') return jsonText(cell.value);
  return cell.text;
}

function jsonLine(row: Row, columns: Column[]): Piece[] {
  if (row.bad === 'syntax') return [`{"pk":${JSON.stringify(row.pk)},"sk":${row.sk},`];
  if (row.bad === 'notObject') return [`[${JSON.stringify(row.pk)},${row.sk}]`];
  const pieces: Piece[] = ['{'];
  if (row.bad === 'invalidUtf8')
    pieces.push(Buffer.concat([Buffer.from(`"pk":${JSON.stringify(row.pk).slice(0, -1)}`), Buffer.from(row.invalidBytes ?? [0xff]), Buffer.from('",')]));
  else if (row.bad !== 'missingKey') pieces.push(`"pk":${JSON.stringify(row.pk)},`);
  pieces.push(`"sk":${row.sk}`);
  columns.forEach((column, i) => {
    const name = JSON.stringify(column.name);
    if (i === 0 && row.bad === 'badNumber') return pieces.push(`,${name}:"12x"`);
    if (i === 1 && row.bad === 'tooDeep') return pieces.push(`,${name}:${deepJson(row.depth ?? 40)}`);
    if (i === 1 && row.bad === 'tooLarge') return pieces.push(`,${name}:${JSON.stringify(TOO_LARGE_TEXT)}`);
    const cell = row.cells[i];
    if (cell === undefined) return;
    pieces.push(`,${name}:${cell.kind === 'S' ? JSON.stringify(cell.text) : cell.kind === 'N' ? cell.text : jsonText(cell.value)}`);
  });
  pieces.push('}');
  return pieces;
}

/** Splits bytes into random chunks (chunk boundaries inside multi-byte characters and CRLF pairs included). */
export function chunked(bytes: Buffer, cuts: number[]): Buffer[] {
  const points = [...new Set(cuts.map((c) => Math.floor(c * bytes.length)))].filter((p) => p > 0 && p < bytes.length).sort((a, b) => a - b);
  const out: Buffer[] = [];
  let start = 0;
  for (const p of points) {
    out.push(bytes.subarray(start, p));
    start = p;
  }
  out.push(bytes.subarray(start));
  return out;
}
