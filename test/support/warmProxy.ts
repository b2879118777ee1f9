/**
 * A proxy in front of DynamoDB Local that knows warm throughput, which DynamoDB Local does not (its
 * DescribeTable has no WarmThroughput, and its UpdateTable refuses one: "Nothing to update"). It answers
 * UpdateTable calls that carry WarmThroughput itself, records them, and adds WarmThroughput (with a Status
 * that stays UPDATING for the next `updatingDescribes` DescribeTable calls, then ACTIVE) to every
 * DescribeTable answer of the table. Every other call goes to DynamoDB Local unchanged.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { createForwarder, errorBody, json, ownHeaders, reply, startProxyServer, TARGET_PREFIX } from './httpForward.js';

const UPDATE_TABLE = `${TARGET_PREFIX}UpdateTable`;
const DESCRIBE_TABLE = `${TARGET_PREFIX}DescribeTable`;

export interface WarmUpdateCall {
  table: string;
  /** WarmThroughput.WriteUnitsPerSecond of the table, when raised. */
  tableWrite: number | undefined;
  /** Each GSI raised: its name and WriteUnitsPerSecond. */
  indexes: Array<{ name: string; write: number }>;
}

export interface WarmProxy {
  readonly url: string;
  readonly updates: readonly WarmUpdateCall[];
  /** DescribeTable calls answered (forwarded and decorated). */
  describes(): number;
  close(): Promise<void>;
}

export interface WarmProxyOptions {
  /** The table's and each GSI's warm write throughput at the start (a new on-demand table's 4,000 by default). */
  initialWrite?: number;
  /** DescribeTable answers that say UPDATING after an UpdateTable. @default 2 */
  updatingDescribes?: number;
  /** Answer UpdateTable with this error instead (e.g. a quota refusal). */
  refuseWith?: { type: string; message: string };
  /**
   * The first UpdateTable is crossed by another client's, which raises the table to the same values:
   * answered ResourceInUseException, the raise applied all the same (UPDATING, then ACTIVE).
   */
  crossedOnce?: boolean;
  /** Accept UpdateTable but never apply it (the warm throughput stays where it was). */
  neverApplied?: boolean;
}

interface WarmState {
  write: number;
  read: number;
}

export async function startWarmProxy(target: string, options: WarmProxyOptions = {}): Promise<WarmProxy> {
  const upstream = createForwarder(target);
  const initial = options.initialWrite ?? 4000;
  const updates: WarmUpdateCall[] = [];
  const tables = new Map<string, WarmState>();
  const indexes = new Map<string, WarmState>();
  let updatingLeft = 0;
  let describes = 0;
  const stateOf = (map: Map<string, WarmState>, key: string): WarmState => {
    let state = map.get(key);
    if (!state) map.set(key, (state = { write: initial, read: 12_000 }));
    return state;
  };

  const handle = async (req: IncomingMessage, res: ServerResponse, body: Buffer) => {
    const target = req.headers['x-amz-target'];
    if (target === UPDATE_TABLE) {
      const input = JSON.parse(body.toString('utf8')) as {
        TableName: string;
        WarmThroughput?: { WriteUnitsPerSecond?: number };
        GlobalSecondaryIndexUpdates?: Array<{ Update?: { IndexName: string; WarmThroughput?: { WriteUnitsPerSecond?: number } } }>;
      };
      const gsiUpdates = (input.GlobalSecondaryIndexUpdates ?? []).flatMap((u) =>
        u.Update?.WarmThroughput?.WriteUnitsPerSecond !== undefined ? [{ name: u.Update.IndexName, write: u.Update.WarmThroughput.WriteUnitsPerSecond }] : [],
      );
      if (input.WarmThroughput !== undefined || gsiUpdates.length > 0) {
        updates.push({ table: input.TableName, tableWrite: input.WarmThroughput?.WriteUnitsPerSecond, indexes: gsiUpdates });
        if (options.refuseWith) return reply(res, 400, ownHeaders('WARM-REFUSED'), errorBody(options.refuseWith.type, options.refuseWith.message));
        const crossed = options.crossedOnce === true && updates.length === 1;
        const table = stateOf(tables, input.TableName);
        if (options.neverApplied) {
          updatingLeft = options.updatingDescribes ?? 2;
          return reply(res, 200, ownHeaders('WARM-IGNORED'), json({ TableDescription: {} }));
        }
        if (input.WarmThroughput?.WriteUnitsPerSecond !== undefined) {
          if (input.WarmThroughput.WriteUnitsPerSecond < table.write)
            return reply(res, 400, ownHeaders('WARM-LOWER'), errorBody('com.amazon.coral.validate#ValidationException', 'warm throughput cannot be decreased'));
          table.write = input.WarmThroughput.WriteUnitsPerSecond;
        }
        for (const u of gsiUpdates) stateOf(indexes, `${input.TableName}/${u.name}`).write = u.write;
        updatingLeft = options.updatingDescribes ?? 2;
        if (crossed)
          return reply(
            res,
            400,
            ownHeaders('WARM-IN-USE'),
            errorBody(
              'com.amazonaws.dynamodb.v20120810#ResourceInUseException',
              `Attempt to change a resource which is still in use: Table is being updated: ${input.TableName}`,
            ),
          );
        const described = await upstream.forward(req, json({ TableName: input.TableName }), { 'x-amz-target': DESCRIBE_TABLE });
        const parsed = JSON.parse(described.body.toString('utf8')) as { Table?: Record<string, unknown> };
        return reply(res, 200, ownHeaders('WARM-UPDATE'), json({ TableDescription: decorate(parsed.Table ?? {}, 'UPDATING') }));
      }
    }
    const answer = await upstream.forward(req, body);
    if (target !== DESCRIBE_TABLE || answer.status !== 200) return reply(res, answer.status, answer.headers, answer.body);
    describes++;
    const status = updatingLeft > 0 ? 'UPDATING' : 'ACTIVE';
    if (updatingLeft > 0) updatingLeft--;
    const parsed = JSON.parse(answer.body.toString('utf8')) as { Table?: Record<string, unknown> };
    return reply(res, 200, answer.headers, json({ ...parsed, Table: decorate(parsed.Table ?? {}, status) }));
  };

  const decorate = (table: Record<string, unknown>, status: string): Record<string, unknown> => {
    const name = String(table['TableName']);
    const warm = stateOf(tables, name);
    const gsis = (table['GlobalSecondaryIndexes'] as Array<Record<string, unknown>> | undefined)?.map((g) => {
      const state = stateOf(indexes, `${name}/${String(g['IndexName'])}`);
      return { ...g, WarmThroughput: { ReadUnitsPerSecond: state.read, WriteUnitsPerSecond: state.write, Status: status } };
    });
    return {
      ...table,
      WarmThroughput: { ReadUnitsPerSecond: warm.read, WriteUnitsPerSecond: warm.write, Status: status },
      ...(gsis ? { GlobalSecondaryIndexes: gsis } : {}),
    };
  };

  const server = await startProxyServer('warmProxy', handle);
  return {
    url: server.url,
    updates,
    describes: () => describes,
    async close() {
      await server.close();
      upstream.close();
    },
  };
}
