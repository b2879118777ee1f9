/**
 * --config job.json: a JSON object whose keys are the long option names of `load` or `estimate`, in
 * kebab-case or camelCase ({"table": "Orders", "key-wcu": 500, "shard": ["hash:4"], "types": {"price": "N"}}),
 * plus "input" for the file argument. Every value goes through the argParser and choices commander uses
 * for the flag, so a config file accepts exactly what the command line accepts. Flags given on the
 * command line win; config values replace defaults.
 *
 * Only commander's public API is used: Command.options / registeredArguments / processedArgs,
 * getOptionValueSource / setOptionValueWithSource, Option.parseArg / argChoices, and a preAction hook.
 */
import { extname } from 'node:path';
import { readFile } from 'node:fs/promises';
import type { Command, Option } from 'commander';
import { isLosslessNumber, parse as parseJson } from 'lossless-json';
import { LoaderError } from '../shared/errors.js';
import { parseColumnsOption, parseTypesOption } from './flagParsers.js';
import { tableOption } from './commandOptions.js';
import type { CommandName } from './optionTable.js';

/** The config key that names the file argument (the <file> of load and estimate). */
const INPUT_KEY = 'input';
const CONFIG_FLAG = '--config';

/** One spelling of an option in a config file; `negated` for the --no- spelling ("no-pacing": true). */
interface Spelling {
  option: Option;
  negated: boolean;
}

/**
 * Reads a config file: a JSON object (a leading BOM is allowed). Numbers keep the digits they were
 * written with (they reach the argParsers as that text). YAML is not supported: no YAML parser is a
 * dependency, so .yaml/.yml files are refused with a clear message.
 */
export async function readConfigFile(path: string): Promise<Record<string, unknown>> {
  const extension = extname(path).toLowerCase();
  if (extension === '.yaml' || extension === '.yml') {
    throw new LoaderError(
      'INVALID_OPTION',
      `--config ${path}: YAML config files are not supported (no YAML parser is installed); write the same keys as a JSON object in a .json file`,
      { file: path },
    );
  }
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (error) {
    throw new LoaderError('INVALID_OPTION', `cannot read --config ${path}: ${(error as Error).message}`, { file: path, cause: error });
  }
  if (text.startsWith('\uFEFF')) text = text.slice(1);
  let parsed: unknown;
  try {
    parsed = parseJson(text);
  } catch (error) {
    const message = (error as Error).message;
    const at = / at position (\d+)$/.exec(message);
    if (!at) throw new LoaderError('INVALID_OPTION', `cannot parse --config ${path} as JSON: ${message}`, { file: path, cause: error });
    const { line, column } = lineAndColumn(text, Number(at[1]));
    throw new LoaderError('INVALID_OPTION', `cannot parse --config ${path} as JSON: ${message.slice(0, at.index)} at line ${line}, column ${column}`, {
      file: path,
      line,
      cause: error,
    });
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) {
    throw new LoaderError(
      'INVALID_OPTION',
      `--config ${path} must hold a JSON object of options, like {"table": "Orders", "wcu": 500}; got ${describe(parsed)}`,
      { file: path },
    );
  }
  return parsed as Record<string, unknown>;
}

/**
 * Applies a config object to a parsed (sub)command: each key is checked (unknown keys are errors with
 * the closest option name), each value parsed by the option's argParser, choices enforced; a value
 * replaces a default but never a value from the command line. Nothing is set if any key is wrong.
 * `source` names the file in messages. Returns the config's "input" (the file argument), if any.
 * Throws LoaderError INVALID_OPTION with `file` = source and `field` = the key.
 */
export function applyConfig(command: Command, config: Record<string, unknown>, source: string): string | undefined {
  const spellings = spellingsOf(command);
  const fail = (key: string, message: string, cause?: unknown) =>
    new LoaderError('INVALID_OPTION', message, { file: source, field: key, ...(cause === undefined ? {} : { cause }) });

  let input: string | undefined;
  const seen = new Map<Option, string>();
  const parsed: Array<{ option: Option; value: unknown }> = [];
  for (const [key, raw] of Object.entries(config)) {
    if (key === INPUT_KEY) {
      if (raw === null) continue;
      if (typeof raw !== 'string' || raw === '')
        throw fail(key, `"${key}" in ${source} must be the input file as a string (or "-" for stdin); got ${describe(raw)}`);
      input = raw;
      continue;
    }
    if (key === 'config') throw fail(key, `"config" in ${source}: a config file cannot name another config file`);
    const spelling = spellings.get(key);
    if (!spelling) {
      const closest = closestName(key, [...spellings.keys(), INPUT_KEY]);
      throw fail(
        key,
        `unknown option "${key}" in ${source}; ${closest ? `did you mean "${closest}"?` : `see ddb-spread ${command.name()} --help for the options`}`,
      );
    }
    const { option, negated } = spelling;
    const earlier = seen.get(option);
    if (earlier !== undefined) throw fail(key, `"${earlier}" and "${key}" in ${source} are the same option (${option.flags}); keep one`);
    seen.set(option, key);
    if (raw === null) continue;
    parsed.push({ option, value: parseValue(command, option, negated, key, raw, source, fail) });
  }

  for (const { option, value } of parsed) {
    const name = option.attributeName();
    const from = command.getOptionValueSource(name);
    // Command line (and environment, implied) values win; only unset options and defaults are replaced.
    if (from === undefined || from === 'default') command.setOptionValueWithSource(name, value, 'config');
  }
  return input;
}

