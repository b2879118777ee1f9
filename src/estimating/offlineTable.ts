import { LoaderError } from '../shared/errors.js';
import type { BillingMode, IndexInfo, ProjectionType, TableInfo } from '../shared/tableInfo.js';
import type { KeyAttribute } from '../shared/types.js';

/**
 * A table described by flags instead of DescribeTable, so an estimate needs no AWS account:
 * --partition-key id:S [--sort-key sk:N] [--billing provisioned --table-wcu 1000 --table-rcu 500]
 * [--gsi byStatus:status:S:createdAt:N:KEYS_ONLY] [--item-count 0].
 */
/** The name an offline estimate gives the table when --table is left out; the report then says what the table is instead. */
export const UNNAMED_TABLE = 'estimate';

export interface OfflineTableFlags {
  partitionKey: KeyAttribute;
  sortKey?: KeyAttribute;
  billing?: 'provisioned' | 'on-demand';
  /** Provisioned WCU, or an on-demand table's warm write throughput. */
  tableWcu?: number;
  tableRcu?: number;
  gsis?: IndexInfo[];
  itemCount?: number;
}

const TYPES = ['S', 'N', 'B'] as const;

/** Parses "name:TYPE" (--partition-key, --sort-key); TYPE is S, N or B. */
export function parseKeyAttribute(text: string, flag: string): KeyAttribute {
  const at = text.lastIndexOf(':');
  const name = text.slice(0, at).trim();
  const type = text
    .slice(at + 1)
    .trim()
    .toUpperCase();
  if (at <= 0 || name === '' || !(TYPES as readonly string[]).includes(type)) {
    throw new LoaderError('INVALID_OPTION', `${flag} takes <attribute>:<type> with type S, N or B (e.g. customerId:S), got "${text}"`);
  }
  return { name, type: type as KeyAttribute['type'] };
}

/**
 * Parses --gsi: name:pk:TYPE[:sk:TYPE][:ALL|KEYS_ONLY|INCLUDE=a+b] (projection ALL when left out, as a
 * GSI created without one... is not: DynamoDB requires it, so the estimate assumes the costliest).
 */
export function parseGsi(text: string): IndexInfo {
  const parts = text.split(':');
  const fail = () =>
    new LoaderError(
      'INVALID_OPTION',
      `--gsi takes name:pk:TYPE[:sk:TYPE][:ALL|KEYS_ONLY|INCLUDE=a+b] (e.g. byStatus:status:S:createdAt:N:KEYS_ONLY), got "${text}"`,
    );
  const [name, pk, pkType, ...rest] = parts;
  if (!name || !pk || !pkType) throw fail();
  const index: IndexInfo = { name, partitionKey: parseKeyAttribute(`${pk}:${pkType}`, '--gsi'), projection: 'ALL', nonKeyAttributes: [] };
  let i = 0;
  if (rest.length >= 2 && (TYPES as readonly string[]).includes(rest[1]!.toUpperCase())) {
    index.sortKey = parseKeyAttribute(`${rest[0]}:${rest[1]}`, '--gsi');
    i = 2;
  }
  if (i < rest.length) {
    const projection = rest.slice(i).join(':');
    const include = /^INCLUDE=(.+)$/i.exec(projection);
    if (include) {
      index.projection = 'INCLUDE';
      index.nonKeyAttributes = include[1]!
        .split('+')
        .map((a) => a.trim())
        .filter(Boolean);
      if (index.nonKeyAttributes.length === 0) throw fail();
    } else if (/^(ALL|KEYS_ONLY)$/i.test(projection)) {
      index.projection = projection.toUpperCase() as ProjectionType;
    } else {
      throw fail();
    }
  }
  return index;
}

export function offlineTableInfo(name: string, flags: OfflineTableFlags): TableInfo {
  const billingMode: BillingMode = flags.billing === 'provisioned' ? 'PROVISIONED' : 'PAY_PER_REQUEST';
  if (billingMode === 'PROVISIONED' && !(flags.tableWcu && flags.tableWcu > 0)) {
    throw new LoaderError('INVALID_OPTION', '--billing provisioned needs --table-wcu (the provisioned write capacity units)');
  }
  const info: TableInfo = {
    name,
    keySchema: { partitionKey: flags.partitionKey, ...(flags.sortKey ? { sortKey: flags.sortKey } : {}) },
    billingMode,
    gsis: flags.gsis ?? [],
  };
  if (billingMode === 'PROVISIONED') {
    info.provisionedWcu = flags.tableWcu!;
    if (flags.tableRcu !== undefined) info.provisionedRcu = flags.tableRcu;
  } else if (flags.tableWcu !== undefined) {
    info.warmWriteUnits = flags.tableWcu;
  }
  if (flags.itemCount !== undefined) info.itemCount = flags.itemCount;
  return info;
}
