/**
 * `felis backup create|list`: world backups through the running service's API with an API key.
 *
 *   felis backup create NAME [--wait [--timeout S]] [--json]
 *   felis backup list [--server NAME] [--json]
 */
import type { Command } from '../command.js';
import { callApi, out, parseRemote, REMOTE_USAGE, remote, seconds, serverName, table, waitFor } from './remote.js';

interface BackupView {
  id: string;
  server_name: string;
  size_bytes: number;
  reason: string;
  status: string;
  created_at: string;
  expires_at: string;
  corrupt?: boolean;
}

interface ServerJob {
  name: string;
  kind: string;
  state: 'running' | 'succeeded' | 'failed';
  message?: string;
  backup_id?: string;
  started_at?: string;
}

function size(bytes: number): string {
  const units = ['B', 'KiB', 'MiB', 'GiB', 'TiB'];
  let n = bytes;
  let unit = 0;
  while (n >= 1024 && unit < units.length - 1) {
    n /= 1024;
    unit += 1;
  }
  return `${unit === 0 ? n : n.toFixed(1)} ${units[unit]}`;
}

export const backupCreate: Command = {
  verb: 'backup create',
  summary: "back up a stopped server's world now (--wait: until the archive is stored)",
  usage: `felis backup create NAME [--wait [--timeout SECONDS]] [--json]\n\n  --wait         follow the backup job until it ends (progress on stderr)\n  --timeout S    how long --wait waits (default 1800)\n\n${REMOTE_USAGE}`,
  run: (args) =>
    remote(async () => {
      const call = parseRemote(args, { wait: { type: 'boolean' }, timeout: { type: 'string' } }, 1);
      const name = serverName(call.positionals[0]);
      const timeout = seconds(call.values.timeout, 1800);
      const before = new Set(((await callApi(call.target, 'GET', `/api/v1/servers/${name}/jobs`)).body as { jobs: ServerJob[] }).jobs.map((j) => j.name));
      const asked = (await callApi(call.target, 'POST', `/api/v1/servers/${name}/backup`)).body;
      if (!call.values.wait) {
        out(call.json ? JSON.stringify(asked, null, 2) : `${name}: backup started (felis backup list --server ${name} shows it when stored)`);
        return 0;
      }
      // The job this request started: the newest backup job the list did not hold before.
      const job = await waitFor(`backup of ${name}`, timeout, async () => {
        const { jobs } = (await callApi(call.target, 'GET', `/api/v1/servers/${name}/jobs`)).body as { jobs: ServerJob[] };
        const mine = jobs.find((j) => j.kind === 'backup' && !before.has(j.name));
        if (!mine) return { done: false, state: 'queued', value: undefined };
        return {
          done: mine.state === 'succeeded',
          failed: mine.state === 'failed' ? (mine.message ?? 'the backup job failed') : undefined,
          state: mine.state,
          value: mine,
        };
      });
      out(call.json ? JSON.stringify(job, null, 2) : `${name}: backup ${job?.backup_id ?? ''} stored`);
      return 0;
    }),
};

export const backupList: Command = {
  verb: 'backup list',
  summary: 'the backups you may see (staff: all), newest first',
  usage: `felis backup list [--server NAME] [--json]\n\n  --server NAME  only this server's backups\n\n${REMOTE_USAGE}`,
  run: (args) =>
    remote(async () => {
      const call = parseRemote(args, { server: { type: 'string' } });
      const query = call.values.server === undefined ? '' : `?server=${serverName(call.values.server as string)}`;
      const { backups } = (await callApi(call.target, 'GET', `/api/v1/backups${query}`)).body as { backups: BackupView[]; total: number };
      if (call.json) out(JSON.stringify(backups, null, 2));
      else if (backups.length === 0) out('No backups.');
      else {
        out(
          table(
            ['ID', 'SERVER', 'CREATED', 'SIZE', 'REASON', 'STATUS'],
            backups.map((b) => [b.id, b.server_name, b.created_at, size(b.size_bytes), b.reason, b.corrupt ? `${b.status} (corrupt)` : b.status]),
          ),
        );
      }
      return 0;
    }),
};
