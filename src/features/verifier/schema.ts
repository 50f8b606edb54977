import { z } from '@hono/zod-openapi';

export const HasJoinedProfileSchema = z
  .object({
    id: z.string().regex(/^[0-9a-f]{32}$/).openapi({ description: 'undashed UUID', example: '069a79f444e94726a5befca90e38aaf5' }),
    name: z.string().openapi({ example: 'Notch' }),
    properties: z
      .array(z.unknown())
      .openapi({ description: "the validating source's properties (textures and their signature), unchanged" }),
  })
  .openapi('HasJoinedProfile');
