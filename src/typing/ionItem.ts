import type * as IonJs from 'ion-js';
import type { Reader } from 'ion-js';
import { lazyRequire } from '../shared/lazyRequire.js';
import { RowError } from '../shared/errors.js';
import { MAX_NESTING } from './jsonDepth.js';
import { makeSet, toNumberValue } from './json.js';
import { Temporal, temporalValue, type TimestampMode } from './temporal.js';
import type { Item } from '../shared/types.js';
import { setOwn } from '../shared/ownRecord.js';
import { CONDITION_FIELDS } from './itemCondition.js';

/** ion-js, loaded at the first Ion value: only Ion inputs need it, and it costs ~0.1 s of CPU to load. */
const ion = lazyRequire<typeof IonJs>('ion-js', 'reading Ion');

/** DynamoDB's annotations on Ion lists that hold sets, in ION exports (and what S3 import reads). */
const SET_ANNOTATIONS: Readonly<Record<string, 'SS' | 'NS' | 'BS'>> = { $dynamodb_SS: 'SS', $dynamodb_NS: 'NS', $dynamodb_BS: 'BS' };

/**
 * One Amazon Ion value, as DynamoDB writes it in ION exports (`$ion_1_0 {Item:{...}}`, one value per
 * line; a bare struct is an item too) -> item. Decimals and integers become N with every digit (no JS
 * double on the way), strings and symbols S, blobs and clobs B, bools BOOL, nulls NULL, lists L, structs
 * M, and lists annotated $dynamodb_SS / $dynamodb_NS / $dynamodb_BS the sets. A float becomes N by its
 * shortest exact text; a timestamp is ISO-8601 text (or epoch with --timestamps). Pure: the text is the
 * record's raw line, so the export-folder reader can call this for each line of a data file.
 */
export function itemFromIon(text: string, timestamps: TimestampMode = 'iso'): Item {
  let reader: Reader;
  let body: Item | undefined;
  // Outside the try: a package that cannot be loaded stops the run, it is not this line's fault.
  const { IonTypes, makeReader } = ion();
  try {
    reader = makeReader(text);
    const type = reader.next();
    if (type === null) throw new RowError('NOT_AN_OBJECT', 'the line holds no Ion value');
    if (type !== IonTypes.STRUCT || reader.isNull())
      throw new RowError('NOT_AN_OBJECT', `each value must be an Ion struct such as {Item:{pk:"a"}}, got ${reader.isNull() ? 'null' : type.name}`);
    body = structItem(reader, timestamps);
    if (reader.next() !== null) throw new RowError('ION_SYNTAX', 'the line holds more than one Ion value; write one item per line, as DynamoDB exports do');
  } catch (error) {
    if (error instanceof RowError) throw error;
    throw new RowError('ION_SYNTAX', `invalid Ion: ${(error as Error).message}`);
  }
  return body;
}

/** The struct the reader is on -> item, unwrapping DynamoDB's `{Item:{...}}`. */
function structItem(reader: Reader, timestamps: TimestampMode): Item {
  const item = structValue(reader, '', timestamps, 0);
  const names = Object.keys(item);
  // {Item:{...}, ConditionExpression:"..."}: a row's own condition, as a DynamoDB JSON line may carry one. An Ion
  // line's is not applied, so the row is refused rather than written without it (or as an item named so).
  if (names.length > 1 && names.includes('Item') && names.some((n) => CONDITION_FIELDS.includes(n)))
    throw new RowError(
      'ITEM_CONDITION',
      `the line carries its own condition (${names.filter((n) => n !== 'Item').join(', ')} beside Item), which ddb-spread applies from DynamoDB JSON lines only (--item-conditions): convert the lines to DynamoDB JSON, or remove those fields to write the items unconditionally`,
      names.find((n) => CONDITION_FIELDS.includes(n)),
    );
  const inner = names.length === 1 && names[0] === 'Item' ? item.Item : undefined;
  return typeof inner === 'object' && inner !== null && !Array.isArray(inner) && !(inner instanceof Uint8Array) && !(inner instanceof Set)
    ? (inner as Item)
    : item;
}

