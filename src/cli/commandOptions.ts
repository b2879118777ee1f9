/**
 * The option table (optionTable.ts) made into commander options: one command's flags, grouped in --help
 * by purpose, each default printed once.
 */
import { Option, type Command, type HelpConfiguration } from 'commander';
import { OPTION_GROUPS, describedFor, longFlag, optionsOf, specOf, type CommandName, type OptionSpec } from './optionTable.js';

/** The heading of a group in --help. */
export const groupHeading = (spec: OptionSpec): string => `${OPTION_GROUPS[spec.group]}:`;

/** One spec as a commander Option of `command`. */
export function commanderOption(spec: OptionSpec, command: CommandName): Option {
  const { description, defaultText } = describedFor(spec, command);
  const option = new Option(spec.flags, description).helpGroup(groupHeading(spec));
  if (spec.choices) option.choices([...spec.choices]);
  if (spec.parse) option.argParser(spec.parse as (value: string, previous: unknown) => unknown);
  if (spec.default !== undefined) option.default(spec.default);
  // Shown by optionDescription below whether commander or load() applies the default.
  if (defaultText !== undefined) option.defaultValueDescription = defaultText;
  if (spec.required?.includes(command)) option.makeOptionMandatory();
  return option;
}

/**
 * Adds every option of `name` from the table to `command`, in table order, except `--config`, which
 * config.ts attaches with its hook.
 */
export function addTableOptions(command: Command, name: CommandName): Command {
  for (const spec of optionsOf(name)) if (longFlag(spec) !== '--config') command.addOption(commanderOption(spec, name));
  return command;
}

/** `--long` of `name` as a commander Option, for an option a module attaches itself (--config). */
export function tableOption(name: CommandName, long: string): Option {
  return commanderOption(specOf(name, long), name);
}

/**
 * commander's optionDescription, but the default comes from the table's text even when load() (not
 * commander) applies it, so every default is printed once and the same way: "(default: …)".
 */
export const tableHelp: HelpConfiguration = {
  optionDescription(option: Option): string {
    const extra: string[] = [];
    if (option.argChoices) extra.push(`choices: ${option.argChoices.map((choice) => JSON.stringify(choice)).join(', ')}`);
    if (option.defaultValueDescription !== undefined) extra.push(`default: ${option.defaultValueDescription}`);
    return extra.length > 0 ? `${option.description} (${extra.join(', ')})` : option.description;
  },
};
