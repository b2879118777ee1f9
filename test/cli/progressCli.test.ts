/**
 * The progress line of a real load, drawn in a pseudo-terminal (util-linux `script`) 100 columns wide,
 * and 60 at times: each phase named, the percent never lower than before and 100 only at the end, every line
 * within the terminal's width.
 */
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { BIN, runProcess } from '../support/cli.js';
import { localEnv } from '../support/env.js';
import { useLocalAws } from '../support/localAws.js';

const aws = useLocalAws({ name: 'progress-cli', keys: { partitionKey: { name: 'pk', type: 'S' }, sortKey: { name: 'sk', type: 'N' } } });

const NARROW = '<<narrow>>';
const WIDE = '<<wide>>';

/**
 * Runs the CLI on a terminal of 100 columns (stdin, stdout and stderr) that is narrowed to 60 and widened
 * again every 1.9 s while it runs (SIGWINCH each time); returns what the terminal got. Marks in the
 * transcript bound where it is narrow: from a second after narrowing (a line measured just before, then
 * held up on a busy machine, has been written by then) until it is widened again.
 */
async function inResizedTerminal(args: string[]): Promise<{ code: number | null; screen: string }> {
  const quoted = [process.execPath, BIN, ...args].map((a) => `'${a.replaceAll("'", "'\\''")}'`).join(' ');
  const resize = (cols: number) => `stty cols ${cols}; kill -WINCH $p 2>/dev/null`;
  const script = [
    `stty cols 100 rows 40; ${quoted} & p=$!`,
    `while kill -0 $p 2>/dev/null; do sleep 0.3; ${resize(60)}; sleep 1; printf '\\n${NARROW}\\n'; sleep 0.6; printf '\\n${WIDE}\\n'; ${resize(100)}; done`,
    'wait $p',
  ].join('; ');
  const run = await runProcess('script', ['-qec', script, '/dev/null'], { cwd: aws.dir(), env: localEnv(aws.endpoint) });
  return { code: run.code, screen: run.stdout };
}

/** The frames of the progress line: each redraw starts with a carriage return; escape sequences removed. */
function frames(screen: string): string[] {
  return screen
    .split('\r')
    .map((f) => f.replaceAll(/\u001b\[[0-9;?]*[A-Za-z]/g, '').split('\n')[0]!)
    .filter((f) => /^(reading|planning|resuming|writing)\b/.test(f));
}

describe('progress line in a terminal', () => {
  it('a global order: reading, then writing; percent never falls, 100 only once all is written; fits the terminal, resized too', async () => {
    const rows = ['pk,sk'];
    for (let i = 0; i < 3000; i++) rows.push(`k${i % 40},${i}`);
    const input = join(aws.dir(), 'rows.csv');
    await writeFile(input, `${rows.join('\n')}\n`);
    const table = await aws.newTable();
    // At 1,000 WCU/s the writing alone takes 3 s: the terminal is resized while the load runs.
    const args = ['load', input, '--table', table, '--types', 'sk:N', '--order', 'round-robin', '--wcu', '1000'];
    const { code, screen } = await inResizedTerminal(args);
    expect(code, screen).toBe(0);
    const lines = frames(screen);
    expect(lines.length, screen).toBeGreaterThan(3);
    for (const line of lines) expect(line.length, line).toBeLessThanOrEqual(99);
    // Between a narrow mark and the next wide one, every line fits 60 columns; and lines were drawn both ways.
    const narrowed = screen
      .split(NARROW)
      .slice(1)
      .flatMap((after) => frames(after.split(WIDE)[0]!));
    expect(narrowed.length, screen).toBeGreaterThan(0);
    for (const line of narrowed) expect(line.length, line).toBeLessThanOrEqual(59);
    expect(lines.some((l) => l.length > 59)).toBe(true);
    expect(lines[0]).toMatch(/^reading /);
    expect(
      lines.some((l) => /^writing \[[█░]+\] \d+% \| written [\d,]+ of 3,000 rows \| ETA /.test(l)),
      lines.join('\n'),
    ).toBe(true);
    const percents = lines.map((l) => Number(/ (\d+)% \|/.exec(l)?.[1] ?? NaN)).filter((p) => !Number.isNaN(p));
    for (let i = 1; i < percents.length; i++) expect(percents[i], percents.join(' ')).toBeGreaterThanOrEqual(percents[i - 1]!);
    expect(percents.at(-1)).toBe(100);
    for (const line of lines.filter((l) => / 100% /.test(l))) expect(line).toContain('written 3,000 of 3,000 rows');
    expect(screen).toContain('load into');
  });
});
