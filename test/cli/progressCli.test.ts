/**
 * The progress line of a real load, drawn in a pseudo-terminal (util-linux `script`) 100 columns wide:
 * each phase named, the percent never lower than before and 100 only at the end, every line within the
 * terminal's width.
 */
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { BIN, runProcess } from '../support/cli.js';
import { localEnv } from '../support/env.js';
import { useLocalAws } from '../support/localAws.js';

const aws = useLocalAws({ name: 'progress-cli', keys: { partitionKey: { name: 'pk', type: 'S' }, sortKey: { name: 'sk', type: 'N' } } });

/** Runs the CLI with its stdin, stdout and stderr on a terminal of `columns` columns; returns what the terminal got. */
async function inTerminal(args: string[], columns: number): Promise<{ code: number | null; screen: string }> {
  const quoted = [process.execPath, BIN, ...args].map((a) => `'${a.replaceAll("'", "'\\''")}'`).join(' ');
  const run = await runProcess('script', ['-qec', `stty cols ${columns} rows 40; exec ${quoted}`, '/dev/null'], {
    cwd: aws.dir(),
    env: localEnv(aws.endpoint),
  });
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
  it('a global order: reading, then writing; percent of rows written never falls, 100 only at the end; fits 100 columns', async () => {
    const rows = ['pk,sk'];
    for (let i = 0; i < 3000; i++) rows.push(`k${i % 40},${i}`);
    const input = join(aws.dir(), 'rows.csv');
    await writeFile(input, `${rows.join('\n')}\n`);
    const table = await aws.newTable();
    const { code, screen } = await inTerminal(['load', input, '--table', table, '--types', 'sk:N', '--order', 'round-robin', '--wcu', '1500'], 100);
    expect(code, screen).toBe(0);
    const lines = frames(screen);
    expect(lines.length, screen).toBeGreaterThan(3);
    for (const line of lines) expect(line.length, line).toBeLessThanOrEqual(99);
    expect(lines[0]).toMatch(/^reading /);
    expect(
      lines.some((l) => /^writing \[[█░]+\] \d+% \| written [\d,]+ of 3,000 rows \| ETA /.test(l)),
      lines.join('\n'),
    ).toBe(true);
    const percents = lines.map((l) => Number(/ (\d+)% \|/.exec(l)?.[1] ?? NaN)).filter((p) => !Number.isNaN(p));
    for (let i = 1; i < percents.length; i++) expect(percents[i], percents.join(' ')).toBeGreaterThanOrEqual(percents[i - 1]!);
    expect(percents.at(-1)).toBe(100);
    expect(percents.indexOf(100)).toBe(percents.length - 1 - [...percents].reverse().findIndex((p) => p !== 100) + 1);
    expect(screen).toContain('load into');
  });
});
