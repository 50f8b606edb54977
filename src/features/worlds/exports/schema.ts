import { z } from '@hono/zod-openapi';
import { ServerNameParam } from '../../servers/index.js';
import { WorldPath } from '../volumes/index.js';

const ExportStateEnum = z.enum(['pending', 'ready', 'failed']);
export const TicketSchema = z.object({ ticket: z.string(), state: ExportStateEnum, filename: z.string() }).openapi('ExportTicket');
export const StateSchema = z.object({ state: ExportStateEnum, message: z.string().optional() }).openapi('ExportState');
export const TicketParam = z.object({ ticket: z.uuid().openapi({ param: { name: 'ticket', in: 'path' } }) });
export const BackupOfServer = ServerNameParam.extend({ id: z.uuid().openapi({ param: { name: 'id', in: 'path' } }) });
export const DownloadQuery = z.object({ path: WorldPath.default(''), dir: z.enum(['true', 'false']).optional() }).strict();
