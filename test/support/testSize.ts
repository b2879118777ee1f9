/**
 * Sizes for the in-process tests whose thoroughness costs time: property runs, seeds, input sizes.
 * `npm run test:unit` uses the small size, so the unit pass takes under a minute on two cores; `npm test`
 * also runs the same files at full size in the long project (vitest.config.ts lists them), which sets
 * DDB_SPREAD_LONG_TESTS=1, so it checks what it always checked.
 * Set the variable yourself to run one file at full size:
 *   DDB_SPREAD_LONG_TESTS=1 npx vitest run --project unit test/unit/ordering/order.test.ts
 * A small size checks the same property as the full one, over fewer or smaller cases.
 */
export const LONG_TESTS = process.env['DDB_SPREAD_LONG_TESTS'] === '1';

/** `unit` in the unit pass, `long` when DDB_SPREAD_LONG_TESTS=1. */
export function sized<T>(unit: T, long: T): T {
  return LONG_TESTS ? long : unit;
}
