/**
 * The front door of the audit feature: the one way any feature records what was done, by whom,
 * to what (the `audit_log` table), and the one way any feature reads it back.
 */
export { auditPage, type AuditFilters, type AuditRow } from './read.js';
export { changeRecorder, createAuditParts, writeAudit } from './write.js';
export type { AuditActor, AuditEntry } from './write.js';
