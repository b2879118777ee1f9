/**
 * The names the typing flags take (column types, empty-cell policies, timestamp modes), apart from the
 * typing code (typeMap.ts, temporal.ts) so that the option table and the flags can name them without
 * loading what typing needs (the DynamoDB SDK's NumberValue): --help, --version and a usage error then
 * start without the SDK.
 */

/** The types a column can be given with --types or --schema. JSON means "any JSON value, mapped natively". */
export const COLUMN_TYPES = ['S', 'N', 'BOOL', 'B', 'SS', 'NS', 'BS', 'JSON', 'M', 'L'] as const;
export type ColumnType = (typeof COLUMN_TYPES)[number];

export const EMPTY_POLICIES = ['omit', 'null', 'string'] as const;
/** What an empty CSV cell becomes: no attribute, a NULL, or an empty string. */
export type EmptyPolicy = (typeof EMPTY_POLICIES)[number];

/** How timestamps and dates of typed inputs (Parquet, Ion) are stored: ISO-8601 text, or epoch numbers. */
export const TIMESTAMP_MODES = ['iso', 'epoch-s', 'epoch-ms'] as const;
export type TimestampMode = (typeof TIMESTAMP_MODES)[number];