/**
 * Adds `--config <file>` to `load` or `estimate` and a preAction hook that applies the file before the
 * action runs. Call it after the command's options and argument are defined. Because commander checks
 * mandatory options and required arguments before any hook runs, this makes them optional for
 * commander and checks them itself after the config is applied, with commander's own messages and codes
 * (so `--table` and the file may come from the config). Config errors are reported through
 * command.error() (stderr, exit code 1, CommanderError code "ddb-spread.invalidConfig" under exitOverride).
 * Calling it twice on one command does nothing the second time.
 */
export function attachConfigOption(command: Command): Command {
  if (command.options.some((option) => option.long === CONFIG_FLAG)) return command;
  const mandatory = command.options.filter((option) => option.mandatory);
  for (const option of mandatory) option.makeOptionMandatory(false);
  const fileArgument = command.registeredArguments[0];
  const fileRequired = fileArgument !== undefined && fileArgument.required;
  if (fileRequired) fileArgument.argOptional();

  command.addOption(tableOption(command.name() as CommandName, CONFIG_FLAG));
  command.hook('preAction', async () => {
    const path = command.getOptionValue('config') as string | undefined;
    let input: string | undefined;
    if (path !== undefined) {
      try {
        input = applyConfig(command, await readConfigFile(path), path);
      } catch (error) {
        if (error instanceof LoaderError) command.error(`error: ${error.message}`, { exitCode: 1, code: 'ddb-spread.invalidConfig' });
        throw error;
      }
    }
    const orInConfig = (key: string) => (path === undefined ? '' : ` (on the command line or as "${key}" in ${path})`);
    for (const option of mandatory) {
      if (command.getOptionValue(option.attributeName()) === undefined) {
        command.error(`error: required option '${option.flags}' not specified${orInConfig(option.attributeName())}`, {
          code: 'commander.missingMandatoryOptionValue',
        });
      }
    }
    const given = command.processedArgs[0] as unknown;
    if (fileRequired && (given === undefined || (Array.isArray(given) && given.length === 0))) {
      if (input === undefined)
        command.error(`error: missing required argument '${fileArgument.name()}'${orInConfig(INPUT_KEY)}`, { code: 'commander.missingArgument' });
      // A variadic file argument (several inputs) takes a list.
      const value = fileArgument.parseArg ? fileArgument.parseArg(input, fileArgument.defaultValue) : input;
      command.processedArgs[0] = fileArgument.variadic ? [value] : value;
    }
  });
  return command;
}

/** The keys a config file for `command` accepts (besides "input"): made from its options, so from the option table. */
export function configKeys(command: Command): string[] {
  return [...spellingsOf(command).keys()];
}

/** Config key -> option: camelCase attribute names and kebab-case long names; "pacing" and "no-pacing" both. */
function spellingsOf(command: Command): Map<string, Spelling> {
  const spellings = new Map<string, Spelling>();
  const add = (name: string, spelling: Spelling) => {
    const existing = spellings.get(name);
    // With both --x and --no-x defined, "x" means the positive option.
    if (!existing || (existing.option.negate && !spelling.option.negate)) spellings.set(name, spelling);
  };
  for (const option of command.options) {
    if (option.long === undefined || option.long === CONFIG_FLAG) continue;
    const long = option.long.replace(/^--/, '');
    const attribute = option.attributeName();
    add(attribute, { option, negated: false });
    add(toKebab(attribute), { option, negated: false });
    if (option.negate) {
      add(long, { option, negated: true });
      add(toCamel(long), { option, negated: true });
    }
  }
  return spellings;
}

