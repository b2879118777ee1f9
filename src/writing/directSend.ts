import type { AttributeValue, BatchWriteItemCommand, BatchWriteItemCommandInput, BatchWriteItemCommandOutput } from '@aws-sdk/client-dynamodb';
import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { HttpRequest, loadJsonRpcErrorCode } from '@smithy/core/protocols';
import type { FinalizeHandlerArguments, FinalizeRequestMiddleware, HandlerExecutionContext, HttpResponse } from '@smithy/types';
import { preSerializedBody } from './preSerialized.js';

/**
 * The load's BatchWriteItem calls sent below the SDK client's middleware chain (its per-call cost), with the SDK's
 * own parts: the request as the client built it, its signer (SigV4 with the default chain's credentials,
 * refreshed as they expire, and its clock-skew correction), and its HTTP handler (agents, proxy, CA bundle,
 * timeouts).
 *
 * Why: the client builds its chain of ~15 middlewares for every call, and several spread the whole client
 * config into a new object each time. That is 296 µs of CPU a call against 152 µs for signing and sending
 * alone (8,000 calls of 25 items into the instant sink), 1.15 s of a 200k-row load, and the client's CPU
 * is what limits a load far from the table's capacity (and, on a small machine, a load into DynamoDB
 * Local).
 *
 * How: the first call goes through the client, with a middleware placed just before the SDK's signing
 * step that keeps the request it built (endpoint, path, headers: the endpoint rules, the user agent and the
 * protocol's headers are the SDK's), the auth scheme it chose and its signing properties. Each later call
 * of a pre-serialized command (src/writing/preSerialized.ts) is that request with the command's body,
 * signed by the same signer and sent by the same handler; until a call has been captured, and for every
 * other command, the client sends as before (and every call does when the client discovers its endpoints).
 * The answer: a 2xx body is JSON.parse'd (binary attribute values turned into bytes, as the SDK gives them);
 * any other status becomes an error shaped as the SDK shapes AWS JSON 1.0 errors (serviceError below),
 * whose name, status, message and fields are all the writer reads of it (aws/awsErrors.ts).
 * test/unit/writing/directSend.test.ts checks both paths against each other: the same request on the wire,
 * the same output or error for each kind of answer.
 *
 * Safety: a request to the wrong place or with the wrong signature is refused by the service; every
 * answer the writer cannot match to the writes it sent makes it resend them all (writeBatch.ts's
 * matchUnprocessed); and a 2xx answer that is not a JSON object, which the SDK reads as "everything
 * stored", is an error here. Nothing is counted written that DynamoDB did not report stored.
 */
export function withDirectBatchWrites<C extends Pick<DynamoDBDocumentClient, 'send'>>(client: C): C {
  const handler = requestHandlerOf(client);
  // A fake of the client (unit tests) has no request handler: it keeps its own send.
  if (handler === undefined) return client;
  let captured: Captured | undefined;
  // With endpoint discovery on (AWS_ENABLE_ENDPOINT_DISCOVERY), the SDK may move calls to another host: every call goes through it.
  let discovery: Promise<boolean> | undefined;
  const send = async (command: BatchWriteItemCommand): Promise<BatchWriteItemCommandOutput> => {
    const body = preSerializedBody(command);
    if (body === undefined) return (client.send as (c: BatchWriteItemCommand) => Promise<BatchWriteItemCommandOutput>)(command);
    if (captured !== undefined) return sendDirect(captured, handler, body);
    discovery ??= endpointDiscoveryOn(client);
    if (await discovery) return (client.send as (c: BatchWriteItemCommand) => Promise<BatchWriteItemCommandOutput>)(command);
    command.middlewareStack.addRelativeTo(
      capture((c) => (captured ??= c)),
      {
        relation: 'before',
        toMiddleware: 'httpSigningMiddleware',
        name: CAPTURE,
        override: true,
      },
    );
    return (client.send as (c: BatchWriteItemCommand) => Promise<BatchWriteItemCommandOutput>)(command);
  };
  return new Proxy(client, {
    get(target, property, receiver) {
      return property === 'send' ? send : Reflect.get(target, property, receiver);
    },
  });
}

const CAPTURE = 'ddbSpreadCaptureBatchWrite';

/** The client's HTTP handler: what the SDK's transport step calls with the signed request. */
interface HttpHandler {
  handle(request: HttpRequest): Promise<{ response: HttpResponse }>;
}

/** What the first call through the client leaves for the later ones. */
interface Captured {
  request: HttpRequest;
  scheme: AuthScheme;
}

/** The auth scheme the SDK selected (its signer, the identity and the signing properties), as its signing step reads it. */
interface AuthScheme {
  httpAuthOption: { signingProperties?: Record<string, unknown> };
  identity: unknown;
  signer: {
    sign(request: HttpRequest, identity: unknown, signingProperties: Record<string, unknown>): Promise<HttpRequest>;
    errorHandler?: (signingProperties: Record<string, unknown>) => (error: unknown) => never;
    successHandler?: (response: HttpResponse, signingProperties: Record<string, unknown>) => void;
  };
}

