/**
 * ddb-spread's programmatic API. The CLI (`ddb-spread load`) is a thin layer over `load()`.
 * @module
 */
export { load, type LoadDependencies } from './load/load.js';
export type { LoadOptions, InputFormat } from './load/options.js';
export type { ColumnType, EmptyPolicy } from './typing/typeMap.js';
export type { LoadEvent } from './reporting/events.js';
export type { LoadCounters, LoadResult } from './reporting/result.js';
export type { KeySchema, KeyAttribute, RejectedRow, RowOrigin } from './shared/types.js';
export { LoaderError, type LoaderErrorCode, type FatalCode, type RejectCode } from './shared/errors.js';
