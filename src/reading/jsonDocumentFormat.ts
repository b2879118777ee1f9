import type { PartFormat } from './inputFormat.js';
import { jsonShapeOf, refuseJsonShape } from './jsonShape.js';
import type { OpenedInput } from './openInput.js';
import { peekFirstChunk } from './peek.js';

/**
 * How a JSON part is read, from its first (decompressed) bytes: as lines (`format` as it was), or as a
 * JSON document (an array, scan output); a request file or another document over several lines is
 * refused before any of its rows, with the command that converts it. The peeked chunk stays in the stream.
 */
export async function jsonDocumentFormat(input: OpenedInput, format: 'jsonl' | 'ddb-json'): Promise<PartFormat> {
  const { head, stream } = await peekFirstChunk(input.stream);
  input.stream = stream;
  // The whole first chunk (64 KB for a file): enough to see whether the first line closes.
  return documentFormatOf(head.toString('utf8'), format, input.name);
}

/** documentFormatOf's rule on text: the shape of `head`, as the part's format (or its refusal). */
export function documentFormatOf(head: string, format: 'jsonl' | 'ddb-json', file: string): PartFormat {
  const shape = jsonShapeOf(head);
  switch (shape) {
    case 'lines':
      return format;
    case 'array':
      return format === 'ddb-json' ? 'ddb-json-array' : 'json-array';
    case 'scan':
      return 'scan-output';
    default:
      throw refuseJsonShape(shape, file, head);
  }
}
