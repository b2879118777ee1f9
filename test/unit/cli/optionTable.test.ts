/**
 * The option table is the one declaration of every flag: the commands' commander options, their --help,
 * the config file's keys and the options reference in the docs are made from it. These tests fail when
 * one of them is edited alone (a flag added by hand to a command, a reference edited without
 * `npm run docs:options`), and check the table's mapping of flags to load() options against toLoadOptions.
 */
import { Help, Option, type Command } from 'commander';
import { mkdtemp, readFile, readdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { configKeys } from '../../../src/cli/config.js';
import { buildProgram } from '../../../src/cli/main.js';
import { OPTION_GROUPS, OPTION_TABLE, COMMANDS, describedFor, longFlag, optionsOf, type CommandName } from '../../../src/cli/optionTable.js';
import { optionReferenceIn, renderOptionReference } from '../../../src/cli/optionReference.js';
import { addReadCommands } from '../../../src/cli/readCommands.js';
import { toLoadOptions, type LoadFlags } from '../../../src/cli/options.js';
import type { LoadOptions } from '../../../src/load/options.js';

const ROOT = new URL('../../../', import.meta.url).pathname;
const sink = { write: () => true } as unknown as NodeJS.WritableStream;

/** The real program, with load, estimate, query and get. */
function program(): { sub: (name: CommandName) => Command; loadFlags: () => Promise<LoadFlags> } {
  let captured: LoadFlags | undefined;
  const root = buildProgram(async (_input, flags) => void (captured = flags), { stdout: sink, stderr: sink });
  addReadCommands(root, { stdout: sink, stderr: sink }, () => undefined);
  const sub = (name: CommandName) => root.commands.find((command) => command.name() === name)!;
  return {
    sub,
    loadFlags: async () => {
      await root.parseAsync(['load', 'in.csv', '--table', 'Orders'], { from: 'user' });
      return captured!;
    },
  };
}

const ownOptions = (command: Command) => command.options.filter((option) => option.long !== '--help');
const squeeze = (text: string) => text.replace(/\s+/g, ' ');

describe('the option table', () => {
  it("verify takes every option of load but --dry-run: a load's summary prints its own command line as verify's, and a job file serves both", () => {
    const verify = new Set(optionsOf('verify').map(longFlag));
    const missing = optionsOf('load')
      .map(longFlag)
      .filter((flag) => flag !== '--dry-run' && !verify.has(flag));
    expect(missing).toEqual([]);
  });

  it('names each value as commander does, and no command takes a flag or a key twice', () => {
    for (const spec of OPTION_TABLE) expect(new Option(spec.flags).attributeName(), spec.flags).toBe(spec.key);
    for (const command of COMMANDS) {
      const specs = optionsOf(command);
      expect(new Set(specs.map(longFlag)).size, command).toBe(specs.length);
      expect(new Set(specs.map((spec) => spec.key)).size, command).toBe(specs.length);
    }
  });

  it('lists the groups in table order, so --help shows each group once', () => {
    const groups = OPTION_TABLE.map((spec) => spec.group).filter((group, i, all) => i === 0 || all[i - 1] !== group);
    expect(groups).toEqual(Object.keys(OPTION_GROUPS));
  });

  it('keeps defaults out of the descriptions: help prints each default once, from defaultText', () => {
    for (const spec of OPTION_TABLE)
      for (const command of spec.commands) {
        // "(default attribute: the sort key)" in --shard is about a rule's part, not the flag's default.
        expect(describedFor(spec, command).description, `${spec.flags} on ${command}`).not.toMatch(/default(?! attribute)/);
      }
  });
});

describe.each(COMMANDS)('%s', (name) => {
  it("has exactly the table's options, in its order, as the table describes them", () => {
    const command = program().sub(name);
    const expected = optionsOf(name).map((spec) => {
      const { description, defaultText } = describedFor(spec, name);
      return {
        flags: spec.flags,
        description,
        default: defaultText,
        group: `${OPTION_GROUPS[spec.group]}:`,
        mandatory: spec.required?.includes(name) ?? false,
      };
    });
    const actual = ownOptions(command).map((option) => ({
      flags: option.flags,
      description: option.description,
      default: option.defaultValueDescription,
      group: option.helpGroupHeading,
      // attachConfigOption makes --table optional for commander and checks it itself.
      mandatory: option.mandatory || (option.long === '--table' && (name === 'load' || name === 'verify')),
    }));
    // --help lists groups in order of first appearance, so the order that counts is within each group
    // (attachConfigOption adds --config last, to the job group).
    const headings = [...new Set(optionsOf(name).map((spec) => `${OPTION_GROUPS[spec.group]}:`))];
    const byGroup = <T extends { group: string | undefined }>(list: T[]) => headings.flatMap((heading) => list.filter((entry) => entry.group === heading));
    expect(byGroup(actual)).toEqual(byGroup(expected));
    expect(actual).toHaveLength(expected.length);
  });

  it('prints every option in --help under its group, with its default once', () => {
    const command = program().sub(name);
    const help = squeeze(command.helpInformation());
    let at = 0;
    for (const group of new Set(optionsOf(name).map((spec) => spec.group))) {
      const heading = help.indexOf(` ${OPTION_GROUPS[group]}: `);
      expect(heading, `${group} heading`).toBeGreaterThanOrEqual(at);
      at = heading;
    }
    for (const option of ownOptions(command)) {
      const text = squeeze(new Help().optionDescription(option));
      const line = squeeze(command.createHelp().optionDescription(option));
      expect(help, option.flags).toContain(squeeze(option.description));
      if (option.defaultValueDescription !== undefined) expect(line.split('default:').length - 1, option.flags).toBe(1);
      else expect(line, option.flags).toBe(text);
    }
  });
});

describe('help', () => {
  it('says the default order is auto, decided from the data', () => {
    const help = squeeze(program().sub('load').helpInformation());
    expect(help).toMatch(/--order <mode> write order: auto \(decided from the data: .*\(choices: "auto", "stripes",.*default: auto\)/);
  });
});

describe('config file keys', () => {
  it.each(['load', 'estimate', 'verify'] as const)('of %s are the long names and keys of its options in the table', (name) => {
    const expected = optionsOf(name)
      .filter((spec) => longFlag(spec) !== '--config')
      .flatMap((spec) => {
        const long = longFlag(spec).slice(2);
        const kebab = spec.key.replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`);
        const negated = long.startsWith('no-') ? [long, long.replace(/-([a-z])/g, (_, c: string) => c.toUpperCase())] : [];
        return [spec.key, kebab, ...negated];
      });
    expect(new Set(configKeys(program().sub(name)))).toEqual(new Set(expected));
  });
});

describe('options reference', () => {
  it('in the doc that holds the markers is the one made from the table (run npm run docs:options)', async () => {
    const docs = ['README.md', ...(await readdir(join(ROOT, 'docs'))).filter((f) => f.endsWith('.md')).map((f) => join('docs', f))];
    const found: string[] = [];
    for (const doc of docs) {
      const reference = optionReferenceIn(await readFile(join(ROOT, doc), 'utf8'));
      if (reference === undefined) continue;
      found.push(doc);
      expect(reference, doc).toBe(renderOptionReference());
    }
    expect(found).toHaveLength(1);
  });

  it('lists every flag of every command', () => {
    const reference = renderOptionReference();
    for (const spec of OPTION_TABLE) expect(reference).toContain(`| \`${spec.flags.replace(/\|/g, '\\|')}\` |`);
  });
});

/** A value for each flag that maps to a load() option, unlike what the flag's absence gives. */
const SAMPLES: Record<string, unknown> = {
  inputFormat: 'jsonl',
  delimiter: ';',
  columns: ['a', 'b'],
  types: { a: 'N' },
  infer: true,
  empty: 'null',
  timestamps: 'epoch-ms',
  delete: true,
  operationColumn: 'op',
  transform: './fn.mjs',
  allowBrokenExportChain: true,
  table: 'Other',
  region: 'eu-west-1',
  profile: 'p',
  endpointUrl: 'http://localhost:8000',
  caBundle: 'ca.pem',
  s3EndpointUrl: 'http://localhost:9000',
  s3PathStyle: true,
  wcu: { kind: 'fixed', wcu: 100 },
  keyWcu: 50,
  pacing: false,
  concurrency: 3,
  maxAttempts: 4,
  requestTimeout: 5000,
  outageTimeout: 60_000,
  order: 'window',
  window: 100,
  memory: 1_000_000,
  tempDir: '/tmp/x',
  shard: [{ kind: 'random', count: 4 }],
  shardSeparator: '-',
  shardKeys: ['k1'],
  shardKeysFile: 'keys.txt',
  keepOriginalKey: 'orig',
  shardSeed: 7,
  shardBase: 1,
  shardManifest: 'm.json',
  checkpoint: 'c.json',
  segment: { index: 0, count: 2 },
  listing: 'listing.json',
  partsDisjoint: true,
  prewarm: true,
  totalWcu: 10,
  maxRejects: 3,
  strict: true,
  rejects: 'r.jsonl',
  conditionFailures: 'failed.jsonl',
  skipExpired: 'ttl',
  ifNotExists: true,
  itemConditions: true,
  ifNewer: 'updatedAt',
  condition: 'attribute_not_exists(#s) OR #s <> :x',
  conditionNames: '{"#s": "status"}',
  conditionValues: '{":x": {"S": "locked"}}',
  maxCost: 5,
  priceWriteRequest: 1.25,
  priceWcuHour: 0.001,
  priceReadRequest: 0.25,
  priceRcuHour: 0.0002,
};

describe('flag to load() option', () => {
  it('each flag the table maps to a load() option lands in that option', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'ddb-spread-options-'));
    try {
      await writeFile(join(dir, 'keys.txt'), 'k2\n');
      const base = await program().loadFlags();
      const without = await toLoadOptions('in.csv', base);
      for (const spec of optionsOf('load').filter((s) => s.option !== undefined)) {
        expect(Object.keys(SAMPLES), `a sample value for ${spec.flags}`).toContain(spec.key);
        const sample = spec.key === 'shardKeysFile' ? join(dir, 'keys.txt') : SAMPLES[spec.key];
        const options = await toLoadOptions('in.csv', { ...base, [spec.key]: sample } as LoadFlags);
        const field = spec.option as keyof LoadOptions;
        expect(options[field], `${spec.flags} -> ${field}`).not.toEqual(without[field]);
        expect(options[field], `${spec.flags} -> ${field}`).toBeDefined();
      }
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});
