import { RowError } from '../../src/core/errors.js';

/** Runs fn and returns the RowError it throws; fails if it throws something else or nothing. */
export function rowErrorOf(fn: () => unknown): RowError {
  try {
    fn();
  } catch (error) {
    if (error instanceof RowError) return error;
    throw error;
  }
  throw new Error('expected a RowError, nothing was thrown');
}
