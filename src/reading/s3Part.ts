import { GetObjectCommand, HeadObjectCommand, ListObjectsV2Command, PutObjectCommand, S3Client } from '@aws-sdk/client-s3';
import { readFileSync } from 'node:fs';
import { Readable } from 'node:stream';
import { setTimeout as sleep } from 'node:timers/promises';
import { LoaderError } from '../shared/errors.js';
import { caBundleFrom, proxyConfigured, type Env } from '../aws/awsEnv.js';
import { checkEndpointUrl, checkRegion, S3 } from '../aws/awsSettings.js';
import { configuredTarget, regionOrRefusal, resolveTarget } from '../aws/awsTarget.js';
import { missingCredentials } from '../aws/awsErrors.js';
import { EnvProxyAgent } from '../aws/proxyAgent.js';
import { exportOfFolder, exportsBelow, partsOfExports, type ExportFolder, type ListedExport } from './dynamodbExport.js';
import type { InputPart, ListedPart } from './inputPart.js';
import { isDataPath, sortOut, type FoundEntry, type SkippedPart } from './listing.js';
import { bytesToSkip } from './rangedAnswer.js';
import { S3_MAX_SOCKETS } from './s3Sockets.js';

/** How a load reaches S3: the DynamoDB client's conventions (default credential chain, region, proxy, CA). */
export interface S3Options {
  region?: string | undefined;
  profile?: string | undefined;
  /** --s3-endpoint-url; AWS_ENDPOINT_URL_S3 (or AWS_ENDPOINT_URL) otherwise, read by the SDK. */
  endpoint?: string | undefined;
  /** --s3-path-style: bucket in the path, for S3-compatible servers. */
  forcePathStyle?: boolean | undefined;
  caBundle?: string | undefined;
  requestTimeoutMs: number;
}

export interface S3Access {
  /**
   * The parts of s3://bucket/key (one object) or s3://bucket/prefix (its objects, or the exports it holds);
   * the prefix's objects that are not data are added to `skipped`, each with why.
   */
  list(url: string, exports: ListedExport[], skipped?: SkippedPart[]): Promise<ListedPart[]>;
  /** One object as a part, pinned at the size and ETag it was listed with (a shared listing's part). */
  part(url: string, size: number, etag: string): InputPart;
  /** An object's text, or undefined when there is none (a shared listing). */
  readText(url: string): Promise<string | undefined>;
  /** Puts `text` unless the object exists (If-None-Match: *); false when it did. */
  createText(url: string, text: string): Promise<boolean>;
  /** Puts `text`, replacing what is there (a worker's state, which only that worker writes). */
  putText(url: string, text: string): Promise<void>;
  destroy(): void;
}

export { S3_MAX_SOCKETS };

/** Reads of one object after a dropped connection, with no byte gained in between, before it is an error. */
const MAX_RESUMES = 5;

/**
 * The bytes the first GET of a read asks for; each next one asks for WINDOW_GROWTH times as many, and
 * past LAST_WINDOW_BYTES one asks for the rest. Many reads want only an object's first bytes (its header
 * row and first rows, its format, a segment's first record start) and then stop: a GET for the whole rest
 * of the object, given up after a few KB, has already had megabytes sent down its connection (the TCP
 * window's worth over a network; through a proxy counting what s3rver sent, 4 workers dividing the
 * scale-out bench's 24 MB object by byte range fetched it 1.74 times, most of it their looks at its head).
 * Growing windows waste at most a window more than a reader took; a read to the end pays a few GETs more.
 */
const FIRST_GET_BYTES = 64 * 1024;
const WINDOW_GROWTH = 4;
const LAST_WINDOW_BYTES = 16 * 1024 * 1024;

