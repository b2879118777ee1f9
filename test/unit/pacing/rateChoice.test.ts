import { describe, expect, it } from 'vitest';
import {
  chooseRate,
  chooseWholeRate,
  chooseWorkerRate,
  DEFAULT_AUTO_PERCENT,
  NEW_ON_DEMAND_WCU,
  ON_DEMAND_TABLE_QUOTA_WCU,
  parseWcuSpec,
  type WcuSpec,
} from '../../../src/pacing/rateChoice.js';
import type { IndexInfo, TableInfo } from '../../../src/shared/tableInfo.js';
import { loaderErrorOf } from '../../support/thrown.js';

type TableFacts = Parameters<typeof chooseRate>[1];

const provisioned = (wcu: number | undefined, extra: Partial<TableInfo> = {}): TableFacts => ({
  billingMode: 'PROVISIONED',
  ...(wcu === undefined ? {} : { provisionedWcu: wcu }),
  gsis: [],
  ...extra,
});
const onDemand = (extra: Partial<TableInfo> = {}): TableFacts => ({ billingMode: 'PAY_PER_REQUEST', gsis: [], ...extra });
const gsi = (name: string): IndexInfo => ({ name, partitionKey: { name: 'g', type: 'S' }, projection: 'ALL', nonKeyAttributes: [] });

describe('parseWcuSpec', () => {
  it.each<[string, WcuSpec]>([
    ['500', { kind: 'fixed', wcu: 500 }],
    ['1', { kind: 'fixed', wcu: 1 }],
    ['2.5', { kind: 'fixed', wcu: 2.5 }],
    ['  750  ', { kind: 'fixed', wcu: 750 }],
    ['40000', { kind: 'fixed', wcu: 40_000 }],
    ['007', { kind: 'fixed', wcu: 7 }],
    ['auto', { kind: 'auto', percent: 80 }],
    ['AUTO', { kind: 'auto', percent: 80 }],
    [' Auto ', { kind: 'auto', percent: 80 }],
    ['auto:60%', { kind: 'auto', percent: 60 }],
    ['auto:60', { kind: 'auto', percent: 60 }],
    ['auto:100%', { kind: 'auto', percent: 100 }],
    ['auto:1%', { kind: 'auto', percent: 1 }],
    ['auto:12.5%', { kind: 'auto', percent: 12.5 }],
    ['AUTO:75%', { kind: 'auto', percent: 75 }],
  ])('%j -> %j', (text, spec) => {
    expect(parseWcuSpec(text)).toEqual(spec);
  });

  it('auto without a percentage is 80%', () => {
    expect(DEFAULT_AUTO_PERCENT).toBe(80);
  });

  it.each([
    '',
    '   ',
    '0',
    '0.5',
    '-5',
    '+5',
    '1e3',
    '1,000',
    '1_000',
    '.5',
    '5.',
    '0x10',
    'Infinity',
    'NaN',
    '1'.padEnd(400, '0'),
    'ten',
    '100 wcu',
    'auto:',
    'auto:%',
    'auto:0%',
    'auto:0',
    'auto:101%',
    'auto:150',
    'auto:-5%',
    'auto:60%%',
    'auto: 60%',
    'auto60%',
    'automatic',
    'auto:sixty',
  ])('%j -> INVALID_OPTION', (text) => {
    const error = loaderErrorOf(() => parseWcuSpec(text));
    expect(error.code).toBe('INVALID_OPTION');
    expect(error.message).toContain(JSON.stringify(text));
  });

  // rateChoice.ts refuses auto:P% with "takes a percentage from 1 to 100", but its check is percent > 0.
  it.each(['auto:0.5%', 'auto:0.01%'])('%j is refused, as the message says auto:P% takes 1 to 100', (text) => {
    expect(loaderErrorOf(() => parseWcuSpec(text)).code).toBe('INVALID_OPTION');
  });
});

