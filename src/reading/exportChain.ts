/**
 * Whether DynamoDB exports given to one load form one chain: a full export, then incremental exports whose
 * windows follow one another. Pure: it reads what each export's manifest-summary.json says.
 *
 * What the manifests say (AWS Developer Guide, "DynamoDB table export output format"; API
 * IncrementalExportSpecification): every export names its table (`tableArn`). A full export is the table
 * at one instant, `exportTime`. An incremental export holds, for each item changed in its window, one
 * record of the item as it was at the window's end; the window starts at `exportFromTime` (inclusive) and
 * ends at `exportToTime` (exclusive). AWS's recipe: a full export at T, then incrementals from T, each
 * from the previous one's exportToTime.
 *
 * The rules, after the full export (time T) or the previous incremental (end E):
 * - gap: the next incremental starts after T (or E): the changes made in between are in no export;
 * - overlap: the next incremental starts a second or more before the previous incremental's end E: the
 *   changes of that time are in both, and a chain's windows meet end to start (under a second: ROUNDING_MS);
 * - a first incremental may start before T (its changes before T are already in the full export, and
 *   its records, the items as at its end, replay them to the same values), but must end after T: one
 *   that ends at or before T would take items back to values older than the full export's;
 * - one table, one full export, and the full export first.
 * The right order is the full export, then the incrementals by their windows (start, then end).
 */
import { LoaderError } from '../shared/errors.js';

/** What the chain check needs of one export's manifest-summary.json. */
export interface ExportManifest {
  /** The export folder, for messages. */
  name: string;
  type: 'FULL_EXPORT' | 'INCREMENTAL_EXPORT';
  tableArn: string | undefined;
  /** A full export's exportTime, in ms since the epoch; undefined when the manifest has none. */
  exportTime: number | undefined;
  /** An incremental export's exportFromTime (inclusive), in ms since the epoch. */
  fromTime: number | undefined;
  /** An incremental export's exportToTime (exclusive), in ms since the epoch. */
  toTime: number | undefined;
}

export interface ChainProblem {
  kind: 'unknown' | 'tables' | 'fulls' | 'order' | 'gap' | 'overlap' | 'stale';
  message: string;
}

/** An ISO-8601 time of a manifest, in ms since the epoch; undefined when absent or unreadable. */
export function manifestTime(value: unknown): number | undefined {
  if (typeof value !== 'string' || !/^\d{4}-\d{2}-\d{2}T/.test(value)) return undefined;
  const ms = Date.parse(value);
  return Number.isFinite(ms) ? ms : undefined;
}

const iso = (ms: number) => new Date(ms).toISOString();

/**
 * An overlap under a second is not one: the API takes whole seconds (ExportFromTime "counted in seconds"),
 * so an incremental from the previous one's exportToTime may start up to a second before it. Replaying
 * a change already applied leaves the same value (each record is the item as at its window's end, and
 * the windows still end in order), so rounding that way is safe; a gap, however small, is not tolerated.
 */
const ROUNDING_MS = 1000;

/** A key that sorts a full export first, by its time, then incrementals by window start, then end. */
function sortKey(e: ExportManifest): [number, number, number] {
  const unknown = Number.POSITIVE_INFINITY;
  return e.type === 'FULL_EXPORT' ? [0, e.exportTime ?? unknown, 0] : [1, e.fromTime ?? unknown, e.toTime ?? unknown];
}

/** The exports in chain order: full exports first (by exportTime), then incrementals by window. Stable. */
export function chainOrder<T extends ExportManifest>(exports: readonly T[]): T[] {
  return exports
    .map((e, i) => ({ e, i, k: sortKey(e) }))
    .sort((a, b) => a.k[0] - b.k[0] || cmp(a.k[1], b.k[1]) || cmp(a.k[2], b.k[2]) || a.i - b.i)
    .map(({ e }) => e);
}

const cmp = (a: number, b: number) => (a === b ? 0 : a < b ? -1 : 1);

/** What a manifest lacks for its place in a chain to be checked. */
function missingFields(e: ExportManifest): string[] {
  const missing: string[] = [];
  if (e.tableArn === undefined) missing.push('tableArn');
  if (e.type === 'FULL_EXPORT' && e.exportTime === undefined) missing.push('exportTime');
  if (e.type === 'INCREMENTAL_EXPORT') {
    if (e.fromTime === undefined) missing.push('exportFromTime');
    if (e.toTime === undefined) missing.push('exportToTime');
    if (e.fromTime !== undefined && e.toTime !== undefined && e.fromTime >= e.toTime) missing.push('window that ends after it starts');
  }
  return missing;
}

function describe(e: ExportManifest): string {
  if (e.type === 'FULL_EXPORT') return `${e.name} (full, ${e.exportTime === undefined ? 'no exportTime' : iso(e.exportTime)})`;
  const from = e.fromTime === undefined ? '?' : iso(e.fromTime);
  const to = e.toTime === undefined ? '?' : iso(e.toTime);
  return `${e.name} (incremental, ${from} to ${to})`;
}

