/**
 * --config job.json on the real commander program (buildProgram with recording actions, in-process):
 * values arrive as the flags' parsed values, command-line flags win, repeatable and negatable options,
 * choices, unknown keys with a suggestion, bad values, JSON syntax errors, and the file argument and
 * --table coming from the config.
 */
import { CommanderError, type Command } from 'commander';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { applyConfig, attachConfigOption, readConfigFile } from '../../../src/cli/config.js';
import { buildProgram } from '../../../src/cli/main.js';
import { DEFAULT_CONCURRENCY, type LoadFlags } from '../../../src/cli/options.js';
import { parseGsiOption, parseMemoryOption, parseShardOption, parseWcuOption } from '../../../src/cli/flagParsers.js';
import { LoaderError } from '../../../src/shared/errors.js';

let dir: string;
let seq = 0;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'ddb-spread-config-'));
});

afterAll(async () => {
  if (dir) await rm(dir, { recursive: true, force: true });
});

/** Writes a config file (an object is written as JSON, a string as it is) and returns its path. */
async function configFile(content: unknown, extension = '.json'): Promise<string> {
  const path = join(dir, `job-${++seq}${extension}`);
  await writeFile(path, typeof content === 'string' ? content : JSON.stringify(content));
  return path;
}

interface Call {
  command: 'load' | 'estimate';
  input: string | string[];
  flags: LoadFlags & { config?: string };
}

/** The real program with recording actions; --config attached to both commands (idempotent once main.ts does it too). */
function program() {
  const calls: Call[] = [];
  let stderr = '';
  const sink = (write: (s: string) => void) => ({ write: (s: string) => (write(s), true) }) as unknown as NodeJS.WritableStream;
  const cmd = buildProgram(
    async (input, flags) => void calls.push({ command: 'load', input, flags }),
    { stdout: sink(() => undefined), stderr: sink((s) => (stderr += s)) },
    async (input, flags) => void calls.push({ command: 'estimate', input, flags }),
  );
  for (const sub of cmd.commands) if (sub.name() === 'load' || sub.name() === 'estimate') attachConfigOption(sub);
  const sub = (name: string) => cmd.commands.find((c) => c.name() === name)!;
  return {
    calls,
    sub,
    stderr: () => stderr,
    run: (...args: string[]) => cmd.parseAsync(args, { from: 'user' }),
  };
}

/** Parses and returns the one recorded call. */
async function parsed(...args: string[]): Promise<Call> {
  const p = program();
  await p.run(...args);
  expect(p.calls).toHaveLength(1);
  return p.calls[0]!;
}

/** Parses expecting a CommanderError; returns it and what went to stderr. */
async function failure(...args: string[]): Promise<{ error: CommanderError; stderr: string }> {
  const p = program();
  const error = await p.run(...args).then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(CommanderError);
  expect(p.calls).toHaveLength(0);
  return { error: error as CommanderError, stderr: p.stderr() };
}

/** applyConfig on a freshly parsed command (no action run), for the LoaderError and its context. */
async function applyError(name: 'load' | 'estimate', config: Record<string, unknown>, source = 'job.json'): Promise<LoaderError> {
  const p = program();
  const command: Command = p.sub(name);
  await p.run(name, 'data.csv', '--table', 'T');
  try {
    applyConfig(command, config, source);
  } catch (error) {
    expect(error).toBeInstanceOf(LoaderError);
    return error as LoaderError;
  }
  throw new Error('applyConfig did not throw');
}

