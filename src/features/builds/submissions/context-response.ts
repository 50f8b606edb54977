import { Readable } from 'node:stream';
import type { Context } from 'hono';
import type { AppEnv } from '../../../http/env.js';
import type { StoredContext } from './service.js';

/** The tarball verbatim, streamed, with its length and sha-256. */
export function contextResponse<E extends AppEnv>(c: Context<E>, context: StoredContext): Response {
  return c.body(Readable.toWeb(context.stream) as ReadableStream<Uint8Array>, 200, {
    'Content-Type': 'application/gzip',
    'Content-Length': String(context.size),
    'X-Felis-Context-Sha256': context.sha256,
    'Cache-Control': 'no-store',
  });
}

/** The OpenAPI answer of a context download. */
export const contextAnswer = (description: string) => ({
  description,
  headers: { 'X-Felis-Context-Sha256': { description: 'lowercase hex sha-256 of the tarball', schema: { type: 'string' as const } } },
  content: { 'application/gzip': { schema: { type: 'string' as const, format: 'binary' } } },
});
