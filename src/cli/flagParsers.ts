/**
 * commander's argParsers: each turns a flag's text into its value, or says what the text should look like
 * (InvalidArgumentError, which commander reports with exit code 64). The option table (optionTable.ts)
 * names one per flag; the ranges and rules of the options themselves are normalizeOptions'.
 */
import { InvalidArgumentError } from 'commander';
import { mergeOwn } from '../shared/ownRecord.js';
import { INTEGER_RANGES, MIN_MEMORY_BYTES, parseByteSize, parseTypeList } from '../load/options.js';
import { parseShardRule, type ShardRule, type SuffixBase } from '../sharding/shardRule.js';
import { parseWcuSpec, type WcuSpec } from '../pacing/rateChoice.js';
import { parseGsi, parseKeyAttribute } from '../estimating/offlineTable.js';
import type { IndexInfo } from '../shared/tableInfo.js';
import type { KeyAttribute } from '../shared/types.js';
import { parseSegment, type Segment } from '../load/segment.js';
import type { ColumnType } from '../typing/typeMap.js';
import { parseRcuSpec } from '../pacing/readRate.js';
import { parseSampleShare } from '../verifying/sampling.js';

/** --outage-timeout: a duration, in seconds without a unit, or with ms, s, m or h ("90", "1.5s", "5m"); in ms. */
export function parseDurationOption(value: string): number {
  const match = /^(\d+(?:\.\d+)?)\s*(ms|s|m|h)?$/.exec(value.trim());
  const ms = match ? Math.round(Number(match[1]) * { ms: 1, s: 1000, m: 60_000, h: 3_600_000 }[match[2] ?? 's']!) : NaN;
  const [min, max] = INTEGER_RANGES.outageTimeoutMs;
  if (!(ms >= min && ms <= max)) throw new InvalidArgumentError(`expected a duration from 0.1 s to 24 h, such as 90, 90s, 5m or 1h, got "${value}".`);
  return ms;
}

/** commander argParser for integers in a range (ncu's parseNumberOption). */
export function parseIntegerOption(min: number, max: number) {
  return (value: string): number => {
    const n = Number(value);
    if (!/^\d+$/.test(value.trim()) || !Number.isSafeInteger(n) || n < min || n > max) {
      throw new InvalidArgumentError(`expected an integer from ${min} to ${max}, got "${value}".`);
    }
    return n;
  };
}

export function parseColumnsOption(value: string): string[] {
  const columns = value.split(',').map((c) => c.trim());
  if (columns.some((c) => c === '')) throw new InvalidArgumentError('expected comma-separated attribute names, like id,name,price.');
  return columns;
}

export function parseTypesOption(value: string, previous: Record<string, ColumnType> | undefined): Record<string, ColumnType> {
  try {
    return mergeOwn(previous, parseTypeList(value));
  } catch (error) {
    throw new InvalidArgumentError((error as Error).message.replace(/^--types /, ''));
  }
}

export function parseMemoryOption(value: string): number {
  let bytes: number;
  try {
    bytes = parseByteSize(value);
  } catch (error) {
    throw new InvalidArgumentError(`${(error as Error).message}.`);
  }
  if (bytes < MIN_MEMORY_BYTES) throw new InvalidArgumentError(`expected at least 64KB, got "${value}".`);
  return bytes;
}

/** commander argParser for --wcu: a number, auto or auto:P%. */
export function parseWcuOption(value: string): WcuSpec {
  try {
    return parseWcuSpec(value);
  } catch (error) {
    throw new InvalidArgumentError(`${(error as Error).message.replace(/^--wcu /, '')}.`);
  }
}

/** commander argParser for a positive rate in write units per second (--key-wcu). */
export function parseRateOption(value: string): number {
  const n = Number(value);
  if (!/^\d+(\.\d+)?$/.test(value.trim()) || !(n >= 1) || !Number.isFinite(n))
    throw new InvalidArgumentError(`expected write units per second, a number from 1 up, got "${value}".`);
  return n;
}

