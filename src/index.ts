/**
 * ddb-spread's programmatic API. The CLI (`ddb-spread load`) is a thin layer over `load()`.
 * @module
 */
export { load, type LoadDependencies } from './io/load.js';
export type { LoadOptions, InputFormat } from './core/options.js';
export type { ColumnType, EmptyPolicy } from './core/typeMap.js';
export type { LoadEvent } from './report/events.js';
export type { LoadCounters, LoadResult } from './core/result.js';
export type { KeySchema, KeyAttribute, RejectedRow, RowOrigin } from './core/types.js';
export { LoaderError, type LoaderErrorCode, type FatalCode, type RejectCode } from './core/errors.js';
