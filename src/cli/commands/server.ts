/**
 * `felis server list|status|wake|stop`: the servers the key's user owns or shares, through the
 * running service's API (src/cli/api.ts says how it is reached).
 *
 *   felis server list [--json]
 *   felis server status NAME [--json]
 *   felis server wake NAME [--wait [--timeout S]] [--json]
 *   felis server stop NAME [--wait [--timeout S]] [--json]
 */
import type { Command } from '../command.js';
import { osUser } from '../os-user.js';
import { callApi, OPS_USAGE, out, parseRemote, REMOTE_USAGE, remote, seconds, serverName, table, waitFor, type RemoteCall } from './remote.js';

interface ServerInfo {
  name: string;
  subdomain: string;
  phase?: string;
  ready?: boolean;
  playersOnline: number;
  playersMax: number;
  desiredState?: string;
  startGaveUp?: boolean;
  owned?: boolean;
  member?: boolean;
}

const status = (call: RemoteCall, name: string) => callApi(call.target, 'GET', `/api/v1/servers/${name}/status`).then((a) => a.body as ServerInfo);

function describe(info: ServerInfo): string {
  const phase = info.phase ?? 'Unknown';
  return `${phase}${info.phase === 'Running' && !info.ready ? ' (not ready yet)' : ''}`;
}

const list: Command = {
  verb: 'server list',
  summary: 'the servers you own or share: phase and players',
  usage: `felis server list [--json]\n\n${REMOTE_USAGE}`,
  run: (args) =>
    remote(async () => {
      const call = parseRemote(args);
      const { servers } = (await callApi(call.target, 'GET', '/api/v1/me/servers')).body as { servers: ServerInfo[] };
      if (call.json) out(JSON.stringify(servers, null, 2));
      else if (servers.length === 0) out('No servers yet: claim one in the game, or ask staff to make one.');
      else {
        out(
          table(
            ['NAME', 'SUBDOMAIN', 'PHASE', 'PLAYERS', 'YOURS'],
            servers.map((s) => [s.name, s.subdomain, s.phase ?? 'Unknown', `${s.playersOnline}/${s.playersMax}`, s.owned ? 'owner' : s.member ? 'member' : '']),
          ),
        );
      }
      return 0;
    }),
};

const show: Command = {
  verb: 'server status',
  summary: "one server's phase, readiness and players",
  usage: `felis server status NAME [--json]\n\n${REMOTE_USAGE}`,
  run: (args) =>
    remote(async () => {
      const call = parseRemote(args, {}, 1);
      const info = await status(call, serverName(call.positionals[0]));
      if (call.json) out(JSON.stringify(info, null, 2));
      else out(`${info.name}: ${describe(info)}, ${info.playersOnline}/${info.playersMax} players${info.desiredState ? `, asked to be ${info.desiredState}` : ''}`);
      return 0;
    }),
};

/** wake and stop: ask, then (with --wait) follow the server to where it was asked to go. */
function power(action: 'wake' | 'stop'): Command {
  const goal = action === 'wake' ? 'Running' : 'Stopped';
  return {
    verb: `server ${action}`,
    summary: action === 'wake' ? 'start a server (--wait: until players can join)' : 'stop a server cleanly (--wait: until it has stopped)',
    usage: `felis server ${action} NAME [--wait [--timeout SECONDS]] [--json]\n\n  --wait         follow it until it is ${goal}${action === 'wake' ? ' and ready' : ''} (progress on stderr)\n  --timeout S    how long --wait waits (default 300)\n\n${REMOTE_USAGE}`,
    run: (args) =>
      remote(async () => {
        const call = parseRemote(args, { wait: { type: 'boolean' }, timeout: { type: 'string' } }, 1);
        const name = serverName(call.positionals[0]);
        const timeout = seconds(call.values.timeout, 300);
        const asked = (await callApi(call.target, 'POST', `/api/v1/servers/${name}/${action}`)).body;
        if (!call.values.wait) {
          out(call.json ? JSON.stringify(asked, null, 2) : `${name}: asked to be ${goal}`);
          return 0;
        }
        const info = await waitFor(`${name}`, timeout, async () => {
          const now = await status(call, name);
          const done = action === 'wake' ? now.phase === 'Running' && now.ready === true : now.phase === 'Stopped';
          const failed = action === 'wake' && now.phase === 'Failed' && now.startGaveUp ? 'the start failed and no retry is left (see the console log)' : undefined;
          return { done, failed, state: describe(now), value: now };
        });
        out(call.json ? JSON.stringify(info, null, 2) : `${name}: ${describe(info)}`);
        return 0;
      }),
  };
}

export const serverList = list;
export const serverStatus = show;
export const serverWake = power('wake');
export const serverStop = power('stop');

export const serverCreate: Command = {
  verb: 'server create',
  summary: 'make a new stopped server (the ops token; staff only)',
  usage: [
    'felis server create NAME [--subdomain SUB] [--image REF] [--memory 4Gi] [--storage 10Gi] [--cpu 2] [--display-name TEXT] [--json]',
    '',
    '  --subdomain SUB    the host players join, SUB.ROOT_DOMAIN (default NAME)',
    '  --image REF        a whitelisted image (default the platform image)',
    '  --memory, --storage, --cpu    quantities as Kubernetes writes them',
    '  --display-name     the name the panel shows',
    '',
    OPS_USAGE,
  ].join('\n'),
  run: (args) =>
    remote(async () => {
      const call = parseRemote(
        args,
        { subdomain: { type: 'string' }, image: { type: 'string' }, memory: { type: 'string' }, storage: { type: 'string' }, cpu: { type: 'string' }, 'display-name': { type: 'string' } },
        1,
        'ops',
      );
      const name = serverName(call.positionals[0]);
      const v = call.values as Record<string, string | undefined>;
      const body = {
        name,
        subdomain: serverName(v.subdomain ?? name),
        ...(v.image ? { image: v.image } : {}),
        ...(v.memory ? { memory: v.memory } : {}),
        ...(v.storage ? { storage: v.storage } : {}),
        ...(v.cpu ? { resources: { cpu: v.cpu } } : {}),
        ...(v['display-name'] ? { display_name: v['display-name'] } : {}),
        ...(/^[a-z_][a-z0-9_.-]{0,31}$/i.test(osUser()) ? { os_user: osUser() } : {}),
      };
      const made = (await callApi(call.target, 'POST', '/api/v1/internal/servers', body)).body as { name: string; subdomain: string };
      out(call.json ? JSON.stringify(made, null, 2) : `${made.name}: made (Stopped), players join at ${made.subdomain}.<ROOT_DOMAIN>`);
      return 0;
    }),
};
