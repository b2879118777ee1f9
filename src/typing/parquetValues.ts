import { NumberValue } from '@aws-sdk/lib-dynamodb';
import type { FileMetaData, SchemaElement, SchemaTree } from 'hyparquet';
import { decimalText } from './temporal.js';
import { InvalidText } from './typedValues.js';

/**
 * What a Parquet column needs after hyparquet has decoded it: DECIMAL columns are read as their unscaled
 * integers (their annotation is taken off the schema, since hyparquet would make a JS double of them) and
 * scaled here exactly; FLOAT columns get the shortest text that is the same 32-bit float; ENUM bytes are
 * text. Lists, maps and structs carry their children's needs.
 */
export type ParquetShape =
  | { kind: 'plain' }
  | { kind: 'decimal'; scale: number }
  | { kind: 'float32' }
  | { kind: 'text' }
  | { kind: 'list'; element: ParquetShape }
  | { kind: 'map'; value: ParquetShape }
  | { kind: 'struct'; fields: ReadonlyMap<string, ParquetShape> };

const PLAIN: ParquetShape = { kind: 'plain' };

export function isDecimalElement(element: SchemaElement): boolean {
  return element.converted_type === 'DECIMAL' || element.logical_type?.type === 'DECIMAL';
}

/** The file's metadata with DECIMAL annotations removed, for hyparquet to hand back unscaled integers. */
export function withoutDecimalAnnotations(metadata: FileMetaData): FileMetaData {
  const schema = metadata.schema.map((element) => {
    if (!isDecimalElement(element)) return element;
    const { converted_type: _c, logical_type: _l, ...rest } = element;
    return rest;
  });
  return { ...metadata, schema };
}

/** The shape of each top-level column, by name. */
export function columnShapes(root: SchemaTree): Map<string, ParquetShape> {
  return new Map(root.children.map((child) => [child.element.name, shapeOf(child)]));
}

function shapeOf(node: SchemaTree): ParquetShape {
  const { element, children } = node;
  if (children.length === 0) return leafShape(element);
  const only = children.length === 1 ? children[0]! : undefined;
  if (element.converted_type === 'LIST' && only && only.element.repetition_type === 'REPEATED' && only.children.length <= 1) {
    return { kind: 'list', element: shapeOf(only.children.length === 1 ? only.children[0]! : only) };
  }
  if ((element.converted_type === 'MAP' || element.converted_type === 'MAP_KEY_VALUE') && only && only.children.length === 2) {
    const value = only.children.find((c) => c.element.name === 'value') ?? only.children[1]!;
    return { kind: 'map', value: shapeOf(value) };
  }
  return { kind: 'struct', fields: columnShapes(node) };
}

function leafShape(element: SchemaElement): ParquetShape {
  if (isDecimalElement(element)) {
    const scale = element.logical_type?.type === 'DECIMAL' ? element.logical_type.scale : (element.scale ?? 0);
    return { kind: 'decimal', scale };
  }
  if (element.type === 'FLOAT') return { kind: 'float32' };
  if (element.converted_type === 'ENUM' || element.logical_type?.type === 'ENUM') return { kind: 'text' };
  return PLAIN;
}

/** Applies a column's shape to a decoded value (repeated leaves come as arrays of the leaf's values). */
export function shapeValue(value: unknown, shape: ParquetShape): unknown {
  if (value === null || value === undefined || shape.kind === 'plain') return value;
  if (Array.isArray(value)) {
    const inner = shape.kind === 'list' ? shape.element : shape;
    return value.map((element) => shapeValue(element, inner));
  }
  switch (shape.kind) {
    case 'decimal':
      return new NumberValue(decimalText(unscaled(value), shape.scale));
    case 'float32':
      return typeof value === 'number' ? float32Text(value) : value;
    case 'text':
      return value instanceof Uint8Array ? strictText(value) : value;
    case 'list':
      return value;
    case 'map':
    case 'struct': {
      if (typeof value !== 'object') return value;
      const out: Record<string, unknown> = {};
      for (const [name, element] of Object.entries(value as Record<string, unknown>)) {
        const inner = shape.kind === 'map' ? shape.value : (shape.fields.get(name) ?? PLAIN);
        Object.defineProperty(out, name, { value: shapeValue(element, inner), enumerable: true, writable: true, configurable: true });
      }
      return out;
    }
  }
}

/** An unscaled DECIMAL: INT32 (number), INT64 (bigint) or big-endian two's-complement bytes. */
function unscaled(value: unknown): bigint {
  if (typeof value === 'bigint') return value;
  if (typeof value === 'number') return BigInt(value);
  const bytes = value as Uint8Array;
  if (bytes.length === 0) return 0n;
  let n = 0n;
  for (const byte of bytes) n = (n << 8n) | BigInt(byte);
  return bytes[0]! & 0x80 ? n - (1n << BigInt(bytes.length * 8)) : n;
}

/** The shortest decimal text that reads back as the same 32-bit float (0.1f is "0.1", not 0.10000000149011612). */
export function float32Text(value: number): NumberValue | number {
  if (!Number.isFinite(value)) return value;
  for (let precision = 1; precision <= 9; precision++) {
    const text = value.toPrecision(precision);
    if (Math.fround(Number(text)) === value) return new NumberValue(text);
  }
  return value;
}

/** UTF-8 text, or InvalidText (the row is rejected) when the bytes are not UTF-8. */
function strictText(bytes: Uint8Array): string | InvalidText {
  try {
    return new TextDecoder('utf-8', { fatal: true }).decode(bytes);
  } catch {
    return new InvalidText(bytes);
  }
}
