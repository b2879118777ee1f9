/**
 * The options reference in Markdown, made from the option table: one table per group, as --help groups
 * them. `npm run docs:options` writes it between the markers below in whichever doc holds them;
 * test/unit/cli/optionTable.test.ts fails when the doc and the table differ.
 */
import { COMMANDS, OPTION_GROUPS, OPTION_TABLE, describedFor, type CommandName, type OptionGroup, type OptionSpec } from './optionTable.js';

export const BEGIN_MARKER = '<!-- options:begin -->';
export const END_MARKER = '<!-- options:end -->';

/** Plain text in a Markdown table cell: a pipe would end the cell, a "<" could open an HTML tag. */
const cell = (text: string) => text.replace(/\|/g, '\\|').replace(/</g, '&lt;');
const code = (text: string) => `\`${text.replace(/\|/g, '\\|')}\``;
const sentence = (text: string) => text.charAt(0).toUpperCase() + text.slice(1);

function defaultCell(spec: OptionSpec): string {
  const byText = new Map<string, CommandName[]>();
  for (const command of spec.commands) {
    const text = spec.required?.includes(command) ? 'required' : (describedFor(spec, command).defaultText ?? '—');
    byText.set(text, [...(byText.get(text) ?? []), command]);
  }
  if (byText.size === 1) return cell([...byText.keys()][0]!);
  return [...byText].map(([text, commands]) => `${cell(text)} (${commands.join(', ')})`).join('; ');
}

function row(spec: OptionSpec, groupCommands: readonly CommandName[]): string {
  const only = spec.commands.length < groupCommands.length ? ` (${spec.commands.map((c) => `\`${c}\``).join(', ')} only)` : '';
  const meaning = spec.doc ?? cell(sentence(spec.description));
  return `| ${code(spec.flags)} | ${spec.type} | ${defaultCell(spec)} | ${meaning}${only} |`;
}

/** The Markdown that goes between the markers. */
export function renderOptionReference(): string {
  const lines = ['<!-- Made from src/cli/optionTable.ts by `npm run docs:options`: edit the table, then run it. -->'];
  for (const group of Object.keys(OPTION_GROUPS) as OptionGroup[]) {
    const specs = OPTION_TABLE.filter((spec) => spec.group === group);
    const commands = COMMANDS.filter((command) => specs.some((spec) => spec.commands.includes(command)));
    lines.push(
      '',
      `**${OPTION_GROUPS[group]}** (${commands.map((c) => `\`${c}\``).join(', ')})`,
      '',
      '| Option | Type | Default | Meaning |',
      '|---|---|---|---|',
      ...specs.map((spec) => row(spec, commands)),
    );
  }
  return `${lines.join('\n')}\n`;
}

/** `doc` with the text between the markers replaced by the reference; undefined when it has no markers. */
export function withOptionReference(doc: string): string | undefined {
  const begin = doc.indexOf(BEGIN_MARKER);
  const end = doc.indexOf(END_MARKER);
  if (begin < 0 || end < begin) return undefined;
  return `${doc.slice(0, begin + BEGIN_MARKER.length)}\n${renderOptionReference()}${doc.slice(end)}`;
}

/** The text between the markers of a doc, as withOptionReference writes it; undefined without markers. */
export function optionReferenceIn(doc: string): string | undefined {
  const begin = doc.indexOf(BEGIN_MARKER);
  const end = doc.indexOf(END_MARKER);
  if (begin < 0 || end < begin) return undefined;
  return doc.slice(begin + BEGIN_MARKER.length + 1, end);
}
