import { z } from '@hono/zod-openapi';

/** `limit` and `offset` of the list routes: 50 by default, at most 200. */
export const PageQuery = {
  limit: z.coerce.number().int().min(1).max(200).default(50),
  offset: z.coerce.number().int().min(0).max(1_000_000).default(0),
};

/** A search term: at most 128 characters, matched as a literal substring (no LIKE wildcards). */
export const SearchTerm = z.string().max(128).optional();