export function createS3Access(options: S3Options, env: Env = process.env): S3Access {
  // The DynamoDB client's rules (awsSettings.ts): AWS_ENDPOINT_URL_S3, AWS_ENDPOINT_URL, then the profile's
  // services section and endpoint_url, the same for --profile and AWS_PROFILE.
  if (options.endpoint !== undefined) checkEndpointUrl(options.endpoint, S3.flag);
  if (options.region !== undefined) checkRegion({ value: options.region, source: '--region' });
  const target = resolveTarget(options, S3, env);
  const caFile = caBundleFrom(options.caBundle, env);
  const agentOptions = { keepAlive: true, maxSockets: S3_MAX_SOCKETS, ...(caFile === undefined ? {} : { ca: readFileText(caFile) }) };
  const proxied = proxyConfigured(env);
  const client = new S3Client({
    region: async () => regionOrRefusal(await target()),
    ...(options.profile ? { profile: options.profile } : {}),
    ...(options.endpoint ? { endpoint: options.endpoint } : {}),
    ...(options.forcePathStyle ? { forcePathStyle: true } : {}),
    // Reads resume themselves from the last byte received (ranged GET); the SDK retries the other calls.
    maxAttempts: 3,
    requestHandler: {
      requestTimeout: options.requestTimeoutMs,
      // Without it a GET or a listing whose answer never comes only logs a warning and waits for good.
      throwOnRequestTimeout: true,
      connectionTimeout: Math.min(options.requestTimeoutMs, 10_000),
      httpAgent: proxied ? new EnvProxyAgent(false, env, agentOptions) : agentOptions,
      httpsAgent: proxied ? new EnvProxyAgent(true, env, agentOptions) : agentOptions,
    },
  });
  configuredTarget(client, target);
  const reads: S3Reads = { client, idleMs: options.requestTimeoutMs };
  return {
    list: (url, exports, skipped) => listS3(reads, url, exports, skipped ?? []),
    part(url, size, etag) {
      const { bucket, key } = parseS3Url(url);
      return s3Part(reads, bucket, key, size, etag);
    },
    readText(url) {
      const { bucket, key } = parseS3Url(url);
      return getText(client, bucket, key);
    },
    async createText(url, text) {
      const { bucket, key } = parseS3Url(url);
      try {
        await client.send(new PutObjectCommand({ Bucket: bucket, Key: key, Body: text, IfNoneMatch: '*', ContentType: 'application/json' }));
        return true;
      } catch (error) {
        const e = error as { name?: string; $metadata?: { httpStatusCode?: number } };
        // 412: another worker's listing is there; 409: a conditional write racing another one.
        if (e.$metadata?.httpStatusCode === 412 || e.$metadata?.httpStatusCode === 409 || e.name === 'PreconditionFailed') return false;
        throw s3Error(url, error);
      }
    },
    async putText(url, text) {
      const { bucket, key } = parseS3Url(url);
      try {
        await client.send(new PutObjectCommand({ Bucket: bucket, Key: key, Body: text, ContentType: 'application/json' }));
      } catch (error) {
        throw s3Error(url, error);
      }
    },
    destroy: () => client.destroy(),
  };
}

/** The client, and how long a GET's body may go without a byte while it is read (--request-timeout). */
interface S3Reads {
  client: S3Client;
  idleMs: number;
}

/** The CA bundle: checked with a clear message by the DynamoDB client, which is built first. */
function readFileText(path: string): string {
  return readFileSync(path, 'utf8');
}

export function parseS3Url(url: string): { bucket: string; key: string } {
  const m = /^s3:\/\/([^/]+)\/?(.*)$/.exec(url);
  if (!m) throw new LoaderError('INVALID_OPTION', `${url} is not an S3 URL; write s3://bucket/key or s3://bucket/prefix/`);
  return { bucket: m[1]!, key: m[2]! };
}

