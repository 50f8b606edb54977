/**
 * The front door of the audit feature: the one way any feature records what was done, by whom,
 * to what (the `audit_log` table).
 */
export { changeRecorder, createAuditParts, writeAudit } from './write.js';
export type { AuditActor, AuditEntry } from './write.js';
