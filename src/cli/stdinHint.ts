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

/**
 * `-` read from a terminal waits for typed rows with no word: a person who meant a pipe sees a hung
 * command. One line says what it waits for and how to end it; undefined when stdin is not a terminal.
 */
export function terminalStdinNote(inputs: string | string[], stdin: unknown): string | undefined {
  const named = typeof inputs === 'string' ? inputs === '-' : inputs.includes('-');
  if (!named || (stdin as { isTTY?: boolean } | undefined)?.isTTY !== true) return undefined;
  return 'reading rows typed on the terminal (input -): end them with Ctrl-D; to load a file, name it, or pipe it: cat rows.csv | ddb-spread load - ...';
}