describe('chooseRate', () => {
  it('no --wcu: no target (Infinity), no growth ceiling, no warning', () => {
    for (const table of [provisioned(100), onDemand(), onDemand({ warmWriteUnits: 12_000 })]) {
      const choice = chooseRate(undefined, table);
      expect(choice.targetWcu).toBe(Infinity);
      expect(choice.growth).toBeUndefined();
      expect(choice.warning).toBeUndefined();
      expect(choice.reason).toBeTruthy();
    }
  });

  it.each<[string, WcuSpec, TableFacts, number, boolean]>([
    // label, spec, table, target, warning?
    ['fixed under provisioned WCU', { kind: 'fixed', wcu: 500 }, provisioned(1000), 500, false],
    ['fixed equal to provisioned WCU', { kind: 'fixed', wcu: 1000 }, provisioned(1000), 1000, false],
    ['fixed above provisioned WCU', { kind: 'fixed', wcu: 1500 }, provisioned(1000), 1500, true],
    ['fixed just above provisioned WCU', { kind: 'fixed', wcu: 1000.5 }, provisioned(1000), 1000.5, true],
    ['fixed on a provisioned table that reported no WCU', { kind: 'fixed', wcu: 1500 }, provisioned(undefined), 1500, false],
    // Above the warm throughput (4,000 for a new table) an on-demand table throttles until it grows.
    ['fixed on on-demand above its warm throughput', { kind: 'fixed', wcu: 90_000 }, onDemand({ warmWriteUnits: 4000 }), 90_000, true],
    ['fixed on on-demand within its warm throughput', { kind: 'fixed', wcu: 9_000 }, onDemand({ warmWriteUnits: 10_000 }), 9_000, false],
    ['fixed on a new on-demand table above 4,000', { kind: 'fixed', wcu: 5_000 }, onDemand({}), 5_000, true],
    ['fixed on on-demand with a provisionedWcu left over', { kind: 'fixed', wcu: 500 }, onDemand({ provisionedWcu: 10 }), 500, false],
  ])('%s', (_label, spec, table, target, warned) => {
    const choice = chooseRate(spec, table);
    expect(choice.targetWcu).toBe(target);
    expect(choice.growth).toBeUndefined();
    expect(choice.warning !== undefined).toBe(warned);
  });

  it('the warning names the fixed rate and the provisioned WCU', () => {
    const { warning } = chooseRate({ kind: 'fixed', wcu: 2500 }, provisioned(1200));
    expect(warning).toContain('2,500');
    expect(warning).toContain('1,200');
  });

  it.each<[string, WcuSpec, number, number]>([
    ['auto (80%)', { kind: 'auto', percent: 80 }, 1000, 800],
    ['auto:60%', { kind: 'auto', percent: 60 }, 1000, 600],
    ['auto:100%', { kind: 'auto', percent: 100 }, 250, 250],
    ['auto:33% of 10', { kind: 'auto', percent: 33 }, 10, 3.3],
    ['auto:50% of 1 WCU: never below 1', { kind: 'auto', percent: 50 }, 1, 1],
    ['auto:1% of 40 WCU: never below 1', { kind: 'auto', percent: 1 }, 40, 1],
  ])('provisioned, %s -> share of the provisioned WCU, no growth ceiling', (_label, spec, wcu, target) => {
    const choice = chooseRate(spec, provisioned(wcu));
    expect(choice.targetWcu).toBeCloseTo(target, 9);
    expect(choice.growth).toBeUndefined();
    expect(choice.warning).toBeUndefined();
  });

  it.each<[string, number, TableFacts, { target: number; initial: number; cap: number }]>([
    ['new table, no warm throughput: 80% of 4,000 to 80% of the 40,000 quota', 80, onDemand(), { target: 32_000, initial: 3200, cap: 32_000 }],
    ['auto:60%, no warm throughput', 60, onDemand(), { target: 24_000, initial: 2400, cap: 24_000 }],
    ['warm throughput 12,000', 80, onDemand({ warmWriteUnits: 12_000 }), { target: 32_000, initial: 9600, cap: 32_000 }],
    ['warm throughput reported as 0 counts as none', 80, onDemand({ warmWriteUnits: 0 }), { target: 32_000, initial: 3200, cap: 32_000 }],
    ['MaxWriteRequestUnits 10,000', 80, onDemand({ onDemandMaxWriteUnits: 10_000 }), { target: 8000, initial: 3200, cap: 8000 }],
    [
      'MaxWriteRequestUnits 100,000 and warm throughput 50,000',
      50,
      onDemand({ onDemandMaxWriteUnits: 100_000, warmWriteUnits: 50_000 }),
      { target: 50_000, initial: 25_000, cap: 50_000 },
    ],
    ['MaxWriteRequestUnits 0 counts as none', 80, onDemand({ onDemandMaxWriteUnits: 0 }), { target: 32_000, initial: 3200, cap: 32_000 }],
    ['a provisioned table that reported no WCU is paced as on-demand', 80, provisioned(undefined), { target: 32_000, initial: 3200, cap: 32_000 }],
  ])('on-demand auto: %s', (_label, percent, table, { target, initial, cap }) => {
    const choice = chooseRate({ kind: 'auto', percent }, table);
    expect(choice.targetWcu).toBeCloseTo(target, 9);
    expect(choice.growth).toEqual({ initial: expect.closeTo(initial, 9), factor: 2, windowMs: 30 * 60_000, cap: expect.closeTo(cap, 9) });
    expect(choice.warning).toBeUndefined();
  });

  it('the on-demand constants are the AWS figures', () => {
    expect(NEW_ON_DEMAND_WCU).toBe(4000);
    expect(ON_DEMAND_TABLE_QUOTA_WCU).toBe(40_000);
  });

  it('the reason tells where an on-demand start and cap come from', () => {
    expect(chooseRate({ kind: 'auto', percent: 80 }, onDemand()).reason).toContain('default table quota');
    expect(chooseRate({ kind: 'auto', percent: 80 }, onDemand({ onDemandMaxWriteUnits: 10_000 })).reason).toContain('MaxWriteRequestUnits');
    expect(chooseRate({ kind: 'auto', percent: 80 }, onDemand({ warmWriteUnits: 12_000 })).reason).toContain('12,000');
    expect(chooseRate({ kind: 'auto', percent: 80 }, provisioned(1000)).reason).toContain('800');
  });

  it.each<[string, number, string | undefined]>([
    ['no GSI: no note', 0, undefined],
    ['one GSI', 1, 'the writes to 1 GSI)'],
    ['three GSIs', 3, 'the writes to 3 GSIs)'],
  ])('GSI note: %s', (_label, count, note) => {
    const gsis = Array.from({ length: count }, (_, i) => gsi(`g${i}`));
    const specs: WcuSpec[] = [
      { kind: 'fixed', wcu: 100 },
      { kind: 'auto', percent: 80 },
    ];
    for (const table of [provisioned(1000, { gsis }), onDemand({ gsis })]) {
      for (const spec of specs) {
        const { reason } = chooseRate(spec, table);
        if (note === undefined) expect(reason).not.toContain('GSI');
        else expect(reason).toContain(note);
      }
    }
    // Without --wcu there is no budget to explain.
    expect(chooseRate(undefined, provisioned(1000, { gsis })).reason).not.toContain('GSI');
  });
});

