import { LoaderError } from '../shared/errors.js';
import { INPUT_FORMATS, type InputFormat } from './inputFormat.js';
import { signedFormatOf } from './magic.js';
import type { OpenedInput } from './openInput.js';
import { peekFirstChunk } from './peek.js';

/**
 * The format of an input whose name does not tell and that has no --input-format, from its first
 * (decompressed) bytes: "PAR1" is Parquet, "$ion_1_0" Ion, a line starting `{"Item":` DynamoDB JSON and
 * any other `{` JSON Lines. CSV has no signature: it needs its extension or the flag. The peeked chunk
 * stays in the input's stream.
 */
export async function detectFormat(input: OpenedInput): Promise<InputFormat> {
  const { head, stream } = await peekFirstChunk(input.stream);
  input.stream = stream;
  const signed = signedFormatOf(head);
  if (signed === 'parquet' || signed === 'ion') return signed;
  if (signed === 'ion-binary') {
    throw new LoaderError(
      'INPUT_UNREADABLE',
      `${input.name} is binary Amazon Ion; ddb-spread reads text Ion as DynamoDB exports write it (convert with ion-cli or any Ion library)`,
      { file: input.name },
    );
  }
  const text = head
    .subarray(0, 64)
    .toString('utf8')
    .replace(/^\uFEFF/, '')
    .trimStart();
  if (/^\{\s*"Item"\s*:\s*\{/.test(text)) return 'ddb-json';
  if (text.startsWith('{')) return 'jsonl';
  throw new LoaderError(
    'INVALID_OPTION',
    `cannot tell the format of ${input.name} from its name or its first bytes; pass --input-format ${INPUT_FORMATS.join(', ')}`,
    { file: input.name },
  );
}