/**
 * What keeps `given` (the exports in the order the load would apply them) from being one chain; empty
 * when it is one. A single export is a chain of one (an incremental alone applies its changes to the
 * table as it is).
 */
export function chainProblems(given: readonly ExportManifest[]): ChainProblem[] {
  if (given.length < 2) return [];
  const problems: ChainProblem[] = [];
  for (const e of given) {
    const missing = missingFields(e);
    if (missing.length > 0)
      problems.push({
        kind: 'unknown',
        message: `${e.name}/manifest-summary.json has no ${missing.join(', ')}: its place in the chain cannot be checked`,
      });
  }
  const tables = [...new Set(given.map((e) => e.tableArn).filter((t) => t !== undefined))];
  if (tables.length > 1)
    problems.push({
      kind: 'tables',
      message: `the exports are of ${tables.length} tables: ${tables
        .map(
          (t) =>
            `${t} (${given
              .filter((e) => e.tableArn === t)
              .map((e) => e.name)
              .join(', ')})`,
        )
        .join('; ')}`,
    });
  const fulls = given.filter((e) => e.type === 'FULL_EXPORT');
  if (fulls.length > 1)
    problems.push({
      kind: 'fulls',
      message: `${fulls.map(describe).join(' and ')} are ${fulls.length} full exports: a chain has one full export, then incrementals; pass the one wanted`,
    });
  if (problems.some((p) => p.kind === 'unknown')) return problems;
  const ordered = chainOrder(given);
  if (ordered.some((e, i) => e !== given[i])) {
    const fullLate = fulls.length > 0 && given[0]!.type !== 'FULL_EXPORT';
    problems.push({
      kind: 'order',
      message: `${fullLate ? `the full export ${fulls[0]!.name} is not first` : 'the exports are out of order'}: given ${given.map((e) => e.name).join(', ')}; in chain order (the full export, then incrementals by their windows): ${ordered.map(describe).join(', ')}`,
    });
  }
  // The time the table has reached in the chain so far, and the export that took it there.
  let reached: { time: number; by: ExportManifest } | undefined;
  for (const e of ordered) {
    if (e.type === 'FULL_EXPORT') {
      reached = { time: e.exportTime!, by: e };
      continue;
    }
    if (reached === undefined) {
      reached = { time: e.toTime!, by: e };
      continue;
    }
    const { time, by } = reached;
    const what = by.type === 'FULL_EXPORT' ? `the full export ${by.name} is the table at ${iso(time)}` : `${by.name} ends at ${iso(time)}`;
    if (e.fromTime! > time)
      problems.push({ kind: 'gap', message: `gap: ${what}, but ${e.name} starts at ${iso(e.fromTime!)}: changes made in between are in no export given` });
    else if (by.type === 'INCREMENTAL_EXPORT' && time - e.fromTime! >= ROUNDING_MS)
      problems.push({
        kind: 'overlap',
        message: `overlap: ${what}, but ${e.name} starts before, at ${iso(e.fromTime!)}: a chain's windows meet end to start (each incremental from the previous one's exportToTime)`,
      });
    else if (by.type === 'FULL_EXPORT' && e.toTime! <= time)
      problems.push({
        kind: 'stale',
        message: `${what}, but ${e.name} ends at ${iso(e.toTime!)}, not after it: its records would take items back to older values`,
      });
    if (e.toTime! > time) reached = { time: e.toTime!, by: e };
  }
  return problems;
}

/** The override: exports loaded in the order given whatever their manifests say. */
export const BROKEN_CHAIN_FLAG = '--allow-broken-export-chain';

/** What a load that overrides the check risks, for its help, its refusal and its warning. */
export const BROKEN_CHAIN_RISK = 'the table may miss changes (a gap), keep items deleted or take items back to older values (order), or mix tables';

/**
 * Checks the exports of a load, in the order it would apply them. Not one chain: a refusal (before any
 * write) naming each problem, or with `allowBroken` the warnings to print. One chain: no warning.
 */
export function checkExportChain(given: readonly ExportManifest[], allowBroken: boolean): string[] {
  const problems = chainProblems(given);
  if (problems.length === 0) return [];
  const list = problems.map((p) => `  - ${p.message}`).join('\n');
  if (allowBroken)
    return [`${BROKEN_CHAIN_FLAG}: the DynamoDB exports are loaded as given although they do not form one chain (${BROKEN_CHAIN_RISK}):\n${list}`];
  throw new LoaderError(
    'INVALID_OPTION',
    `the DynamoDB exports given do not form one chain (one table's full export, then its incremental exports, each window starting where the previous one ends); nothing was written:\n${list}\n` +
      `Pass the exports of one chain in chain order, or add ${BROKEN_CHAIN_FLAG} to load them as given (${BROKEN_CHAIN_RISK}).`,
    { file: given[0]!.name },
  );
}
