import type { LoadResult } from '../reporting/result.js';
import { formatSummary, summaryJson } from '../reporting/summary.js';

/** The streams the CLI writes to and reads from (process's, or a test's). */
export interface CliIo {
  stdout: NodeJS.WritableStream;
  stderr: NodeJS.WriteStream | NodeJS.WritableStream;
  stdin: NodeJS.ReadableStream;
}

/** What the summary of a stopped or failed load carries. */
export interface Failure {
  code: string;
  message: string;
}

/**
 * One run's messages: stderr for people (or one JSON object a line with --log-format json), stdout for
 * --json. Messages printed while a progress bar is drawn would break it (it restores the cursor it
 * saved), so they are held from hold() until release().
 */
export class Terminal {
  readonly #io: CliIo;
  readonly #jsonLog: boolean;
  #held: string[] | undefined;

  constructor(io: CliIo, options: { jsonLog: boolean }) {
    this.#io = io;
    this.#jsonLog = options.jsonLog;
  }

  get jsonLog(): boolean {
    return this.#jsonLog;
  }

  /** Text on stderr as is (held while the progress bar is drawn). */
  say(text: string): void {
    if (this.#held) this.#held.push(text);
    else this.#io.stderr.write(text);
  }

  /** One message on stderr: a text line, or with --log-format json one JSON object with a time. */
  note(text: string, fields: Record<string, unknown>): void {
    if (this.#jsonLog) this.say(`${JSON.stringify({ time: new Date().toISOString(), ...fields })}\n`);
    else this.say(text);
  }

  hold(): void {
    this.#held = [];
  }

  /** Prints what was held, and stops holding. */
  release(): void {
    const lines = this.#held ?? [];
    this.#held = undefined;
    for (const line of lines) this.#io.stderr.write(line);
  }

  /** The summary of a load: JSON on stdout (--json), a JSON log line (--log-format json), or text on stderr. */
  summary(result: LoadResult, options: { json: boolean; excerpts: boolean; failure?: Failure; alreadyComplete?: true }): void {
    const { json, excerpts, failure, alreadyComplete } = options;
    const extra = alreadyComplete ? { alreadyComplete } : {};
    if (json)
      this.#io.stdout.write(
        alreadyComplete
          ? `${JSON.stringify({ ...(JSON.parse(summaryJson(result, failure, excerpts)) as object), ...extra })}\n`
          : summaryJson(result, failure, excerpts),
      );
    else if (this.#jsonLog) this.note('', { type: 'summary', ...(JSON.parse(summaryJson(result, failure, excerpts)) as object), ...extra });
    else this.say(formatSummary(result, failure?.message, excerpts, terminalWidth(this.#io.stderr)));
  }
}

/** The terminal's columns when stderr is one, else 80 (a log or a pipe). */
function terminalWidth(stream: CliIo['stderr']): number {
  const columns = 'columns' in stream ? stream.columns : undefined;
  return typeof columns === 'number' && columns > 0 ? columns : 80;
}
