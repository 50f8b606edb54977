import { z } from '@hono/zod-openapi';

/** `version`: the running release (src/version.ts), so an operator can tell which one answers. */
export const HealthSchema = z.object({ status: z.literal('ok'), version: z.string() }).openapi('Health');
export const ReadySchema = z.object({ status: z.literal('ready') }).openapi('Ready');
