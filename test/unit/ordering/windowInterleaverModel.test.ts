import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { createWindowInterleaver } from '../../../src/ordering/order.js';
import { sized } from '../../support/testSize.js';

/**
 * The window interleaver that makes a queue per key visit and a new array per answer (the one before
 * queues were parked for reuse and the answer shared), with its byte limit, shift() and a changed row
 * limit: the model the faster one must follow write for write, whatever a caller does between pushes.
 */
function modelWindow(rows: number, maxBytes: number) {
  interface Q {
    writes: { id: number; bytes: number }[];
    head: number;
    next: Q;
    prev: Q;
  }
  const queues = new Map<string, Q>();
  let cursor: Q | undefined;
  let lastEmitted: Q | undefined;
  let held = 0;
  let heldBytes = 0;
  const full = () => held > rows || (heldBytes > maxBytes && held > 1);
  const emitOne = (): number => {
    const queue = cursor!;
    const w = queue.writes[queue.head++]!;
    held--;
    heldBytes -= w.bytes;
    lastEmitted = queue;
    if (queue.head === queue.writes.length) {
      for (const [k, q] of queues) if (q === queue) queues.delete(k);
      if (queue.next === queue) cursor = undefined;
      else {
        queue.prev.next = queue.next;
        queue.next.prev = queue.prev;
        cursor = queue.next;
      }
    } else cursor = queue.next;
    return w.id;
  };
  return {
    push(key: string, id: number, bytes: number): number[] {
      let queue = queues.get(key);
      if (queue) queue.writes.push({ id, bytes });
      else {
        queue = { writes: [{ id, bytes }], head: 0 } as unknown as Q;
        queues.set(key, queue);
        if (cursor === undefined) queue.next = queue.prev = queue;
        else {
          queue.next = cursor;
          queue.prev = cursor.prev;
          cursor.prev.next = queue;
          cursor.prev = queue;
          if (cursor === lastEmitted) cursor = queue;
        }
        cursor ??= queue;
      }
      held++;
      heldBytes += bytes;
      const out: number[] = [];
      while (full()) out.push(emitOne());
      return out;
    },
    flush: (): number[] => {
      const out: number[] = [];
      while (held > 0) out.push(emitOne());
      return out;
    },
    shift: (): number | undefined => (held === 0 ? undefined : emitOne()),
    setRows(r: number) {
      rows = r;
    },
    get held() {
      return held;
    },
    get keys() {
      return queues.size;
    },
    get bytes() {
      return heldBytes;
    },
  };
}

type Op =
  { kind: 'push'; key: number; bytes: number } | { kind: 'burst'; count: number } | { kind: 'shift' } | { kind: 'flush' } | { kind: 'rows'; rows: number };

const op: fc.Arbitrary<Op> = fc.oneof(
  { weight: 12, arbitrary: fc.record({ kind: fc.constant('push' as const), key: fc.nat(3), bytes: fc.nat(40) }) },
  // More distinct keys than the window keeps parked, each emptied once: the parked bound is passed.
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('burst' as const), count: fc.integer({ min: 1, max: 5000 }) }) },
  { weight: 2, arbitrary: fc.constant({ kind: 'shift' as const }) },
  { weight: 1, arbitrary: fc.constant({ kind: 'flush' as const }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('rows' as const), rows: fc.integer({ min: 1, max: 12 }) }) },
);

describe('createWindowInterleaver against a queue-per-visit model', () => {
  it('hands out the same writes in the same order, through shift, flush and a changed row limit', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 8 }),
        fc.option(fc.integer({ min: 1, max: 120 }), { nil: undefined }),
        fc.array(op, { maxLength: 120 }),
        (rows, bytes, ops) => {
          const window = createWindowInterleaver<{ id: number; key: string }>((w) => w.key, bytes === undefined ? { rows } : { rows, bytes });
          const model = modelWindow(rows, bytes ?? Infinity);
          let id = 0;
          let fresh = 0;
          const got: number[] = [];
          const want: number[] = [];
          const push = (key: string, b: number) => {
            const answer = window.push({ id, key }, b);
            got.push(...answer.map((w) => w.id));
            want.push(...model.push(key, id, b));
            id++;
          };
          for (const o of ops) {
            if (o.kind === 'push') push(`k${o.key}`, o.bytes);
            else if (o.kind === 'burst') for (let i = 0; i < o.count; i++) push(`f${fresh++}`, 1);
            else if (o.kind === 'shift') {
              got.push(...[window.shift()?.id].filter((x) => x !== undefined));
              want.push(...[model.shift()].filter((x) => x !== undefined));
            } else if (o.kind === 'flush') {
              got.push(...window.flush().map((w) => w.id));
              want.push(...model.flush());
            } else {
              window.rows = o.rows;
              model.setRows(o.rows);
            }
            expect([window.held, window.keys, window.bytes]).toEqual([model.held, model.keys, model.bytes]);
          }
          got.push(...window.flush().map((w) => w.id));
          want.push(...model.flush());
          expect(got).toEqual(want);
          // Nothing lost, nothing twice.
          expect([...got].sort((a, b) => a - b)).toEqual([...Array(id).keys()]);
        },
      ),
      {
        numRuns: sized(150, 1000),
        // A key emptied by a flush and written again, then a new key: the window kept the key's parked queue
        // as "the key that just wrote", and the newcomer went ahead of the key's write that was there first.
        examples: [
          [1, undefined, [{ kind: 'push', key: 1, bytes: 0 }, { kind: 'flush' }, { kind: 'push', key: 1, bytes: 0 }, { kind: 'push', key: 0, bytes: 0 }]],
        ],
      },
    );
  });
});
