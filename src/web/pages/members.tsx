import type { Context } from 'hono';
import type { AppEnv } from '../../http/env.js';
import { ActionTable, PostForm, on, type FieldSpec, type OwnState } from '../forms.js';
import type { Web } from '../index.js';
import { ActionButton } from '../layout.js';

/** A member's permissions as the API names them (the contract's list), and what each lets a member do. */
export const PERMISSIONS: Array<[string, string]> = [
  ['console.read', 'read the console and activity'],
  ['console.command', 'send console commands'],
  ['power', 'wake, stop and restart'],
  ['files.read', 'read files'],
  ['files.write', 'change files'],
  ['backups.read', 'see backups and jobs'],
  ['backups.write', 'back up, restore and export'],
  ['schedules', 'manage schedules'],
  ['access', 'players, whitelist, bans, allowlist'],
];

/** What a part of a server's page needs: a member permission, or `owner` (the owner and staff only). */
export type Need = string;

export interface Member {
  user_id: string;
  username?: string;
  email?: string;
  permissions: string[];
  added_at: string;
}

/**
 * Who the viewer is to a server, as the API tells it: the member list answers the owner and staff
 * (`manage`); a member finds its permissions in `/me/servers`. Anyone else is left to the API's
 * own refusals (an unclaimed server, say), as before.
 */
export interface ServerAccess {
  manage: boolean;
  /** The viewer's permissions when it is a member; absent for the owner, staff and anyone else. */
  permissions?: string[];
  members: Member[];
  may(need: Need): boolean;
}

export async function accessOf(c: Context<AppEnv>, web: Web, name: string): Promise<ServerAccess> {
  const members = await web.api<{ members: Member[] }>(c, 'GET', `/api/v1/servers/${name}/members`);
  let permissions: string[] | undefined;
  if (!members.ok && members.status === 403) {
    const mine = await web.api<{ servers: Array<{ name: string; member?: boolean; permissions?: string[] }> }>(c, 'GET', '/api/v1/me/servers');
    const row = mine.ok ? mine.body.servers.find((s) => s.name === name) : undefined;
    if (row?.member) permissions = row.permissions ?? [];
  }
  const manage = members.ok;
  return {
    manage,
    permissions,
    members: members.ok ? members.body.members : [],
    may: (need) => (need === 'owner' ? manage : permissions === undefined || permissions.includes(need)),
  };
}

/** The permissions ticked in a form (`perm.<name>` boxes). */
export function permissionsOf(f: Record<string, string>): string[] {
  return PERMISSIONS.map(([p]) => p).filter((p) => on(f[`perm.${p}`]));
}

const nameOf = (m: Member) => m.username ?? m.email ?? m.user_id;

function boxes(prefix: string, ticked: string[]): FieldSpec[] {
  return PERMISSIONS.map(([p, what]) => ({ kind: 'check' as const, id: `${prefix}-${p.replace('.', '-')}`, name: `perm.${p}`, label: `${p}: ${what}`, checked: ticked.includes(p) }));
}

/** The members tab (owner and staff): who the server is shared with, their permissions, and adding one. */
export function MembersTab(props: { base: string; members: Member[]; add: OwnState; change: OwnState & { user_id?: string } }) {
  const { base, members } = props;
  return (
    <section aria-labelledby="members-heading">
      <h2 id="members-heading">Members</h2>
      <p>People this server is shared with, and what each may do. A member never manages members, retires, hands over or claims the server.</p>
      <ActionTable
        caption="Members"
        rows={members}
        empty="The server is shared with nobody yet."
        columns={[
          ['Member', (m) => <>{nameOf(m)}{m.email && m.username ? <><br /><small>{m.email}</small></> : null}<br /><small>{`since ${m.added_at}`}</small></>],
          [
            'Permissions',
            (m) => (
              <PostForm
                action={`${base}/do/member-update`}
                state={props.change.user_id === m.user_id ? props.change : { values: {}, errors: {}, refused: false }}
                hidden={{ user_id: m.user_id, member: nameOf(m) }}
                rows={[{ legend: `What ${nameOf(m)} may do`, fields: boxes(`m-${m.user_id}`, m.permissions) }]}
                submit={`Save ${nameOf(m)}'s permissions`}
                secondary
              />
            ),
          ],
        ]}
        actions={(m) => <ActionButton action={`${base}/do/member-remove`} fields={{ user_id: m.user_id, member: nameOf(m) }} label={`Remove ${nameOf(m)}`} secondary />}
      />
      <h3 id="member-add-heading">Share the server</h3>
      <p><small>Asks for a fresh proof of identity: a sign-in within the last 5 minutes.</small></p>
      <PostForm
        action={`${base}/do/member-add`}
        label="Share the server"
        state={props.add}
        rows={[{ id: 'member-user', name: 'user', label: 'Username or e-mail address', required: true }, { legend: 'What they may do', fields: boxes('member-add', ['console.read']) }]}
        submit="Add the member"
      />
    </section>
  );
}
