import { z } from '@hono/zod-openapi';
import { refusedAs } from '../../../http/coded-refusal.js';

/**
 * A path in a world as a client sends it: long enough for the path rule to be the one that refuses
 * (400 bad_path names why), and a NUL is bad_path too, before the pipeline's storable-text check.
 */
export const WorldPath = z
  .string()
  .max(16_384)
  .refine((path) => !path.includes('\0'), refusedAs('bad_path', 'The path holds a NUL byte.'));