async function listS3(reads: S3Reads, url: string, exports: ListedExport[], skipped: SkippedPart[]): Promise<ListedPart[]> {
  const { client } = reads;
  const { bucket, key } = parseS3Url(url);
  if (key !== '' && !key.endsWith('/')) {
    const one = await headPart(reads, bucket, key, true);
    if (one) return [{ part: one }];
  }
  const prefix = key === '' || key.endsWith('/') ? key : `${key}/`;
  const found = await exportOfFolder(s3Folder(reads, bucket, prefix));
  if (found) return partsOfExports([found], exports);
  // Keys are taken verbatim (`a//b`, `./`, `../` are parts of a key, not spelling): listing.ts decides by name.
  const objects: (FoundEntry & { key: string; size: number; etag: string })[] = [];
  let token: string | undefined;
  do {
    const page = await s3Call(url, () =>
      client.send(new ListObjectsV2Command({ Bucket: bucket, Prefix: prefix, ...(token ? { ContinuationToken: token } : {}) })),
    );
    for (const o of page.Contents ?? []) {
      const name = `s3://${bucket}/${o.Key!}`;
      objects.push({ name, relative: o.Key!.slice(prefix.length), kind: 'file', identity: name, key: o.Key!, size: o.Size ?? 0, etag: o.ETag ?? '' });
    }
    token = page.IsTruncated ? page.NextContinuationToken : undefined;
  } while (token);
  // Export folders below the prefix (AWSDynamoDB/<ExportId>/): never read as plain data.
  const below = await exportsBelow(
    `s3://${bucket}/${prefix}`,
    objects.map((o) => o.relative),
    (dir) => s3Folder(reads, bucket, `${prefix}${dir}/`),
    isDataPath,
  );
  if (below) return partsOfExports(below, exports, url);
  const sorted = sortOut(objects);
  skipped.push(...sorted.skipped);
  return sorted.data.map((o) => ({ part: s3Part(reads, bucket, o.key, o.size, o.etag) }));
}

/** A prefix (ending in "/", or empty) as export.ts reads it. */
function s3Folder(reads: S3Reads, bucket: string, prefix: string): ExportFolder {
  return {
    name: `s3://${bucket}/${prefix.replace(/\/$/, '')}`,
    readText: (name) => getText(reads.client, bucket, `${prefix}${name}`),
    part: async (name) => (await headPart(reads, bucket, `${prefix}${name}`, false))!,
  };
}

async function headPart(reads: S3Reads, bucket: string, key: string, mayBeMissing: boolean): Promise<InputPart | undefined> {
  const url = `s3://${bucket}/${key}`;
  try {
    const head = await reads.client.send(new HeadObjectCommand({ Bucket: bucket, Key: key }));
    return s3Part(reads, bucket, key, head.ContentLength ?? 0, head.ETag ?? '');
  } catch (error) {
    if (isMissing(error)) {
      if (mayBeMissing) return undefined;
      throw new LoaderError('INPUT_NOT_FOUND', `${url} does not exist`, { file: url, cause: error });
    }
    throw s3Error(url, error);
  }
}

async function getText(client: S3Client, bucket: string, key: string): Promise<string | undefined> {
  try {
    const answer = await client.send(new GetObjectCommand({ Bucket: bucket, Key: key }));
    return await answer.Body!.transformToString('utf8');
  } catch (error) {
    if (isMissing(error)) return undefined;
    throw s3Error(`s3://${bucket}/${key}`, error);
  }
}

/**
 * One S3 object as a part. Its ETag is pinned when it is listed: every GET asks for it (If-Match) and
 * checks the answer's, so an object replaced during the load is an error, never a mix of two versions. A
 * connection dropped mid-object, or silent for --request-timeout, is picked up where it broke, with a ranged
 * GET from the next byte.
 */
function s3Part(reads: S3Reads, bucket: string, key: string, size: number, etag: string): InputPart {
  const name = `s3://${bucket}/${key}`;
  return {
    name,
    size,
    etag,
    open: (fromByte = 0, toByte = size) =>
      Promise.resolve(Readable.from(objectBytes(reads, { bucket, key, name, size, etag }, fromByte, Math.min(toByte, size)), { objectMode: false })),
    outline: () => Promise.resolve({ name, size, mtimeMs: 0, edges: etag }),
    contentHash: () => Promise.resolve(etag),
  };
}

