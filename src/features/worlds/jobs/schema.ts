import { z } from '@hono/zod-openapi';

const ServerJobSchema = z
  .object({
    name: z.string(),
    kind: z.string(),
    state: z.enum(['running', 'succeeded', 'failed']),
    message: z.string().optional(),
    backup_id: z.string().optional(),
    started_at: z.string().optional(),
    finished_at: z.string().optional(),
  })
  .openapi('ServerJob');

export const ServerJobsSchema = z.object({ server: z.string(), jobs: z.array(ServerJobSchema) }).openapi('ServerJobs');