/** commander argParser for --segment i/N. */
export function parseSegmentOption(value: string): Segment {
  try {
    return parseSegment(value);
  } catch (error) {
    throw new InvalidArgumentError(`${(error as Error).message.replace(/^--segment /, '')}.`);
  }
}

/** commander argParser for --partition-key / --sort-key: name:TYPE. */
export function parseKeyOption(flag: string) {
  return (value: string): KeyAttribute => {
    try {
      return parseKeyAttribute(value, flag);
    } catch (error) {
      throw new InvalidArgumentError(`${(error as Error).message.replace(`${flag} `, '')}.`);
    }
  };
}

/** commander argParser for the repeatable --gsi. */
export function parseGsiOption(value: string, previous: IndexInfo[] | undefined): IndexInfo[] {
  try {
    return [...(previous ?? []), parseGsi(value)];
  } catch (error) {
    throw new InvalidArgumentError(`${(error as Error).message.replace(/^--gsi /, '')}.`);
  }
}

/** commander argParser for a price in USD (0 or more). */
export function parsePriceOption(value: string): number {
  const n = Number(value);
  if (!/^\d+(\.\d+)?$/.test(value.trim()) || !Number.isFinite(n)) throw new InvalidArgumentError(`expected a price in USD such as 0.625, got "${value}".`);
  return n;
}

/** commander argParser for --shard-base: the first number suffix, 0 or 1. */
export function parseShardBaseOption(value: string): SuffixBase {
  if (value !== '0' && value !== '1') throw new InvalidArgumentError(`expected 0 or 1, got "${value}".`);
  return Number(value) as SuffixBase;
}

/** commander argParser for the repeatable --shard. */
export function parseShardOption(value: string, previous: ShardRule[] | undefined): ShardRule[] {
  try {
    return [...(previous ?? []), parseShardRule(value)];
  } catch (error) {
    throw new InvalidArgumentError((error as Error).message.replace(/^--shard /, ''));
  }
}

/** commander argParser for the repeatable --value attribute=value of get. */
export function parseValueOption(value: string, previous: Record<string, string> | undefined): Record<string, string> {
  const at = value.indexOf('=');
  if (at <= 0) throw new InvalidArgumentError(`expected attribute=value, got "${value}".`);
  return { ...previous, [value.slice(0, at)]: value.slice(at + 1) };
}

export function parseDelimiterOption(value: string): string {
  if (value === 'tab' || value === '\\t') return '\t';
  if (value.length === 0) throw new InvalidArgumentError('expected a delimiter such as "," ";" "|" or "tab".');
  return value;
}

/** verify's --rcu: read units per second above 0, or "auto" / "auto:P%" (kept as text, read by verify). */
export function parseRcuOption(value: string): number | string {
  try {
    const spec = parseRcuSpec(value);
    return spec.kind === 'fixed' ? spec.rcu : `auto:${spec.percent}%`;
  } catch {
    throw new InvalidArgumentError(`expected read units per second above 0 (such as 100), "auto" or "auto:P%" (such as auto:50%), got "${value}".`);
  }
}

/** verify's --scan: a number of Scan segments from 1 to 1,000,000, or auto. */
export function parseScanOption(value: string): number | 'auto' {
  if (value.trim() === 'auto') return 'auto';
  try {
    return parseIntegerOption(1, 1_000_000)(value);
  } catch {
    throw new InvalidArgumentError(`expected a number of Scan segments from 1 to 1000000, or auto, got "${value}".`);
  }
}

/** verify's --key-rcu: read units per second for one partition key, from 1 up. */
export function parseKeyRcuOption(value: string): number {
  const n = Number(value);
  if (!/^\d+(\.\d+)?$/.test(value.trim()) || !(n >= 1) || !Number.isFinite(n))
    throw new InvalidArgumentError(`expected read units per second, a number from 1 up, got "${value}".`);
  return n;
}

/** verify's --sample: a share of the keys, "1%" or "0.5%" (the % may be left out), as a share in (0, 1]. */
export function parseSampleOption(value: string): number {
  const share = parseSampleShare(value);
  if (typeof share === 'string') throw new InvalidArgumentError(`${share}.`);
  return share;
}
