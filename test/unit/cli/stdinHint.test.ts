import { describe, expect, it } from 'vitest';
import { PassThrough } from 'node:stream';
import { stdinHint, terminalStdinNote } from '../../../src/cli/stdinHint.js';

const terminal = Object.assign(new PassThrough(), { isTTY: true });
const pipe = new PassThrough();

describe('stdin and the - input', () => {
  it('a missing input with data on stdin suggests -, for load and estimate only', () => {
    expect(stdinHint('load', pipe)).toContain('to load it, pass - as the input');
    expect(stdinHint('estimate', pipe)).toContain('ddb-spread estimate - --table');
    expect(stdinHint('query', pipe)).toBeUndefined();
    expect(stdinHint('load', terminal)).toBeUndefined();
  });

  it('- read from a terminal says it waits for typed rows and how to end them', () => {
    expect(terminalStdinNote('-', terminal)).toContain('end them with Ctrl-D');
    expect(terminalStdinNote(['a.csv', '-'], terminal)).toBeDefined();
    expect(terminalStdinNote('-', pipe)).toBeUndefined();
    expect(terminalStdinNote('a.csv', terminal)).toBeUndefined();
  });
});
