import { BatchWriteItemCommand, type BatchWriteItemCommandInput, type BatchWriteItemCommandOutput } from '@aws-sdk/client-dynamodb';
import type { BuildHandlerArguments, SerializeHandler, SerializeMiddleware } from '@smithy/types';
import { batchWriteBody } from './wireJson.js';

/** The name of the middleware that puts the pre-built body in place. */
const PRE_SERIALIZED_BODY = 'ddbSpreadPreSerializedBody';

/**
 * A BatchWriteItem of puts whose items are already wire JSON (wireJson.ts), sent through the SDK as any
 * command is: endpoints, credentials, SigV4 signing, the HTTP handler and the answer's parsing stay the
 * SDK's. Only the body is ours: the SDK serialises a copy of the input with an empty request list (the
 * table name is kept, as endpoint resolution reads it), and a middleware placed right after the SDK's
 * serializer (the documented `addRelativeTo` of a command's middleware stack) replaces that body with the
 * full one, before the content length is computed and the request signed. Were a release of the SDK to
 * rename its serializer, the stack would throw on every send ("serializerMiddleware is not found when
 * adding ...") and test/unit/writing/wireJson.test.ts would fail: never an empty batch sent as if full.
 */
export function preSerializedBatchWrite(table: string, itemJsons: readonly string[], deletes?: readonly boolean[], askCapacity = true): BatchWriteItemCommand {
  const command = new BatchWriteItemCommand({ RequestItems: { [table]: [] }, ...(askCapacity ? { ReturnConsumedCapacity: 'INDEXES' as const } : {}) });
  const text = batchWriteBody(table, itemJsons, deletes, askCapacity);
  const body = Buffer.from(text, 'utf8');
  bodies.set(command, { text, body });
  command.middlewareStack.addRelativeTo(replaceBody(body), {
    relation: 'after',
    toMiddleware: 'serializerMiddleware',
    name: PRE_SERIALIZED_BODY,
    override: true,
  });
  return command;
}

const bodies = new WeakMap<BatchWriteItemCommand, { text: string; body: Buffer }>();

/** The body a pre-serialized command sends (its bytes), or undefined for any other command. */
export function preSerializedBody(command: BatchWriteItemCommand): Buffer | undefined {
  return bodies.get(command)?.body;
}

/**
 * The input a pre-serialized command sends, parsed back from its body (binary values as base64 text):
 * for fakes of the client, which see a command but never its HTTP request. Any other command: its input.
 */
export function sentInputOf(command: BatchWriteItemCommand): BatchWriteItemCommandInput {
  const text = bodies.get(command)?.text;
  return text === undefined ? command.input : (JSON.parse(text) as BatchWriteItemCommandInput);
}

type Input = BatchWriteItemCommandInput;
type Output = BatchWriteItemCommandOutput;

function replaceBody(body: Buffer): SerializeMiddleware<Input, Output> {
  return (next: SerializeHandler<Input, Output>) => (args) => {
    const request = (args as BuildHandlerArguments<Input>).request as { body?: unknown; headers?: Record<string, string> } | undefined;
    if (request === undefined || request.headers === undefined) throw new Error(`${PRE_SERIALIZED_BODY}: the SDK's serializer built no HTTP request`);
    request.body = body;
    return next(args);
  };
}
