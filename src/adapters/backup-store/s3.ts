import {
  DeleteObjectCommand,
  GetObjectCommand,
  HeadBucketCommand,
  ListObjectsV2Command,
  S3Client,
  S3ServiceException,
} from '@aws-sdk/client-s3';
import { Upload } from '@aws-sdk/lib-storage';
import { Readable } from 'node:stream';
import { BackupNotFoundError, BackupStoreFullError, checkKey, type BackupStore, type StoredObject } from './types.js';

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

function storeError(err: unknown): Error {
  if (err instanceof S3ServiceException && (FULL_CODES.has(err.name) || err.$metadata.httpStatusCode === 507)) {
    return new BackupStoreFullError('the backup store is full', { cause: err });
  }
  return err instanceof Error ? err : new Error(String(err));
}

/**
 * S3-compatible object storage. A put streams an archive of unknown length through lib-storage's
 * Upload in fixed parts, so memory stays flat; a failed put is aborted so no parts are left behind.
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
    let size = 0;
    const counted = Readable.from(
      (async function* () {
        for await (const chunk of body as AsyncIterable<Buffer>) {
          size += chunk.length;
          yield chunk;
        }
      })(),
      { objectMode: false },
    );
    // lib-storage's Upload: a multipart upload in parts of partBytes, one part in flight (the only
    // bytes held), aborted on failure so no parts are left behind; a body under one part is a plain put.
    const upload = new Upload({
      client: this.#client,
      params: { Bucket: this.#bucket, Key: this.#key(key), Body: counted },
      partSize: this.#partBytes,
      queueSize: 1,
      leavePartsOnError: false,
    });
    try {
      await upload.done();
      return { size };
    } catch (err) {
      body.destroy();
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

  async list(prefix: string): Promise<StoredObject[]> {
    const found: StoredObject[] = [];
    let token: string | undefined;
    do {
      const page = await this.#client
        .send(new ListObjectsV2Command({ Bucket: this.#bucket, Prefix: this.#prefix + prefix, ContinuationToken: token }))
        .catch((err: unknown) => {
          throw storeError(err);
        });
      for (const object of page.Contents ?? []) {
        if (object.Key === undefined) continue;
        found.push({ key: object.Key.slice(this.#prefix.length), size: object.Size ?? 0 });
      }
      token = page.IsTruncated ? page.NextContinuationToken : undefined;
    } while (token);
    return found.sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0));
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