interface ObjectRef {
  bucket: string;
  key: string;
  name: string;
  size: number;
  etag: string;
}

/**
 * Bytes [fromByte, toByte) of the object, by GETs that ask for its pinned ETag (If-Match) and for that range:
 * growing windows, then the rest (a small object read whole asks for no range; a GET that broke asks again
 * from the first byte not received).
 */
async function* objectBytes({ client, idleMs }: S3Reads, o: ObjectRef, fromByte: number, toByte: number): AsyncGenerator<Buffer> {
  let offset = fromByte;
  let failures = 0;
  // Where this GET's answer ends: growing windows, then the rest.
  let window = FIRST_GET_BYTES;
  let end = Math.min(toByte, fromByte + window);
  while (offset < toByte) {
    if (offset >= end) {
      window *= WINDOW_GROWTH;
      end = window > LAST_WINDOW_BYTES ? toByte : Math.min(toByte, offset + window);
    }
    let body: Readable;
    // Bytes of this answer's body that were delivered already (a 200 with the whole object to a ranged GET).
    let skip: number;
    try {
      const answer = await client.send(new GetObjectCommand({ Bucket: o.bucket, Key: o.key, IfMatch: o.etag, ...rangeHeader(offset, end, o.size) }));
      body = answer.Body as Readable;
      if (answer.ETag !== undefined && answer.ETag !== o.etag) {
        body.destroy();
        throw changed(o, answer.ETag);
      }
      const checked = bytesToSkip(
        { status: answer.$metadata.httpStatusCode, contentRange: answer.ContentRange, contentLength: answer.ContentLength },
        offset,
        o.size,
      );
      if ('refused' in checked) {
        body.destroy();
        throw checked.changed
          ? new LoaderError('INPUT_CHANGED', `${o.name} changed during the load: it ${checked.refused}; run the load again on a stable input`, { file: o.name })
          : new LoaderError('INPUT_UNREADABLE', `cannot read ${o.name}: the server ${checked.refused}; read it without the proxy or cache in between`, {
              file: o.name,
            });
      }
      skip = checked.skip;
    } catch (error) {
      if (error instanceof LoaderError) throw error;
      if (isMissing(error)) throw new LoaderError('INPUT_NOT_FOUND', `${o.name} was deleted during the load`, { file: o.name, cause: error });
      if ((error as { name?: string }).name === 'PreconditionFailed') throw changed(o, undefined);
      if (++failures > MAX_RESUMES) throw s3Error(o.name, error);
      await sleep(100 * 2 ** failures);
      continue;
    }
    // Set while a chunk is with the reader: an error thrown in at that yield is the reader giving up (a
    // stream destroyed with an AbortError, as a for-await's break over a Readable does), not the
    // connection's, and asks no GET again (it did: up to a window fetched for nothing, after a 200 ms sleep).
    let delivering = false;
    try {
      const reading = body[Symbol.asyncIterator]() as AsyncIterator<Buffer>;
      for (let next = await nextWithin(reading, body, idleMs); !next.done; next = await nextWithin(reading, body, idleMs)) {
        let chunk = next.value;
        if (skip > 0) {
          const dropped = Math.min(skip, chunk.length);
          skip -= dropped;
          chunk = chunk.subarray(dropped);
          if (chunk.length === 0) continue;
        }
        // More bytes than the object had when listed: another version, whatever its ETag says.
        if (offset + chunk.length > o.size) {
          throw new LoaderError('INPUT_CHANGED', `${o.name} changed during the load: it holds more than the ${o.size} bytes it had when listed`, {
            file: o.name,
          });
        }
        // A server that sends more than the range asked (a 200 with the whole object): the rest is not this GET's.
        if (offset + chunk.length > end) chunk = chunk.subarray(0, end - offset);
        offset += chunk.length;
        failures = 0;
        delivering = true;
        yield chunk;
        delivering = false;
        if (offset >= end) break;
      }
    } catch (error) {
      if (error instanceof LoaderError || delivering) throw error;
      // A dropped or silent connection: the next GET starts at the first byte not received.
      if (++failures > MAX_RESUMES)
        throw new LoaderError('INPUT_UNREADABLE', `cannot read ${o.name}: ${(error as Error).message} (after ${MAX_RESUMES} resumed reads)`, {
          file: o.name,
          cause: error,
        });
      await sleep(100 * 2 ** failures);
      continue;
    } finally {
      // Read to its end, given up, or no longer wanted (the reader stopped early): its socket goes.
      body.destroy();
    }
    if (offset < end && ++failures > MAX_RESUMES)
      throw new LoaderError('INPUT_UNREADABLE', `${o.name} ended after ${offset} of its ${o.size} bytes, ${MAX_RESUMES} times`, { file: o.name });
  }
}

