import { z } from '@hono/zod-openapi';

export const ImageSchema = z
  .object({
    image_ref: z.string(),
    source: z.string(),
    added_by: z.string(),
    enabled: z.boolean(),
    added_at: z.string().openapi({ format: 'date-time' }),
    build_id: z.string().optional(),
  })
  .openapi('Image');
export type ImageView = z.infer<typeof ImageSchema>;

export const AddImageBody = z.strictObject({ image_ref: z.string().min(1).max(512) }).openapi('AddImage');
export const PatchImageBody = z.strictObject({ enabled: z.boolean() }).openapi('PatchImage');
export const ImageRefParam = z.object({
  image_ref: z
    .string()
    .min(1)
    .max(512)
    .openapi({ param: { name: 'image_ref', in: 'path' }, description: 'URL-encoded image reference' }),
});

export const ImageRefQuery = z.strictObject({ ref: z.string().min(1).max(512) });
