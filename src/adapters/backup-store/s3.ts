import {
  AbortMultipartUploadCommand,
  CompleteMultipartUploadCommand,
  CreateMultipartUploadCommand,
  DeleteObjectCommand,
  GetObjectCommand,
  HeadBucketCommand,
  S3Client,
  S3ServiceException,
  UploadPartCommand,
} from '@aws-sdk/client-s3';
import { Readable } from 'node:stream';
import { BackupNotFoundError, BackupStoreFullError, checkKey, type BackupStore } from './types.js';

export interface S3BackupStoreOptions {
  endpoint?: string;
  region: string;
  bucket: string;
  accessKeyId?: string;
  secretAccessKey?: string;
  /** Path-style addressing (`endpoint/bucket/key`), which most S3-compatible servers need. */
  forcePathStyle?: boolean;
  /** Objects are sent in parts of this size: the only bytes a put holds in memory. */
  partBytes?: number;
  prefix?: string;
}

const MIN_PART = 5 * 1024 * 1024;
const FULL_CODES = new Set(['EntityTooLarge', 'QuotaExceeded', 'InsufficientStorage', 'XMinioStorageFull']);

/** Collects a stream into parts of `size` bytes (the last one shorter), holding one part at a time. */
async function* partsOf(body: Readable, size: number): AsyncGenerator<Buffer> {
  let chunks: Buffer[] = [];
  let held = 0;
  for await (const chunk of body as AsyncIterable<Buffer>) {
    let rest = chunk;
    while (held + rest.length >= size) {
      const take = size - held;
      chunks.push(rest.subarray(0, take));
      yield Buffer.concat(chunks, size);
      chunks = [];
      held = 0;
      rest = rest.subarray(take);
    }
    if (rest.length > 0) {
      chunks.push(rest);
      held += rest.length;
    }
  }
  if (held > 0 || chunks.length > 0) yield Buffer.concat(chunks, held);
}

function storeError(err: unknown): Error {
  if (err instanceof S3ServiceException && (FULL_CODES.has(err.name) || err.$metadata.httpStatusCode === 507)) {
    return new BackupStoreFullError('the backup store is full', { cause: err });
  }
  return err instanceof Error ? err : new Error(String(err));
}

/**
 * S3-compatible object storage. A put is a multipart upload whatever the size, so an archive of
 * unknown length streams through in fixed parts and memory stays flat; a failed put is aborted so
 * no parts are left behind.
 */
export class S3BackupStore implements BackupStore {
  readonly kind = 's3' as const;
  readonly #client: S3Client;
  readonly #bucket: string;
  readonly #partBytes: number;
  readonly #prefix: string;

  constructor(options: S3BackupStoreOptions) {
    this.#client = new S3Client({
      region: options.region,
      endpoint: options.endpoint,
      forcePathStyle: options.forcePathStyle ?? options.endpoint !== undefined,
      credentials:
        options.accessKeyId && options.secretAccessKey
          ? { accessKeyId: options.accessKeyId, secretAccessKey: options.secretAccessKey }
          : undefined,
    });
    this.#bucket = options.bucket;
    this.#partBytes = Math.max(MIN_PART, options.partBytes ?? 8 * 1024 * 1024);
    this.#prefix = options.prefix ?? '';
  }

  async put(key: string, body: Readable): Promise<{ size: number }> {
    const Key = this.#key(key);
    const Bucket = this.#bucket;
    let uploadId: string | undefined;
    try {
      const created = await this.#client.send(new CreateMultipartUploadCommand({ Bucket, Key }));
      uploadId = created.UploadId;
      const parts: { ETag: string | undefined; PartNumber: number }[] = [];
      let size = 0;
      for await (const part of partsOf(body, this.#partBytes)) {
        const PartNumber = parts.length + 1;
        const sent = await this.#client.send(
          new UploadPartCommand({ Bucket, Key, UploadId: uploadId, PartNumber, Body: part, ContentLength: part.length }),
        );
        parts.push({ ETag: sent.ETag, PartNumber });
        size += part.length;
      }
      if (parts.length === 0) {
        const sent = await this.#client.send(
          new UploadPartCommand({ Bucket, Key, UploadId: uploadId, PartNumber: 1, Body: Buffer.alloc(0), ContentLength: 0 }),
        );
        parts.push({ ETag: sent.ETag, PartNumber: 1 });
      }
      await this.#client.send(new CompleteMultipartUploadCommand({ Bucket, Key, UploadId: uploadId, MultipartUpload: { Parts: parts } }));
      return { size };
    } catch (err) {
      body.destroy();
      if (uploadId) {
        await this.#client.send(new AbortMultipartUploadCommand({ Bucket, Key, UploadId: uploadId })).catch(() => undefined);
      }
      throw storeError(err);
    }
  }

  async get(key: string): Promise<Readable> {
    try {
      const got = await this.#client.send(new GetObjectCommand({ Bucket: this.#bucket, Key: this.#key(key) }));
      if (!(got.Body instanceof Readable)) throw new Error('the S3 client returned no Node stream');
      return got.Body;
    } catch (err) {
      if (err instanceof S3ServiceException && (err.name === 'NoSuchKey' || err.$metadata.httpStatusCode === 404)) {
        throw new BackupNotFoundError(`no object ${key}`);
      }
      throw storeError(err);
    }
  }

  async delete(key: string): Promise<void> {
    await this.#client.send(new DeleteObjectCommand({ Bucket: this.#bucket, Key: this.#key(key) }));
  }

  async ping(): Promise<void> {
    await this.#client.send(new HeadBucketCommand({ Bucket: this.#bucket }));
  }

  close(): void {
    this.#client.destroy();
  }

  #key(key: string): string {
    return this.#prefix + checkKey(key);
  }
}
