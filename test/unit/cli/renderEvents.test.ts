import { describe, expect, it } from 'vitest';
import { PassThrough } from 'node:stream';
import { createEventRenderer, HASH_SHOWN_BYTES } from '../../../src/cli/renderEvents.js';
import { Terminal } from '../../../src/cli/terminal.js';
import type { LoadEvent } from '../../../src/reporting/events.js';

function rendered(events: LoadEvent[], jsonLog = false): string {
  let text = '';
  const stderr = new PassThrough();
  stderr.on('data', (chunk: Buffer) => (text += chunk.toString()));
  const terminal = new Terminal({ stdout: new PassThrough(), stderr, stdin: new PassThrough() }, { jsonLog });
  const renderer = createEventRenderer(terminal, { quiet: false, logInterval: 10, excerpts: true, verbose: false }, false, undefined);
  for (const event of events) renderer.onEvent(event);
  return text;
}

describe("the checkpoint's hash of the input", () => {
  const bytes = 10 * 1024 ** 3;
  it('a large input: one line with its size and the time it should take, one with the time it took', () => {
    const text = rendered([
      { type: 'hashing', checkpoint: 'load.ckpt', bytes },
      { type: 'hashed', checkpoint: 'load.ckpt', bytes, ms: 19_800 },
    ]);
    expect(text).toBe(
      'ddb-spread: hashing the input for checkpoint load.ckpt (10.0 GB, about 20.5 s): a resume recognises it by its content\n' +
        'ddb-spread: hashed the input in 19.8 s\n',
    );
  });

  it('a small one is not worth a line on the terminal, but the JSON log records it', () => {
    const small: LoadEvent[] = [
      { type: 'hashing', checkpoint: 'c', bytes: HASH_SHOWN_BYTES - 1 },
      { type: 'hashed', checkpoint: 'c', bytes: HASH_SHOWN_BYTES - 1, ms: 3 },
    ];
    expect(rendered(small)).toBe('');
    expect(
      rendered(small, true)
        .trim()
        .split('\n')
        .map((line) => (JSON.parse(line) as { type: string }).type),
    ).toEqual(['hashing', 'hashed']);
  });
});