describe('chooseWorkerRate: the budget of all the workers of a load', () => {
  it('--total-wcu 40,000 over 16 workers on a new on-demand table warns for the whole load, as --wcu 40,000 does', () => {
    const choice = chooseWorkerRate(undefined, { kind: 'fixed', wcu: 40_000 }, 16, onDemand());
    expect(choice.targetWcu).toBe(2500);
    expect(choice.wholeWcu).toBe(40_000);
    expect(choice.warning).toMatch(/--total-wcu 40,000 is above the 4,000 WCU\/s the on-demand table takes at once/);
    expect(choice.reason).toMatch(/for all 16 workers together: 2,500 WCU\/s each/);
  });

  it('auto is the table for the whole load: 4 workers of a 4,000 WCU table take 800 each, not 3,200', () => {
    const choice = chooseWorkerRate(undefined, { kind: 'auto', percent: 80 }, 4, provisioned(4000));
    expect(choice).toMatchObject({ targetWcu: 800, wholeWcu: 3200 });
  });

  it("on demand, each worker's growth is its part of the table's: warm start and cap divided", () => {
    const whole = chooseRate({ kind: 'auto', percent: 80 }, onDemand());
    const part = chooseWorkerRate(undefined, { kind: 'auto', percent: 80 }, 4, onDemand());
    expect(part.growth).toEqual({ ...whole.growth!, initial: whole.growth!.initial / 4, cap: whole.growth!.cap / 4 });
  });

  it("a worker's own --wcu is its own", () => {
    expect(chooseWorkerRate({ kind: 'fixed', wcu: 300 }, undefined, 4, provisioned(4000))).toMatchObject({ targetWcu: 300 });
  });
});

describe('chooseWholeRate: the rate the table feels from all the workers of a load', () => {
  it('--total-wcu is the whole rate, warned about as one', () => {
    const choice = chooseWholeRate(undefined, { kind: 'fixed', wcu: 40_000 }, 16, onDemand());
    expect(choice).toMatchObject({ targetWcu: 40_000, wholeWcu: 40_000 });
    expect(choice.warning).toMatch(/--total-wcu 40,000 is above the 4,000 WCU\/s/);
    expect(choice.reason).toMatch(/for all 16 workers together/);
  });

  it("each worker's own fixed --wcu counts N times, and is warned about as the sum", () => {
    const choice = chooseWholeRate({ kind: 'fixed', wcu: 1500 }, undefined, 4, provisioned(4000));
    expect(choice).toMatchObject({ targetWcu: 6000, wholeWcu: 6000 });
    expect(choice.reason).toMatch(/4 workers at --wcu 1,500 each: 6,000/);
    expect(choice.warning).toMatch(/above the table's provisioned 4,000 WCU/);
    // One worker's own rate alone would not have warned.
    expect(chooseRate({ kind: 'fixed', wcu: 1500 }, provisioned(4000)).warning).toBeUndefined();
  });

  it('auto for the whole load is the table once, not once a worker; no rate is no rate', () => {
    expect(chooseWholeRate(undefined, { kind: 'auto', percent: 80 }, 4, provisioned(4000))).toMatchObject({ targetWcu: 3200 });
    expect(chooseWholeRate(undefined, undefined, 4, provisioned(4000)).targetWcu).toBe(Infinity);
  });
});
