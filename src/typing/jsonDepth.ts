import { RowError } from '../shared/errors.js';

/** DynamoDB's limit on nested attributes (maps and lists inside one another). */
export const MAX_NESTING = 32;

/**
 * Checks, before any parser sees it, that JSON text nests no deeper than `maxDepth` brackets. JSON.parse,
 * lossless-json and every recursive walk after them would otherwise overflow the stack on a row nested
 * thousands deep. One pass over the characters, strings skipped (a bracket inside a string is text).
 * Throws TOO_DEEP naming the top-level attribute it happens under, when the text is an object.
 */
export function checkJsonDepth(text: string, maxDepth: number, what = 'the value'): void {
  // Text can nest no deeper than it has opening brackets: most rows have a few, counted natively.
  if (openingBracketsAtMost(text, maxDepth)) return;
  scanJsonDepth(text, maxDepth, what);
}

/** Whether `text` holds at most `limit` opening brackets (`{` and `[`, in strings too: an upper bound). */
export function openingBracketsAtMost(text: string, limit: number): boolean {
  let n = 0;
  for (let i = text.indexOf('{'); i !== -1; i = text.indexOf('{', i + 1)) if (++n > limit) return false;
  for (let i = text.indexOf('['); i !== -1; i = text.indexOf('[', i + 1)) if (++n > limit) return false;
  return true;
}

/** checkJsonDepth's full pass (exported for its tests). */
export function scanJsonDepth(text: string, maxDepth: number, what = 'the value'): void {
  let depth = 0;
  /** Start of the last string that began directly inside the top-level object: the attribute. */
  let lastTopString = -1;
  let attributeAt = -1;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c === 0x22) {
      if (depth === 1) lastTopString = i;
      for (i++; i < text.length; i++) {
        const s = text.charCodeAt(i);
        if (s === 0x5c) i++;
        else if (s === 0x22) break;
      }
    } else if (c === 0x7b || c === 0x5b) {
      if (depth === 1) attributeAt = lastTopString;
      if (++depth > maxDepth) {
        const field = text.charCodeAt(0) === 0x7b || text.trimStart().charCodeAt(0) === 0x7b ? attributeName(text, attributeAt) : undefined;
        throw new RowError(
          'TOO_DEEP',
          `${field === undefined ? what : `"${field}"`} is nested more than ${maxDepth} levels deep; DynamoDB allows ${MAX_NESTING} levels of maps and lists`,
          field,
        );
      }
    } else if (c === 0x7d || c === 0x5d) {
      depth--;
    }
  }
}

function attributeName(text: string, start: number): string | undefined {
  if (start < 0) return undefined;
  let end = start + 1;
  while (end < text.length && text.charCodeAt(end) !== 0x22) end += text.charCodeAt(end) === 0x5c ? 2 : 1;
  try {
    const name = JSON.parse(text.slice(start, end + 1)) as unknown;
    return typeof name === 'string' ? name : undefined;
  } catch {
    return undefined;
  }
}

/**
 * The top-level attribute of the JSON object text whose name or value holds character `index`, for a
 * message about a problem found in the raw text (bytes that are not UTF-8). Undefined when the text is
 * not an object or the position is outside any attribute. Only the text before `index` is read.
 */
export function attributeAt(text: string, index: number): string | undefined {
  let depth = 0;
  let expectKey = false;
  let key: string | undefined;
  for (let i = 0; i < text.length && i < index; i++) {
    const c = text.charCodeAt(i);
    if (c === 0x22) {
      const start = i;
      for (i++; i < text.length; i++) {
        const s = text.charCodeAt(i);
        if (s === 0x5c) i++;
        else if (s === 0x22) break;
      }
      if (depth === 1 && expectKey) {
        // The position is inside the name itself: the name is what is broken.
        if (i >= index) return undefined;
        key = attributeName(text, start);
        expectKey = false;
      }
    } else if (c === 0x7b || c === 0x5b) {
      if (depth === 0 && c === 0x7b) expectKey = true;
      depth++;
    } else if (c === 0x7d || c === 0x5d) {
      depth--;
    } else if (c === 0x2c && depth === 1) {
      expectKey = true;
    }
  }
  return depth >= 1 ? key : undefined;
}
