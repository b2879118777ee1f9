import { fstatSync } from 'node:fs';

/**
 * The line added to commander's "missing required argument 'file'" when stdin is a pipe or a file: the
 * user most likely meant to load it (`gunzip -c x.gz | ddb-spread load --table T`), which takes `-` as
 * the input, as in tar or curl; undefined otherwise (a terminal, /dev/null).
 */
export function stdinHint(command: string | undefined, stdin: unknown): string | undefined {
  if (command !== 'load' && command !== 'estimate') return undefined;
  if (!stdinIsData(stdin)) return undefined;
  return `ddb-spread: stdin holds data (a pipe or a file); to ${command} it, pass - as the input: ... | ddb-spread ${command} - --table <table> ...\n`;
}

/** True when stdin carries data (a pipe, a socket, a redirected file), not a terminal or a device. */
function stdinIsData(stdin: unknown): boolean {
  if ((stdin as { isTTY?: boolean } | undefined)?.isTTY === true) return false;
  // process.stdin on a pipe is a socket without an `fd` of its own: it is descriptor 0.
  const fd = stdin === process.stdin ? 0 : (stdin as { fd?: unknown } | undefined)?.fd;
  if (typeof fd !== 'number') return stdin !== undefined;
  try {
    const info = fstatSync(fd);
    return info.isFIFO() || info.isSocket() || info.isFile();
  } catch {
    return false;
  }
}
