import { z } from '@hono/zod-openapi';

export const HealthSchema = z.object({ status: z.literal('ok') }).openapi('Health');
export const ReadySchema = z.object({ status: z.literal('ready') }).openapi('Ready');
