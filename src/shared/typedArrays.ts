/**
 * A typed array of twice the length (at least 1) holding `a`'s elements first: how the estimate's
 * per-key and per-run columns of numbers grow (estimating/plannedOrder.ts, stripeOrder.ts, runRepeats.ts).
 */
export function doubled<T extends Float64Array | Uint32Array>(a: T): T {
  const b = new (a.constructor as new (length: number) => T)(Math.max(1, a.length * 2));
  b.set(a);
  return b;
}
