import type { Need } from '../../src/features/servers/index.js';

/**
 * Every route that admitted "owner or admin" before members, with what it needs now (the access
 * rule, servers/access.ts). A member with only one permission must pass exactly the routes of that
 * permission (and `member`); every other is 403 forbidden.
 */
export const OWNER_OR_ADMIN_ROUTES: Array<{ method: string; path: string; body?: unknown; need: Need }> = [
  { method: 'GET', path: 'status', need: 'member' },
  { method: 'POST', path: 'wake', need: 'power' },
  { method: 'POST', path: 'stop', need: 'power' },
  { method: 'POST', path: 'restart', need: 'power' },
  { method: 'POST', path: 'emergency-stop', body: { confirm: 'x' }, need: 'power' },
  { method: 'POST', path: 'command', body: { command: 'list' }, need: 'console.command' },
  { method: 'GET', path: 'console', need: 'console.read' },
  { method: 'GET', path: 'activity', need: 'console.read' },
  { method: 'GET', path: 'usage', need: 'console.read' },
  { method: 'GET', path: 'files?path=', need: 'files.read' },
  { method: 'GET', path: 'file?path=a.txt', need: 'files.read' },
  { method: 'GET', path: 'files/ops', need: 'files.read' },
  { method: 'POST', path: 'files/download?path=a.txt', need: 'files.read' },
  { method: 'PUT', path: 'file?path=a.txt', body: { content: '', content_sha256: 'e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855' }, need: 'files.write' },
  { method: 'DELETE', path: 'file?path=nothing-here', need: 'files.write' },
  { method: 'POST', path: 'files/mkdir?path=d', need: 'files.write' },
  { method: 'GET', path: 'files/uploads', need: 'files.write' },
  { method: 'GET', path: 'jobs', need: 'backups.read' },
  { method: 'POST', path: 'backup', need: 'backups.write' },
  { method: 'POST', path: 'restore-backup', body: {}, need: 'backups.write' },
  { method: 'POST', path: 'world/export', need: 'backups.write' },
  { method: 'GET', path: 'schedules', need: 'schedules' },
  { method: 'GET', path: 'allowlist', need: 'access' },
  { method: 'PUT', path: 'allowlist/0f0e0d0c-0b0a-4908-8706-050403020100', body: { can_wake: true }, need: 'access' },
  { method: 'GET', path: 'access/whitelist', need: 'access' },
  { method: 'GET', path: 'access/players', need: 'access' },
  { method: 'GET', path: 'access/ban', need: 'access' },
  { method: 'GET', path: 'members', need: 'owner' },
  { method: 'PUT', path: 'retirement', body: { confirm: 'x', delete: false }, need: 'owner' },
  { method: 'DELETE', path: 'retirement', need: 'owner' },
];