/** The client's HTTP handler, when it is an SDK client. */
function requestHandlerOf(client: unknown): HttpHandler | undefined {
  const config = (client as { config?: { requestHandler?: unknown } }).config;
  const handler = config?.requestHandler as { handle?: unknown } | undefined;
  return typeof handler?.handle === 'function' ? (handler as HttpHandler) : undefined;
}

/** Whether the client discovers its endpoints (DynamoDB's optional endpoint discovery); false when it cannot tell. */
async function endpointDiscoveryOn(client: unknown): Promise<boolean> {
  const enabled = (client as { config?: { endpointDiscoveryEnabled?: unknown } }).config?.endpointDiscoveryEnabled;
  try {
    return typeof enabled === 'function' ? (await (enabled as () => Promise<unknown>)()) === true : enabled === true;
  } catch {
    return false;
  }
}

/** A middleware, just before the SDK's signing step, that hands on the unsigned request and the selected auth scheme. */
function capture(keep: (captured: Captured) => void): FinalizeRequestMiddleware<BatchWriteItemCommandInput, BatchWriteItemCommandOutput> {
  return (next, context: HandlerExecutionContext) => async (args: FinalizeHandlerArguments<BatchWriteItemCommandInput>) => {
    const scheme = (context as { __smithy_context?: { selectedHttpAuthScheme?: Partial<AuthScheme> } }).__smithy_context?.selectedHttpAuthScheme;
    if (HttpRequest.isInstance(args.request) && typeof scheme?.signer?.sign === 'function' && scheme.httpAuthOption !== undefined) {
      keep({ request: HttpRequest.clone(args.request), scheme: scheme as AuthScheme });
    }
    return next(args);
  };
}

async function sendDirect(captured: Captured, handler: HttpHandler, body: Buffer): Promise<BatchWriteItemCommandOutput> {
  const { scheme } = captured;
  const request = HttpRequest.clone(captured.request);
  request.headers['content-length'] = String(body.byteLength);
  request.body = body;
  // Per call: the signer keeps the call's send time in them, for its clock-skew sample.
  const signingProperties = { ...scheme.httpAuthOption.signingProperties };
  const signed = await scheme.signer.sign(request, scheme.identity, signingProperties);
  let response: HttpResponse;
  try {
    ({ response } = await handler.handle(signed));
  } catch (error) {
    throw failed(scheme, signingProperties, error);
  }
  let text: string;
  try {
    text = await bodyText(response);
  } catch (error) {
    // A socket reset in the answer's body: as the SDK's deserializer leaves it, with the status and the answer.
    if (error !== null && typeof error === 'object' && !('$metadata' in error)) Object.assign(error, { $metadata: metadataOf(response) });
    if (error !== null && typeof error === 'object') Object.defineProperty(error, '$response', { value: response, enumerable: false, configurable: true });
    throw failed(scheme, signingProperties, error);
  }
  if (response.statusCode >= 200 && response.statusCode < 300) {
    scheme.signer.successHandler?.(response, signingProperties);
    let output: unknown;
    try {
      output = JSON.parse(text);
    } catch (error) {
      output = error;
    }
    // Not a JSON object (an empty body, `null`, a page): the SDK reads some of these as "everything stored"; here
    // nothing is counted written on such an answer. The writer stops the load on it, as on any answer it cannot read.
    if (output === null || typeof output !== 'object' || Array.isArray(output) || output instanceof Error) {
      const why = output instanceof Error ? output.message : `the body is ${text.trim() === '' ? 'empty' : 'not a JSON object'}`;
      const error = Object.assign(new Error(`DynamoDB's answer to BatchWriteItem (HTTP ${response.statusCode}) cannot be read: ${why}`), {
        name: 'SyntaxError',
        $metadata: metadataOf(response),
      });
      Object.defineProperty(error, '$response', { value: response, enumerable: false });
      throw error;
    }
    const answer = output as BatchWriteItemCommandOutput;
    for (const requests of Object.values(answer.UnprocessedItems ?? {})) {
      for (const r of requests ?? []) {
        if (r.PutRequest?.Item) bytesIn(r.PutRequest.Item);
        if (r.DeleteRequest?.Key) bytesIn(r.DeleteRequest.Key);
      }
    }
    return { ...answer, $metadata: metadataOf(response) };
  }
  throw failed(scheme, signingProperties, serviceError(response, text));
}

/** The error after the signer has seen it (it corrects the clock from the answer's Date header), as the SDK's signing step does. */
function failed(scheme: AuthScheme, signingProperties: Record<string, unknown>, error: unknown): unknown {
  try {
    scheme.signer.errorHandler?.(signingProperties)(error);
  } catch (thrown) {
    return thrown;
  }
  return error;
}

