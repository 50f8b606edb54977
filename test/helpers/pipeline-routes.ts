import { z } from '@hono/zod-openapi';
import { streamSSE } from 'hono/streaming';
import { rawBodyOf } from '../../src/http/raw-body.js';
import { createRouter, defineRoute, json, rawBody } from '../../src/http/route.js';

/** What the upload fixture committed: only bodies read to their end and verified. */
export interface UploadStore {
  committed: Array<{ bytes: number; sha256: string }>;
  /** The limit's setting, read at request time. */
  partMaxBytes: number;
  /** Chunks seen by the handler, as they came (a body is never held whole before the handler). */
  chunks: number[];
}

const Stored = z.object({ size: z.number(), sha256: z.string(), media_type: z.string() });

const upload = (path: string, digest: 'required' | 'optional', store: UploadStore) =>
  defineRoute(
    { tier: 'public' },
    { method: 'put', path, request: rawBody('application/octet-stream', 'application/gzip'), responses: { 200: json(Stored, 'stored') } },
    { rawBody: { limit: { name: 'part_max_bytes', bytes: () => store.partMaxBytes }, digest } },
  );

const events = defineRoute(
  { tier: 'public' },
  {
    method: 'get',
    path: '/t/events',
    request: { headers: z.strictObject({ 'last-event-id': z.string().regex(/^\d{1,12}$/).optional() }) },
    responses: { 200: { description: 'events', content: { 'text/event-stream': { schema: z.string() } } } },
  },
  { streamed: true },
);

const download = defineRoute(
  { tier: 'public' },
  {
    method: 'get',
    path: '/t/download/{size}',
    request: { params: z.object({ size: z.coerce.number().int().min(0).max(10_000_000) }) },
    responses: { 200: { description: 'bytes', content: { 'application/octet-stream': { schema: z.string() } } } },
  },
  { streamed: true },
);

export function pipelineRoutes(store: UploadStore) {
  const store_ = (path: string, digest: 'required' | 'optional') =>
    createRouter().openapi(upload(path, digest, store), async (c) => {
      const body = rawBodyOf(c);
      let size = 0;
      for await (const chunk of body) {
        store.chunks.push(chunk.byteLength);
        size += chunk.byteLength;
      }
      // Only now, the iteration having ended without a throw, is anything committed.
      store.committed.push({ bytes: size, sha256: body.sha256 });
      return c.json({ size, sha256: body.sha256, media_type: body.mediaType }, 200);
    });
  return createRouter()
    .include(store_('/t/upload', 'optional'))
    .include(store_('/t/upload-signed', 'required'))
    .openapi(events, (c) => {
      const after = Number(c.req.valid('header')['last-event-id'] ?? 0);
      return streamSSE(c, async (stream) => {
        for (let id = after + 1; id <= after + 3; id++) await stream.writeSSE({ id: String(id), data: `line ${id}` });
      });
    })
    .openapi(download, (c) => {
      let left = c.req.valid('param').size;
      const body = new ReadableStream<Uint8Array>({
        pull(controller) {
          if (left === 0) return controller.close();
          const size = Math.min(left, 64 * 1024);
          left -= size;
          controller.enqueue(new Uint8Array(size).fill(0x61));
        },
      });
      return c.body(body, 200, { 'Content-Type': 'application/octet-stream' });
    });
}