/**
 * The body's next chunk, or an error once `idleMs` pass without one: a connection that goes silent (a dead
 * route, a hung server or proxy) is never closed by itself, and would hold the load for good. The clock runs
 * only while the reader asks for bytes, so a body left paused while the other stripes are written is not
 * timed out.
 */
async function nextWithin(reading: AsyncIterator<Buffer>, body: Readable, idleMs: number): Promise<IteratorResult<Buffer>> {
  const timer = setTimeout(() => body.destroy(new Error(`no byte received for ${idleMs} ms`)), idleMs);
  try {
    return await reading.next();
  } finally {
    clearTimeout(timer);
  }
}

/** The Range of a GET from `offset` to `toByte` (exclusive): none for the whole object, open-ended to its end. */
function rangeHeader(offset: number, toByte: number, size: number): { Range?: string } {
  if (offset === 0 && toByte >= size) return {};
  return { Range: toByte >= size ? `bytes=${offset}-` : `bytes=${offset}-${toByte - 1}` };
}

function changed(o: ObjectRef, now: string | undefined): LoaderError {
  return new LoaderError(
    'INPUT_CHANGED',
    `${o.name} changed during the load (ETag ${o.etag} when listed${now ? `, ${now} now` : ''}): its rows would mix two versions; run the load again on a stable input`,
    { file: o.name },
  );
}

function isMissing(error: unknown): boolean {
  const e = error as { name?: string; $metadata?: { httpStatusCode?: number } };
  return e.name === 'NoSuchKey' || e.name === 'NotFound' || e.$metadata?.httpStatusCode === 404;
}

async function s3Call<T>(url: string, call: () => Promise<T>): Promise<T> {
  try {
    return await call();
  } catch (error) {
    throw s3Error(url, error);
  }
}

function s3Error(url: string, error: unknown): LoaderError {
  // Already in ddb-spread's words: a bad region, endpoint or profile found by the client.
  if (error instanceof LoaderError) return error;
  const noCredentials = missingCredentials(error);
  if (noCredentials) return noCredentials;
  const e = error as { name?: string; message?: string; $metadata?: { httpStatusCode?: number } };
  if (e.name === 'NoSuchBucket') return new LoaderError('INPUT_NOT_FOUND', `${url}: the bucket does not exist`, { file: url, cause: error });
  if (e.$metadata?.httpStatusCode === 403 || e.name === 'AccessDenied')
    return new LoaderError('ACCESS_DENIED', `${url}: access denied (${e.message ?? e.name}); check the credentials' s3:GetObject and s3:ListBucket rights`, {
      file: url,
      cause: error,
    });
  return new LoaderError('INPUT_UNREADABLE', `cannot read ${url}: ${e.message ?? e.name ?? String(error)}`, { file: url, cause: error });
}