async function bodyText(response: HttpResponse): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of response.body as AsyncIterable<Buffer | string>) chunks.push(typeof chunk === 'string' ? Buffer.from(chunk) : chunk);
  return Buffer.concat(chunks).toString('utf8');
}

function header(response: HttpResponse, name: string): string | undefined {
  for (const [key, value] of Object.entries(response.headers)) if (key.toLowerCase() === name) return value;
  return undefined;
}

/** As the SDK's deserializeMetadata reads them off the answer. */
function metadataOf(response: HttpResponse): BatchWriteItemCommandOutput['$metadata'] {
  const requestId = header(response, 'x-amzn-requestid') ?? header(response, 'x-amzn-request-id') ?? header(response, 'x-amz-request-id');
  const extendedRequestId = header(response, 'x-amz-id-2');
  const cfId = header(response, 'x-amz-cf-id');
  return {
    httpStatusCode: response.statusCode,
    ...(requestId === undefined ? {} : { requestId }),
    ...(extendedRequestId === undefined ? {} : { extendedRequestId }),
    ...(cfId === undefined ? {} : { cfId }),
  };
}

/**
 * An error answer as the SDK's AWS JSON 1.0 protocol shapes it (@aws-sdk/core's AwsJsonRpcProtocol and
 * decorateServiceException), checked against it by test/unit/writing/directSend.test.ts:
 * - named as the SDK names it (its loadJsonRpcErrorCode): the body's `__type`, else its `code`, else the
 *   `x-amzn-errortype` header (the part after `#`, before `:`), else "Unknown";
 * - the body's `message` (or `Message`, then removed), else "UnknownError";
 * - the body's other fields on the error (`__type`, ThrottlingReasons, ...);
 * - $fault by status (client under 500), $metadata, and the answer as the hidden $response.
 * A body that is not JSON is the SDK's deserialization error: a SyntaxError with its hint and $metadata,
 * classified by its status (a proxy's 503 page is retried).
 */
export function serviceError(response: HttpResponse, text: string): Error {
  let data: Record<string, unknown> = {};
  if (text.trim() !== '') {
    let parsed: unknown;
    try {
      parsed = JSON.parse(text);
    } catch (error) {
      const syntax = error as Error;
      syntax.message += '\n  Deserialization error: to see the raw response, inspect the hidden field {error}.$response on this object.';
      Object.assign(syntax, { $metadata: metadataOf(response) });
      Object.defineProperty(syntax, '$response', { value: response, enumerable: false });
      return syntax;
    }
    if (parsed !== null && typeof parsed === 'object' && !Array.isArray(parsed)) data = parsed as Record<string, unknown>;
  }
  // The SDK's own reading of the name for AWS JSON 1.0: the body's __type, then its code, then the header.
  const name = loadJsonRpcErrorCode(response, data) ?? 'Unknown';
  const error = Object.assign(new Error(), {
    name,
    $fault: response.statusCode < 500 ? 'client' : 'server',
    $metadata: metadataOf(response),
  }) as unknown as Error & Record<string, unknown>;
  for (const [key, value] of Object.entries(data))
    if (value !== undefined && (error[key] === undefined || error[key] === null || error[key] === '')) error[key] = value;
  error.message = (typeof error['message'] === 'string' && error['message']) || (typeof error['Message'] === 'string' && error['Message']) || 'UnknownError';
  delete error['Message'];
  Object.defineProperty(error, '$response', { value: response, enumerable: false });
  return error;
}

/**
 * Binary attribute values turned into bytes in place, as the SDK gives them (JSON carries them as base64).
 * In place: JSON.parse makes an attribute named `__proto__` an own property, which an assignment to it then
 * updates; copying into a new object would set the copy's prototype instead and lose the attribute.
 */
function bytesIn(item: Record<string, AttributeValue>): void {
  for (const name of Object.keys(item)) item[name] = valueBytes(item[name]!);
}

function valueBytes(value: AttributeValue): AttributeValue {
  const v = value as unknown as Record<string, unknown>;
  if (typeof v['B'] === 'string') return { B: bytesOf(v['B']) };
  if (Array.isArray(v['BS'])) return { BS: (v['BS'] as string[]).map(bytesOf) };
  if (Array.isArray(v['L'])) {
    const list = v['L'] as AttributeValue[];
    for (let i = 0; i < list.length; i++) list[i] = valueBytes(list[i]!);
  } else if (v['M'] !== null && typeof v['M'] === 'object') bytesIn(v['M'] as Record<string, AttributeValue>);
  return value;
}

/** Base64 as a Uint8Array (not a Buffer: the SDK's type), over the decoded bytes without a copy. */
function bytesOf(base64: string): Uint8Array {
  const bytes = Buffer.from(base64, 'base64');
  return new Uint8Array(bytes.buffer, bytes.byteOffset, bytes.byteLength);
}
