import { NumberValue } from '@aws-sdk/lib-dynamodb';
import { Temporal } from '../typing/temporal.js';
import { InvalidJson, InvalidText } from '../typing/typedValues.js';

/**
 * A typed row's values across a thread boundary (postMessage's structured clone), pure. The clone keeps
 * strings, numbers, bigints, booleans, null, arrays, plain objects, Uint8Array and Map, but drops a class
 * instance's prototype: the typing stage tells a Temporal, a NumberValue, an InvalidText or an
 * InvalidJson by `instanceof`. Each is sent as a Map of one entry (a Parquet row holds no Map of its own:
 * hyparquet reads MAP columns as objects), and the receiver builds it again. Own keys such as "__proto__"
 * are kept as own properties on both sides.
 */

type Tag = 'temporal' | 'number' | 'invalid-text' | 'invalid-json' | 'set';

/** The value as the clone keeps it (sender's side). */
export function packValue(value: unknown): unknown {
  if (value === null || typeof value !== 'object') return value;
  if (value instanceof Uint8Array) return value;
  if (Array.isArray(value)) return value.map(packValue);
  if (value instanceof Temporal) return tagged('temporal', [value.unit, value.count]);
  if (value instanceof NumberValue) return tagged('number', value.value);
  if (value instanceof InvalidText) return tagged('invalid-text', value.bytes);
  if (value instanceof InvalidJson) return tagged('invalid-json', [value.text, value.reason]);
  if (value instanceof Set) return tagged('set', [...value].map(packValue));
  if (value instanceof Map) throw new Error('a Map in a Parquet row: not expected from hyparquet');
  return eachOwn(value as Record<string, unknown>, packValue);
}

/** The value as it was before packValue (receiver's side). */
export function unpackValue(value: unknown): unknown {
  if (value === null || typeof value !== 'object') return value;
  if (value instanceof Uint8Array) return value;
  if (Array.isArray(value)) return value.map(unpackValue);
  if (value instanceof Map) {
    const [[tag, body]] = [...(value as Map<Tag, unknown>)] as [[Tag, unknown]];
    switch (tag) {
      case 'temporal': {
        const [unit, count] = body as [Temporal['unit'], bigint];
        return new Temporal(unit, count);
      }
      case 'number':
        return new NumberValue(body as string);
      case 'invalid-text':
        return new InvalidText(body as Uint8Array);
      case 'invalid-json': {
        const [text, reason] = body as [string, string];
        return new InvalidJson(text, reason);
      }
      case 'set':
        return new Set((body as unknown[]).map(unpackValue));
    }
  }
  return eachOwn(value as Record<string, unknown>, unpackValue);
}

function tagged(tag: Tag, body: unknown): Map<Tag, unknown> {
  return new Map([[tag, body]]);
}

/** A plain object with `map` applied to each own value; keys such as "__proto__" stay own properties. */
function eachOwn(value: Record<string, unknown>, map: (v: unknown) => unknown): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [name, element] of Object.entries(value)) {
    Object.defineProperty(out, name, { value: map(element), enumerable: true, writable: true, configurable: true });
  }
  return out;
}
