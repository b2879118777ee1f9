/**
 * The chain check of DynamoDB exports: every way a chain can be wrong is named, and
 * any order of a valid chain is either the chain order or refused naming that order.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { chainOrder, chainProblems, checkExportChain, manifestTime, type ExportManifest } from '../../../src/reading/exportChain.js';
import { LoaderError } from '../../../src/shared/errors.js';

const TABLE = 'arn:aws:dynamodb:us-east-1:123456789012:table/Source';
const h = (hour: number) => Date.UTC(2026, 10, 1, hour);
const full = (name: string, hour: number, tableArn = TABLE): ExportManifest => ({
  name,
  type: 'FULL_EXPORT',
  tableArn,
  exportTime: h(hour),
  fromTime: undefined,
  toTime: undefined,
});
const inc = (name: string, from: number, to: number, tableArn = TABLE): ExportManifest => ({
  name,
  type: 'INCREMENTAL_EXPORT',
  tableArn,
  exportTime: undefined,
  fromTime: h(from),
  toTime: h(to),
});
const kinds = (exports: ExportManifest[]) => chainProblems(exports).map((p) => p.kind);

describe('chainProblems', () => {
  it('a chain as AWS makes it: full at T, incrementals from T, each from the previous end', () => {
    expect(chainProblems([full('F', 0), inc('I1', 0, 1), inc('I2', 1, 2), inc('I3', 2, 5)])).toEqual([]);
    // One export alone, incrementals alone (applied to a table loaded before), a full alone.
    expect(chainProblems([inc('I2', 1, 2)])).toEqual([]);
    expect(chainProblems([inc('I1', 0, 1), inc('I2', 1, 2)])).toEqual([]);
    expect(chainProblems([full('F', 0)])).toEqual([]);
  });

  it('a first incremental may start before the full export, if it ends after it', () => {
    expect(chainProblems([full('F', 3), inc('I1', 1, 4), inc('I2', 4, 5)])).toEqual([]);
    const stale = chainProblems([full('F', 3), inc('I1', 1, 3)]);
    expect(stale.map((p) => p.kind)).toEqual(['stale']);
    expect(stale[0]!.message).toMatch(/F is the table at 2026-11-01T03:00:00.000Z, but I1 ends at 2026-11-01T03:00:00.000Z, not after it/);
  });

  it('out of order: named, with the order to give', () => {
    const problems = chainProblems([full('FULL', 0), inc('INCR2', 1, 2), inc('INCR1', 0, 1)]);
    expect(problems.map((p) => p.kind)).toEqual(['order']);
    expect(problems[0]!.message).toMatch(
      /exports are out of order: given FULL, INCR2, INCR1; in chain order .*: FULL \(full, .*\), INCR1 \(incremental, .*\), INCR2 \(incremental/,
    );
    const late = chainProblems([inc('I1', 0, 1), full('F', 0)]);
    expect(late.map((p) => p.kind)).toEqual(['order']);
    expect(late[0]!.message).toMatch(/the full export F is not first/);
  });

  it('a gap: after the full export, or between incrementals (INCR1 skipped)', () => {
    const skipped = chainProblems([full('FULL', 0), inc('INCR2', 1, 2)]);
    expect(skipped.map((p) => p.kind)).toEqual(['gap']);
    expect(skipped[0]!.message).toMatch(/gap: the full export FULL is the table at 2026-11-01T00:00:00.000Z, but INCR2 starts at 2026-11-01T01:00:00.000Z/);
    expect(kinds([full('F', 0), inc('I1', 0, 1), inc('I3', 2, 3)])).toEqual(['gap']);
    expect(kinds([inc('I1', 0, 1), inc('I3', 2, 3)])).toEqual(['gap']);
  });

  it('an overlap between incrementals, including one window inside another and the same window twice', () => {
    const overlap = chainProblems([full('F', 0), inc('I1', 0, 2), inc('I2', 1, 3)]);
    expect(overlap.map((p) => p.kind)).toEqual(['overlap']);
    expect(overlap[0]!.message).toMatch(/overlap: I1 ends at 2026-11-01T02:00:00.000Z, but I2 starts before, at 2026-11-01T01:00:00.000Z/);
    expect(kinds([full('F', 0), inc('I1', 0, 3), inc('I2', 1, 2)])).toEqual(['overlap']);
    expect(kinds([full('F', 0), inc('I1', 0, 1), inc('again', 0, 1)])).toEqual(['overlap']);
    // Under a second: the API's whole seconds, not an overlap; a second is one. A gap of 1 ms is a gap.
    const at = (e: ExportManifest, fromTime: number) => ({ ...e, fromTime });
    expect(kinds([full('F', 0), inc('I1', 0, 1), at(inc('I2', 1, 2), h(1) - 999)])).toEqual([]);
    expect(kinds([full('F', 0), inc('I1', 0, 1), at(inc('I2', 1, 2), h(1) - 1000)])).toEqual(['overlap']);
    expect(kinds([full('F', 0), inc('I1', 0, 1), at(inc('I2', 1, 2), h(1) + 1)])).toEqual(['gap']);
    expect(kinds([full('F', 0), at(inc('I1', 0, 1), h(0) + 1)])).toEqual(['gap']);
  });

  it('several tables, two full exports, a manifest without its times or table', () => {
    const tables = chainProblems([full('F', 0), inc('I1', 0, 1, 'arn:aws:dynamodb:us-east-1:123456789012:table/Other')]);
    expect(tables.map((p) => p.kind)).toEqual(['tables']);
    expect(tables[0]!.message).toMatch(/2 tables: .*table\/Source \(F\); .*table\/Other \(I1\)/);
    const fulls = chainProblems([full('A', 0), full('B', 1), inc('I', 1, 2)]);
    expect(fulls.map((p) => p.kind)).toContain('fulls');
    expect(fulls.find((p) => p.kind === 'fulls')!.message).toMatch(/A \(full, .*\) and B \(full, .*\) are 2 full exports: .*pass the one wanted/);
    const bare = chainProblems([full('F', 0), { ...inc('I', 0, 1), fromTime: undefined, tableArn: undefined }]);
    expect(bare.map((p) => p.kind)).toEqual(['unknown']);
    expect(bare[0]!.message).toBe('I/manifest-summary.json has no tableArn, exportFromTime: its place in the chain cannot be checked');
    expect(kinds([full('F', 0), inc('I', 2, 1)])).toEqual(['unknown']);
  });

  it('manifest times: ISO-8601 text only', () => {
    expect(manifestTime('2020-11-04T07:28:34.028Z')).toBe(Date.UTC(2020, 10, 4, 7, 28, 34, 28));
    expect(manifestTime(1_600_000_000)).toBeUndefined();
    expect(manifestTime('yesterday')).toBeUndefined();
    expect(manifestTime('2020-13-45T99:00:00Z')).toBeUndefined();
  });
});

describe('checkExportChain', () => {
  it('refuses with every problem and the override, or lets it through with a warning', () => {
    const given = [full('FULL', 0), inc('INCR2', 1, 2), inc('INCR1', 0, 1)];
    let error: unknown;
    try {
      checkExportChain(given, false);
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(LoaderError);
    expect((error as LoaderError).code).toBe('INVALID_OPTION');
    expect((error as LoaderError).message).toMatch(/do not form one chain.*nothing was written:\n {2}- the exports are out of order/s);
    expect((error as LoaderError).message).toMatch(/--allow-broken-export-chain to load them as given \(the table may miss changes/);
    const warnings = checkExportChain(given, true);
    expect(warnings).toHaveLength(1);
    expect(warnings[0]).toMatch(/^--allow-broken-export-chain: .*loaded as given.*\n {2}- the exports are out of order/s);
    expect(checkExportChain([full('F', 0), inc('I1', 0, 1)], false)).toEqual([]);
  });
});

describe('chain order (property)', () => {
  /** A valid chain: an optional full export at T, then incrementals meeting end to start. */
  const validChain = fc
    .record({
      withFull: fc.boolean(),
      start: fc.integer({ min: 0, max: 5 }),
      firstBefore: fc.integer({ min: 0, max: 2 }),
      lengths: fc.array(fc.integer({ min: 1, max: 4 }), { minLength: 0, maxLength: 6 }),
    })
    .map(({ withFull, start, firstBefore, lengths }) => {
      const chain: ExportManifest[] = [];
      if (withFull) chain.push(full('F', start));
      let at = start;
      for (const [i, length] of lengths.entries()) {
        // The first incremental after a full export may start before it (and ends after it).
        const from = i === 0 && withFull ? at - Math.min(firstBefore, length - 1) : at;
        chain.push(inc(`I${i}`, from, at + length));
        at += length;
      }
      return chain;
    });

  it('any permutation of a valid chain is either that chain or refused naming the chain order', () => {
    fc.assert(
      fc.property(
        validChain.chain((chain) => fc.tuple(fc.constant(chain), fc.shuffledSubarray(chain, { minLength: chain.length, maxLength: chain.length }))),
        ([chain, shuffled]) => {
          expect(chainProblems(chain)).toEqual([]);
          expect(chainOrder(shuffled)).toEqual(chain);
          const problems = chainProblems(shuffled);
          if (shuffled.every((e, i) => e === chain[i])) {
            expect(problems).toEqual([]);
          } else {
            expect(problems.map((p) => p.kind)).toEqual(['order']);
            const listed = /in chain order[^:]*: (.*)$/.exec(problems[0]!.message)![1]!;
            expect(listed.split(/ \([^)]*\)(?:, )?/).filter(Boolean)).toEqual(chain.map((e) => e.name));
          }
        },
      ),
      { numRuns: 300 },
    );
  });

  it('dropping an incremental from the middle of a valid chain is a gap, whatever the order given', () => {
    fc.assert(
      fc.property(
        validChain.filter((c) => c.filter((e) => e.type === 'INCREMENTAL_EXPORT').length >= 3).chain((chain) => fc.tuple(fc.constant(chain), fc.nat())),
        fc.nat(),
        ([chain], pick) => {
          const incrementals = chain.filter((e) => e.type === 'INCREMENTAL_EXPORT');
          const dropped = incrementals[1 + (pick % (incrementals.length - 2))]!;
          const rest = chain.filter((e) => e !== dropped);
          expect(chainProblems(rest).map((p) => p.kind)).toEqual(['gap']);
          expect(chainProblems([...rest].reverse()).map((p) => p.kind)).toEqual(['order', 'gap']);
        },
      ),
      { numRuns: 200 },
    );
  });
});
