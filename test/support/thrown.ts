import { LoaderError, RowError } from '../../src/shared/errors.js';

/** Runs fn and returns the error of class `type` it throws; fails if it throws something else or nothing. */
export function thrown<T extends Error>(type: new (...args: never[]) => T, fn: () => unknown): T {
  try {
    fn();
  } catch (error) {
    if (error instanceof type) return error;
    throw error;
  }
  throw new Error(`expected a ${type.name}, nothing was thrown`);
}

export const rowErrorOf = (fn: () => unknown): RowError => thrown(RowError, fn);
export const loaderErrorOf = (fn: () => unknown): LoaderError => thrown(LoaderError, fn);
