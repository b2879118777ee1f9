import { LoaderError } from '../shared/errors.js';

/**
 * What a JSON input is, from its first bytes. JSON Lines is one object per line; what people have at
 * hand is often one JSON document instead, which read as lines is rejected line by line. Pure.
 *
 * - `lines`: JSON Lines (or not JSON at all: left to the line reader, which says so row by row).
 * - `array`: `[{...}, {...}]`, a JSON array of items (jq -s, many exports and APIs). Read, element by
 *   element (jsonDocument.ts): streaming costs nothing more than lines, and an element is an item as a
 *   line would be.
 * - `scan`: `aws dynamodb scan` or `query` output, `{"Items": [...], "Count": ...}`. Read, its Items as
 *   DynamoDB JSON: the CLI writes every value typed, so no type is guessed.
 * - `requests`: a `batch-write-item --request-items` file, `{"Table": [{"PutRequest": {"Item": ...}}]}`.
 *   Refused with the conversion: it names its own table, which may not be --table, and mixes puts and
 *   deletes; loading it as it stands would either ignore the table it names or guess. It holds at most
 *   25 requests (the API's limit) per table, so converting it costs nothing.
 * - `document`: any other JSON value spread over several lines (pretty-printed): refused, with jq -c.
 */
export type JsonShape = 'lines' | 'array' | 'scan' | 'requests' | 'document';

/** The shape of JSON text from its first bytes (a BOM and blank space before it skipped). */
export function jsonShapeOf(head: string): JsonShape {
  const text = head.replace(/^\uFEFF/, '').trimStart();
  if (!text.startsWith('[') && !text.startsWith('{')) return 'lines';
  // A first line that is a whole value with more after it is JSON Lines, whatever that value is (a bad
  // line that is an array is rejected as one row, as before; never read as a document and its items written).
  if (closesOnFirstLineWithMore(text)) return 'lines';
  // An array of items holds objects: one that opens with anything else (`["a",0]`) is a bad line, one row.
  if (text.startsWith('[')) return /^\[\s*(?:\{|\]|$)/.test(text) ? 'array' : 'lines';
  // Items holding DynamoDB JSON (as the CLI writes them), or none: a JSON line with an "Items" list first stays a line.
  if (/^\{\s*"Items"\s*:\s*\[\s*(?:\]|\{\s*"(?:[^"\\]|\\.)*"\s*:\s*\{\s*"(?:S|N|B|BOOL|NULL|M|L|SS|NS|BS)"\s*:)/.test(text)) return 'scan';
  if (/^\{\s*"(?:[^"\\]|\\.)+"\s*:\s*\[\s*\{\s*"(?:PutRequest|DeleteRequest)"\s*:/.test(text)) return 'requests';
  // A JSON line is a whole object on one line: a first line that is only "{" (or opens its first
  // attribute's object or array and ends there) is a document written over several lines.
  if (/^\{[ \t]*\r?\n/.test(text) || /^\{\s*"(?:[^"\\\n]|\\.)*"\s*:\s*[[{]\s*\r?\n/.test(text)) return 'document';
  return 'lines';
}

/** Whether the value opening `text` closes on its first line and something but blank space follows that line. */
function closesOnFirstLineWithMore(text: string): boolean {
  let depth = 0;
  let inString = false;
  let escaped = false;
  for (let i = 0; i < text.length; i++) {
    const c = text[i]!;
    if (inString) {
      if (escaped) escaped = false;
      else if (c === '\\') escaped = true;
      else if (c === '"') inString = false;
    } else if (c === '"') inString = true;
    else if (c === '{' || c === '[') depth++;
    else if (c === '}' || c === ']') {
      depth--;
      if (depth === 0) {
        const rest = text.slice(i + 1);
        const lineEnd = rest.indexOf('\n');
        // The value closed on line 1: JSON Lines when another line holds something.
        return !inLine(text, i) ? false : lineEnd !== -1 && rest.slice(lineEnd + 1).trim() !== '';
      }
    } else if (c === '\n') return false;
  }
  return false;
}

/** Whether position `at` is on the first line of `text`. */
function inLine(text: string, at: number): boolean {
  const end = text.indexOf('\n');
  return end === -1 || at < end;
}

/** The refusal of a shape that is not read, naming the file, what it is and the command that converts it. */
export function refuseJsonShape(shape: 'requests' | 'document', file: string, head: string): LoaderError {
  if (shape === 'requests') {
    const table = /^\s*\{\s*"((?:[^"\\]|\\.)+)"/.exec(head.replace(/^\uFEFF/, ''))?.[1] ?? 'Table';
    const key = JSON.stringify(JSON.parse(`"${table}"`) as string);
    return new LoaderError(
      'INPUT_HEADER',
      `${file} is a batch-write-item request file (aws dynamodb batch-write-item --request-items), not items: it names its table (${key}) and holds PutRequest and DeleteRequest entries. Convert its puts to DynamoDB JSON lines and load those: jq -c '.[${shellQuoted(key)}][] | .PutRequest.Item // empty' ${shellArg(file)} > items.jsonl, then ddb-spread load items.jsonl --input-format ddb-json (its deletes: '.DeleteRequest.Key // empty' and --delete)`,
      { file },
    );
  }
  return new LoaderError(
    'INPUT_HEADER',
    `${file} is one JSON document written over several lines, not JSON Lines (one item per line). Write each item on a line of its own, e.g. jq -c '.' ${shellArg(file)} for one object, or jq -c '.[]' for a list held in an attribute (jq -c '.Items[]' ...)`,
    { file },
  );
}

/** A table name as jq's string literal inside single shell quotes (a quote in it closes and reopens them). */
function shellQuoted(jsonString: string): string {
  return jsonString.replace(/'/g, `'\\''`);
}

function shellArg(path: string): string {
  return /^[\w./@:+-]+$/.test(path) ? path : `'${path.replace(/'/g, `'\\''`)}'`;
}
