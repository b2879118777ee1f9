/** The S3-compatible test server of the run (test/support/globalSetup.ts): a client, fresh buckets, objects. */
import { CreateBucketCommand, PutObjectCommand, S3Client } from '@aws-sdk/client-s3';
import { randomBytes } from 'node:crypto';
import { inject } from 'vitest';

export const s3Endpoint = () => inject('s3Endpoint');

export function s3Client(endpoint = s3Endpoint()): S3Client {
  return new S3Client({ region: 'us-east-1', endpoint, forcePathStyle: true, credentials: { accessKeyId: 'local', secretAccessKey: 'local' } });
}

/** A new, empty bucket with a unique name. */
export async function newBucket(client: S3Client): Promise<string> {
  const bucket = `t-${randomBytes(6).toString('hex')}`;
  await client.send(new CreateBucketCommand({ Bucket: bucket }));
  return bucket;
}

export async function putObjects(client: S3Client, bucket: string, objects: Record<string, string | Buffer>): Promise<void> {
  for (const [key, body] of Object.entries(objects)) await client.send(new PutObjectCommand({ Bucket: bucket, Key: key, Body: body }));
}