function structValue(reader: Reader, path: string, timestamps: TimestampMode, level: number): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  reader.stepIn();
  for (let type = reader.next(); type !== null; type = reader.next()) {
    const name = reader.fieldName() ?? '';
    const field = path === '' ? name : `${path}.${name}`;
    setOwn(out, name, ionValue(reader, field, timestamps, level + 1));
  }
  reader.stepOut();
  return out;
}

/** An Ion number is read as a number before --types applies: its fix is in the input. */
const ION_NUMBER_FIX = 'write it as an Ion string ("...") to keep every digit as text';

function ionValue(reader: Reader, field: string, timestamps: TimestampMode, level: number): unknown {
  const { IonTypes } = ion();
  const type = reader.type()!;
  if (reader.isNull()) return null;
  switch (type) {
    case IonTypes.BOOL:
      return reader.booleanValue();
    case IonTypes.INT:
      return toNumberValue(reader.bigIntValue()!.toString(), field, ION_NUMBER_FIX);
    case IonTypes.DECIMAL: {
      const decimal = reader.decimalValue()!;
      return toNumberValue(`${decimal.getCoefficient().toString()}E${decimal.getExponent()}`, field, ION_NUMBER_FIX);
    }
    case IonTypes.FLOAT: {
      const value = reader.numberValue()!;
      if (!Number.isFinite(value)) throw new RowError('TYPE_ERROR', `"${field}" is ${value}, which DynamoDB cannot store as a number`, field);
      return toNumberValue(String(value), field);
    }
    case IonTypes.TIMESTAMP: {
      const ts = reader.timestampValue()!;
      return timestamps === 'iso' ? ts.toString() : temporalValue(new Temporal('ms', BigInt(ts.getDate().getTime())), timestamps, field);
    }
    case IonTypes.STRING:
    case IonTypes.SYMBOL:
      return reader.stringValue();
    case IonTypes.BLOB:
    case IonTypes.CLOB:
      return new Uint8Array(reader.uInt8ArrayValue()!);
    case IonTypes.STRUCT:
      if (level > MAX_NESTING) throw tooDeep(field);
      return structValue(reader, field, timestamps, level);
    case IonTypes.LIST:
    case IonTypes.SEXP:
      if (level > MAX_NESTING) throw tooDeep(field);
      return listValue(reader, field, timestamps, level);
  }
  throw new RowError('TYPE_ERROR', `"${field}" is an Ion ${type.name}, which has no DynamoDB type`, field);
}

function listValue(reader: Reader, field: string, timestamps: TimestampMode, level: number): unknown {
  const setType = reader
    .annotations()
    .map((a) => SET_ANNOTATIONS[a])
    .find((t) => t !== undefined);
  const elements: unknown[] = [];
  reader.stepIn();
  for (let type = reader.next(); type !== null; type = reader.next()) elements.push(ionValue(reader, `${field}[${elements.length}]`, timestamps, level + 1));
  reader.stepOut();
  if (!setType) return elements;
  const texts = elements.map((e) => setElementText(e, setType, field));
  return makeSet(setType, texts, field);
}

/** A set element as the text makeSet takes: strings as they are, numbers by their digits, bytes as base64. */
function setElementText(element: unknown, type: 'SS' | 'NS' | 'BS', field: string): string {
  if (type === 'SS' && typeof element === 'string') return element;
  if (type === 'NS' && typeof element === 'object' && element !== null && 'value' in element) return String((element as { value: string }).value);
  if (type === 'BS' && element instanceof Uint8Array) return Buffer.from(element).toString('base64');
  throw new RowError(
    'TYPE_ERROR',
    `"${field}" is annotated as a ${type} set but holds ${element === null ? 'null' : typeof element === 'object' ? 'a nested value' : typeof element}`,
    field,
  );
}

function tooDeep(field: string): RowError {
  const top = /^[^.[]*/.exec(field)?.[0] ?? field;
  return new RowError('TOO_DEEP', `"${top}" is nested more than ${MAX_NESTING} levels deep; DynamoDB allows ${MAX_NESTING} levels of maps and lists`, top);
}