function parseValue(
  command: Command,
  option: Option,
  negated: boolean,
  key: string,
  raw: unknown,
  source: string,
  fail: (key: string, message: string, cause?: unknown) => LoaderError,
): unknown {
  // A flag without a value: --infer, --strict, or a negatable --no-pacing (isBoolean() is false for those).
  if (!option.required && !option.optional) {
    if (typeof raw !== 'boolean') throw fail(key, `"${key}" in ${source} must be true or false (as ${option.long}), got ${describe(raw)}`);
    return negated ? !raw : raw;
  }
  if (option.optional && raw === true) return option.presetArg ?? true;

  // The argParser of a repeatable flag (--shard, --gsi, --types) takes the value so far; a choices parser does too but is not repeatable.
  const repeatable = option.variadic || (option.argChoices === undefined && (option.parseArg?.length ?? 0) >= 2);
  let texts: string[];
  if (Array.isArray(raw)) {
    if (option.parseArg === parseColumnsOption) texts = [raw.map((item) => textOf(key, item, source, option, fail)).join(',')];
    else if (repeatable) texts = raw.map((item) => textOf(key, item, source, option, fail));
    else throw fail(key, `"${key}" in ${source} takes one value (${option.long} is not repeatable), got a list`);
  } else if (typeof raw === 'object' && raw !== null && !isLosslessNumber(raw) && option.parseArg === parseTypesOption) {
    texts = Object.entries(raw).map(([name, type]) => `${name}:${textOf(key, type, source, option, fail)}`);
  } else {
    texts = [textOf(key, raw, source, option, fail)];
  }

  let value: unknown = command.getOptionValue(option.attributeName());
  for (const text of texts) {
    if (option.argChoices && !option.argChoices.includes(text)) {
      throw fail(key, `"${key}" in ${source} must be one of ${option.argChoices.join(', ')}; got "${text}"`);
    }
    if (!option.parseArg) {
      value = text;
      continue;
    }
    try {
      value = option.parseArg(text, value);
    } catch (error) {
      throw fail(key, `invalid value for "${key}" in ${source} (${option.long}): ${(error as Error).message}`, error);
    }
  }
  return value;
}

/** A config value as the text the flag would get on the command line: strings as they are, numbers as written. */
function textOf(key: string, value: unknown, source: string, option: Option, fail: (key: string, message: string) => LoaderError): string {
  if (typeof value === 'string') return value;
  if (isLosslessNumber(value)) return value.value;
  if (typeof value === 'number' && Number.isFinite(value)) return String(value);
  throw fail(key, `"${key}" in ${source} must be a string or a number (the value of ${option.long}), got ${describe(value)}`);
}

function describe(value: unknown): string {
  if (Array.isArray(value)) return 'a list';
  if (isLosslessNumber(value)) return value.value;
  if (typeof value === 'object' && value !== null) return 'an object';
  return JSON.stringify(value) ?? String(value);
}

const toKebab = (name: string) => name.replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`);
const toCamel = (name: string) => name.replace(/-([a-z])/g, (_, c: string) => c.toUpperCase());

function lineAndColumn(text: string, position: number): { line: number; column: number } {
  const before = text.slice(0, position).split('\n');
  return { line: before.length, column: before[before.length - 1]!.length + 1 };
}

/** The known name closest to `key` (optimal string alignment distance, case-insensitive), if close enough to be a typo. */
function closestName(key: string, names: string[]): string | undefined {
  const wanted = key.toLowerCase();
  let best: string | undefined;
  let bestDistance = Math.max(1, Math.floor(key.length * 0.4)) + 1;
  for (const name of names) {
    const d = editDistance(wanted, name.toLowerCase());
    // On a tie prefer the spelling style of the key (kebab-case vs camelCase).
    if (d < bestDistance || (d === bestDistance && best !== undefined && sameStyle(key, name) && !sameStyle(key, best))) {
      best = name;
      bestDistance = d;
    }
  }
  return best;
}

const sameStyle = (a: string, b: string) => /[A-Z]/.test(a) === /[A-Z]/.test(b);

function editDistance(a: string, b: string): number {
  const d: number[][] = Array.from({ length: a.length + 1 }, (_, i) => Array.from({ length: b.length + 1 }, (_, j) => (i === 0 ? j : j === 0 ? i : 0)));
  for (let i = 1; i <= a.length; i++) {
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      let v = Math.min(d[i - 1]![j]! + 1, d[i]![j - 1]! + 1, d[i - 1]![j - 1]! + cost);
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) v = Math.min(v, d[i - 2]![j - 2]! + 1);
      d[i]![j] = v;
    }
  }
  return d[a.length]![b.length]!;
}