describe('config values arrive as parsed flags', () => {
  it("parses each value with the flag's argParser, kebab-case and camelCase keys alike", async () => {
    const path = await configFile({
      table: 'Orders',
      wcu: 500,
      'key-wcu': '250',
      endpointUrl: 'http://localhost:8000',
      order: 'spread',
      concurrency: 8,
      'max-attempts': 3,
      memory: '1GB',
      delimiter: 'tab',
      columns: ['pk', 'sk', 'qty'],
      types: { qty: 'N', paid: 'BOOL' },
      'shard-keys': 'cust-1,cust-2',
      infer: true,
      strict: true,
    });
    const { input, flags } = await parsed('load', 'data.csv', '--config', path);
    expect(input).toBe('data.csv');
    expect(flags).toMatchObject({
      table: 'Orders',
      wcu: parseWcuOption('500'),
      keyWcu: 250,
      endpointUrl: 'http://localhost:8000',
      order: 'spread',
      concurrency: 8,
      maxAttempts: 3,
      memory: parseMemoryOption('1GB'),
      delimiter: '\t',
      columns: ['pk', 'sk', 'qty'],
      types: { qty: 'N', paid: 'BOOL' },
      shardKeys: ['cust-1', 'cust-2'],
      infer: true,
      strict: true,
      config: path,
    });
  });

  it('keeps the digits a number was written with', async () => {
    const path = await configFile('{"table": "T", "price-wcu-hour": 0.000650, "max-rejects": 9007199254740993}');
    const { error, stderr } = await failure('estimate', 'data.csv', '--config', path);
    expect(error.exitCode).toBe(1);
    expect(stderr).toContain('"9007199254740993"'); // not rounded to ...992 before the parser saw it
  });

  it('null leaves an option unset', async () => {
    const path = await configFile({ table: 'T', wcu: null });
    const { flags } = await parsed('load', 'data.csv', '--config', path);
    expect(flags.wcu).toBeUndefined();
  });

  it('without --config nothing changes', async () => {
    const { input, flags } = await parsed('load', 'data.csv', '--table', 'T');
    expect(input).toBe('data.csv');
    expect(flags.concurrency).toBe(DEFAULT_CONCURRENCY);
    expect(flags.config).toBeUndefined();
  });
});

describe('command-line flags win', () => {
  it('over config values, which win over defaults', async () => {
    const path = await configFile({ table: 'FromConfig', wcu: 500, order: 'spread', concurrency: 8, empty: 'null' });
    const p = program();
    await p.run('load', 'data.csv', '--config', path, '--table', 'FromCli', '--wcu', '100');
    const { flags } = p.calls[0]!;
    expect(flags).toMatchObject({ table: 'FromCli', wcu: parseWcuOption('100'), order: 'spread', concurrency: 8, empty: 'null' });
    const load = p.sub('load');
    expect(load.getOptionValueSource('table')).toBe('cli');
    expect(load.getOptionValueSource('concurrency')).toBe('config');
    expect(load.getOptionValueSource('maxAttempts')).toBe('default');
  });

  it('whatever their position relative to --config', async () => {
    const path = await configFile({ table: 'T', order: 'spread' });
    const { flags } = await parsed('load', '--order', 'input', 'data.csv', '--config', path);
    expect(flags.order).toBe('input');
  });
});

describe('repeatable options', () => {
  it('accumulate over a list, as repeated flags do', async () => {
    const path = await configFile({ table: 'T', shard: ['time:day:createdAt', 'hash:4'], types: ['price:N', 'qty:N'] });
    const { flags } = await parsed('load', 'data.csv', '--config', path);
    expect(flags.shard).toEqual(parseShardOption('hash:4', parseShardOption('time:day:createdAt', undefined)));
    expect(flags.types).toEqual({ price: 'N', qty: 'N' });
  });

  it('a single value is a list of one', async () => {
    const path = await configFile({ 'partition-key': 'pk:S', gsi: 'byStatus:status:S' });
    const { command, flags } = await parsed('estimate', 'data.csv', '--config', path);
    expect(command).toBe('estimate');
    expect(flags.gsi).toEqual(parseGsiOption('byStatus:status:S', undefined));
    expect(flags.partitionKey).toEqual({ name: 'pk', type: 'S' });
  });

  it("flags on the command line replace the config's list, not add to it", async () => {
    const path = await configFile({ table: 'T', shard: ['hash:4'] });
    const { flags } = await parsed('load', 'data.csv', '--shard', 'random:2', '--config', path);
    expect(flags.shard).toEqual(parseShardOption('random:2', undefined));
  });

  it('a list for a one-value option is an error', async () => {
    const error = await applyError('load', { wcu: [100, 200] });
    expect(error).toMatchObject({ code: 'INVALID_OPTION', file: 'job.json', field: 'wcu' });
    expect(error.message).toContain('not repeatable');
  });
});

describe('choices', () => {
  it.each([
    ['order', 'zigzag'],
    ['input-format', 'xml'],
    ['billing', 'free'],
    ['empty', 'zero'],
  ])('"%s": "%s" is refused, naming the key and the file', async (key, value) => {
    const error = await applyError('estimate', { [key]: value });
    expect(error).toMatchObject({ code: 'INVALID_OPTION', file: 'job.json', field: key });
    expect(error.message).toContain(`"${key}" in job.json must be one of`);
  });

  it('through the program: exit code 1 and the message on stderr', async () => {
    const path = await configFile({ table: 'T', order: 'zigzag' });
    const { error, stderr } = await failure('load', 'data.csv', '--config', path);
    expect(error).toMatchObject({ exitCode: 1, code: 'ddb-spread.invalidConfig' });
    expect(stderr).toContain(`error: "order" in ${path} must be one of auto, stripes, round-robin, spread, window, input; got "zigzag"`);
  });
});

