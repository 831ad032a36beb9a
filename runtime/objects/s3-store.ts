import { createHash } from 'node:crypto';
import {
  DeleteObjectCommand,
  GetObjectCommand,
  HeadBucketCommand,
  HeadObjectCommand,
  ListObjectsV2Command,
  PutObjectCommand,
  S3Client,
} from '@aws-sdk/client-s3';
import { normalizeListOptions } from './list-options.js';
import { assertObjectKey } from './object-key.js';
import { OBJECT_STORE_ERROR, ObjectStoreError } from './object-store-error.js';
import type { HeadResult, ListOptions, ListResult, ObjectStore, PutOptions, PutResult } from './object-store.js';

export interface S3StoreOptions {
  bucket: string;
  /** For S3-compatible stores (MinIO, R2, Ceph, s3rver); AWS when absent. */
  endpoint?: string;
  region: string;
  /** `https://host/bucket/key` instead of `https://bucket.host/key`; most S3-compatible stores need it. */
  forcePathStyle: boolean;
  /** Static credentials; when absent the SDK's default chain (env, profile, IMDS…) applies. */
  credentials?: { accessKeyId: string; secretAccessKey: string; sessionToken?: string };
  /** SDK attempts per operation, retries included (default 3). */
  maxAttempts?: number;
}

// Bounded waits, so a blackholed endpoint fails an operation (and the health probe) instead of
// hanging it. The request timeout covers the whole exchange, generous for large checkpoints.
const CONNECTION_TIMEOUT_MS = 5_000;
const REQUEST_TIMEOUT_MS = 120_000;

// The SDK's error fields we read; its errors are plain objects at this I/O edge.
interface SdkError {
  name?: string;
  code?: string;
  $metadata?: { httpStatusCode?: number };
}

// GetObject names a missing key NoSuchKey in its body, so a missing bucket (also 404) is not
// mistaken for a missing object. HeadObject answers a bare 404 either way; check() tells the
// missing bucket apart.
function isNoSuchKey(err: unknown): boolean {
  return (err as SdkError | undefined)?.name === 'NoSuchKey';
}

function isHeadNotFound(err: unknown): boolean {
  const e = err as SdkError | undefined;
  return e?.name === 'NotFound' || e?.name === 'NoSuchKey' || e?.$metadata?.httpStatusCode === 404;
}

/**
 * Every failure other than "no such key" becomes object_store_unavailable: connection refused,
 * DNS, timeouts, 5xx and throttling are outages, and 403 or a missing bucket are
 * misconfigurations that equally leave the service without its store. The message names the
 * operation and the SDK's error name and status, never credentials.
 */
function unavailable(op: string, err: unknown): ObjectStoreError {
  const e = err as SdkError | undefined;
  const what = e?.name ?? e?.code ?? 'error';
  const status = e?.$metadata?.httpStatusCode;
  return new ObjectStoreError(
    OBJECT_STORE_ERROR.UNAVAILABLE,
    `s3 object store: ${op} failed (${what}${status === undefined ? '' : `, HTTP ${status}`})`,
    { cause: err },
  );
}

export function createS3Store(options: S3StoreOptions): ObjectStore {
  const Bucket = options.bucket;
  const client = new S3Client({
    region: options.region,
    forcePathStyle: options.forcePathStyle,
    ...(options.endpoint === undefined ? {} : { endpoint: options.endpoint }),
    ...(options.credentials === undefined ? {} : { credentials: options.credentials }),
    ...(options.maxAttempts === undefined ? {} : { maxAttempts: options.maxAttempts }),
    // The SDK now adds CRC checksums to every request and validates them on responses by
    // default; several S3-compatible stores reject or omit them. Only when an operation
    // requires it.
    requestChecksumCalculation: 'WHEN_REQUIRED',
    responseChecksumValidation: 'WHEN_REQUIRED',
    requestHandler: { connectionTimeout: CONNECTION_TIMEOUT_MS, requestTimeout: REQUEST_TIMEOUT_MS },
  });

  return {
    async put(key: string, body: Uint8Array, opts?: PutOptions): Promise<PutResult> {
      assertObjectKey(key);
      const sha256 = createHash('sha256').update(body).digest('hex');
      try {
        await client.send(
          new PutObjectCommand({
            Bucket,
            Key: key,
            Body: body,
            ContentLength: body.byteLength,
            ...(opts?.contentType === undefined ? {} : { ContentType: opts.contentType }),
          }),
        );
      } catch (err) {
        throw unavailable('put', err);
      }
      return { size: body.byteLength, sha256 };
    },

    async get(key: string): Promise<Uint8Array | null> {
      assertObjectKey(key);
      try {
        const out = await client.send(new GetObjectCommand({ Bucket, Key: key }));
        if (out.Body === undefined) return new Uint8Array(0);
        return await out.Body.transformToByteArray();
      } catch (err) {
        if (isNoSuchKey(err)) return null;
        throw unavailable('get', err);
      }
    },

    async head(key: string): Promise<HeadResult | null> {
      assertObjectKey(key);
      try {
        const out = await client.send(new HeadObjectCommand({ Bucket, Key: key }));
        const size = out.ContentLength ?? 0;
        return out.ContentType === undefined ? { size } : { size, contentType: out.ContentType };
      } catch (err) {
        if (isHeadNotFound(err)) return null;
        throw unavailable('head', err);
      }
    },

    async delete(key: string): Promise<void> {
      assertObjectKey(key);
      try {
        // S3 answers 204 for an absent key too, which makes delete idempotent; a 404 here
        // means the bucket is missing, an error like any other.
        await client.send(new DeleteObjectCommand({ Bucket, Key: key }));
      } catch (err) {
        throw unavailable('delete', err);
      }
    },

    async list(prefix: string, opts?: ListOptions): Promise<ListResult> {
      const { limit, after } = normalizeListOptions(opts);
      let out;
      try {
        // StartAfter rather than S3's opaque continuation token, so `next` is the last key on
        // both drivers and a caller can resume from any key it has seen.
        out = await client.send(
          new ListObjectsV2Command({
            Bucket,
            Prefix: prefix,
            MaxKeys: limit,
            ...(after === undefined ? {} : { StartAfter: after }),
          }),
        );
      } catch (err) {
        throw unavailable('list', err);
      }
      const keys = (out.Contents ?? []).flatMap((o) => (o.Key === undefined ? [] : [o.Key]));
      const last = keys[keys.length - 1];
      return out.IsTruncated === true && last !== undefined ? { keys, next: last } : { keys };
    },

    async check(): Promise<void> {
      try {
        await client.send(new HeadBucketCommand({ Bucket }));
      } catch (err) {
        throw unavailable('check', err);
      }
    },

    async close(): Promise<void> {
      // Closes the keep-alive sockets, so a stopping process is not held open by them.
      client.destroy();
    },
  };
}
