import { z } from '@hono/zod-openapi';

/** A JSON response entry of an OpenAPI route. */
export const json = <T extends z.ZodType>(schema: T, description: string) => ({
  description,
  content: { 'application/json': { schema } },
});

/** A named error answer (the envelope), documented by its codes. */
export const errorAnswer = (description: string) => json(z.any(), description);

/** A required JSON request body. */
export const jsonBody = <T extends z.ZodType>(schema: T) => ({ body: { content: { 'application/json': { schema } } } });