describe('negatable options', () => {
  it('accept the positive name with false, and the --no- name with true', async () => {
    const path = await configFile({ table: 'T', pacing: false, 'no-progress': true, noExcerpts: true });
    const { flags } = await parsed('load', 'data.csv', '--config', path);
    expect(flags).toMatchObject({ pacing: false, progress: false, excerpts: false });
  });

  it('keep their default when the config says so', async () => {
    const path = await configFile({ table: 'T', pacing: true, 'no-progress': false });
    const { flags } = await parsed('load', 'data.csv', '--config', path);
    expect(flags).toMatchObject({ pacing: true, progress: true, excerpts: true });
  });

  it('--no-pacing on the command line wins over "pacing": true', async () => {
    const path = await configFile({ table: 'T', pacing: true });
    const { flags } = await parsed('load', 'data.csv', '--no-pacing', '--config', path);
    expect(flags.pacing).toBe(false);
  });

  it('booleans must be true or false', async () => {
    const error = await applyError('load', { strict: 'yes' });
    expect(error).toMatchObject({ code: 'INVALID_OPTION', field: 'strict' });
  });

  it('naming one option twice is an error', async () => {
    const error = await applyError('load', { pacing: false, 'no-pacing': true });
    expect(error).toMatchObject({ code: 'INVALID_OPTION', field: 'no-pacing' });
  });
});

describe('unknown keys', () => {
  it.each([
    ['wcuu', 'wcu'],
    ['key-wcuu', 'key-wcu'],
    ['keyWcuu', 'keyWcu'],
    ['tabel', 'table'],
    ['imput', 'input'],
    ['no-pacng', 'no-pacing'],
  ])('"%s" is an error suggesting "%s"', async (key, suggestion) => {
    const error = await applyError('load', { [key]: 1 });
    expect(error).toMatchObject({ code: 'INVALID_OPTION', file: 'job.json', field: key });
    expect(error.message).toBe(`unknown option "${key}" in job.json; did you mean "${suggestion}"?`);
  });

  it('with no close name, points at --help', async () => {
    const error = await applyError('load', { colour: 'blue' });
    expect(error.message).toBe('unknown option "colour" in job.json; see ddb-spread load --help for the options');
  });

  it('load-only options are unknown to estimate', async () => {
    const error = await applyError('estimate', { 'dry-run': true });
    expect(error).toMatchObject({ code: 'INVALID_OPTION', field: 'dry-run' });
  });

  it('a config cannot name another config', async () => {
    const error = await applyError('load', { config: 'other.json' });
    expect(error).toMatchObject({ code: 'INVALID_OPTION', field: 'config' });
  });

  it('nothing is applied when a key is wrong', async () => {
    const p = program();
    await p.run('load', 'data.csv', '--table', 'T');
    const load = p.sub('load');
    expect(() => applyConfig(load, { concurrency: 8, wcuu: 1 }, 'job.json')).toThrow(LoaderError);
    expect(load.getOptionValue('concurrency')).toBe(DEFAULT_CONCURRENCY);
  });

  it('through the program: exit code 1 and the message with the suggestion', async () => {
    const path = await configFile({ table: 'T', wcuu: 500 });
    const { error, stderr } = await failure('load', 'data.csv', '--config', path);
    expect(error.exitCode).toBe(1);
    expect(stderr).toContain(`error: unknown option "wcuu" in ${path}; did you mean "wcu"?`);
  });
});

describe('bad values', () => {
  it.each([
    ['concurrency', 0],
    ['wcu', 'fast'],
    ['shard', 'bogus:4'],
    ['memory', '1KB'],
    ['partition-key', 'pk'],
    ['types', { price: 'NUMBER' }],
  ])('"%s": %j names the key and the file', async (key, value) => {
    const error = await applyError('estimate', { [key]: value });
    expect(error).toMatchObject({ code: 'INVALID_OPTION', file: 'job.json', field: key });
    expect(error.message).toMatch(new RegExp(`^invalid value for "${key}" in job\\.json \\(--${key}\\): `));
  });

  it.each([
    ['wcu', true],
    ['region', { name: 'eu-west-1' }],
    ['input', 42],
  ])('"%s": %j has the wrong JSON type', async (key, value) => {
    const error = await applyError('load', { [key]: value });
    expect(error).toMatchObject({ code: 'INVALID_OPTION', file: 'job.json', field: key });
  });
});

describe('the file', () => {
  it('a JSON syntax error names the file, line and column', async () => {
    const path = await configFile('{\n  "table": "T",\n  "wcu": ,\n}');
    const error = await readConfigFile(path).catch((e: unknown) => e);
    expect(error).toMatchObject({ code: 'INVALID_OPTION', file: path, line: 3 });
    expect((error as Error).message).toBe(`cannot parse --config ${path} as JSON: Object value expected after ':' at line 3, column 10`);
  });

  it('a duplicate key is a syntax error', async () => {
    const path = await configFile('{"table": "A", "table": "B"}');
    await expect(readConfigFile(path)).rejects.toMatchObject({ code: 'INVALID_OPTION', file: path, line: 1 });
  });

  it('must hold an object', async () => {
    const path = await configFile('["table", "T"]');
    await expect(readConfigFile(path)).rejects.toMatchObject({ code: 'INVALID_OPTION', file: path });
  });

  it('a missing file names the file', async () => {
    const path = join(dir, 'missing.json');
    await expect(readConfigFile(path)).rejects.toMatchObject({ code: 'INVALID_OPTION', file: path });
    const { error, stderr } = await failure('load', 'data.csv', '--table', 'T', '--config', path);
    expect(error.exitCode).toBe(1);
    expect(stderr).toContain(`cannot read --config ${path}`);
  });

  it('YAML is refused with a clear message (no YAML parser is installed)', async () => {
    const path = await configFile('table: T\n', '.yaml');
    const error = await readConfigFile(path).catch((e: unknown) => e);
    expect(error).toMatchObject({ code: 'INVALID_OPTION', file: path });
    expect((error as Error).message).toContain('YAML config files are not supported');
  });

  it('a leading BOM is allowed', async () => {
    const path = await configFile('\uFEFF{"table": "T"}');
    await expect(readConfigFile(path)).resolves.toEqual({ table: 'T' });
  });
});

describe('input and --table from the config', () => {
  it('"input" stands for the file argument', async () => {
    const path = await configFile({ input: 'orders.csv', table: 'Orders' });
    const { input, flags } = await parsed('load', '--config', path);
    expect(input).toBe('orders.csv');
    expect(flags.table).toBe('Orders');
  });

  it('the file on the command line wins over "input"', async () => {
    const path = await configFile({ input: 'orders.csv', table: 'Orders' });
    const { input } = await parsed('load', 'other.csv', '--config', path);
    expect(input).toBe('other.csv');
  });

  it('works for estimate too', async () => {
    const path = await configFile({ input: '-', 'partition-key': 'pk:S' });
    const { command, input } = await parsed('estimate', '--config', path);
    expect(command).toBe('estimate');
    expect(input).toBe('-');
  });

  it("no file anywhere: commander's missing-argument error, naming the config", async () => {
    const path = await configFile({ table: 'T' });
    const { error, stderr } = await failure('load', '--config', path);
    expect(error).toMatchObject({ exitCode: 1, code: 'commander.missingArgument' });
    expect(stderr).toContain(`error: missing required argument 'file' (on the command line or as "input" in ${path})`);
  });

  it('no file and no config: the same error as without --config support', async () => {
    const { error, stderr } = await failure('load', '--table', 'T');
    expect(error).toMatchObject({ exitCode: 1, code: 'commander.missingArgument' });
    expect(stderr).toContain("error: missing required argument 'file'\n");
  });

  it("no --table anywhere: commander's required-option error", async () => {
    const path = await configFile({ wcu: 100 });
    const withConfig = await failure('load', 'data.csv', '--config', path);
    expect(withConfig.error).toMatchObject({ exitCode: 1, code: 'commander.missingMandatoryOptionValue' });
    expect(withConfig.stderr).toContain(`error: required option '-t, --table <name>' not specified (on the command line or as "table" in ${path})`);
    const without = await failure('load', 'data.csv');
    expect(without.error.code).toBe('commander.missingMandatoryOptionValue');
    expect(without.stderr).toContain("error: required option '-t, --table <name>' not specified\n");
  });

  it('attaching twice changes nothing', async () => {
    const p = program();
    const load = p.sub('load');
    const options = load.options.length;
    attachConfigOption(load);
    expect(load.options.length).toBe(options);
  });
});
