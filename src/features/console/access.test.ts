import { and, eq } from 'drizzle-orm';
import { afterEach, describe, expect, it } from 'vitest';
import { PaperGame } from '../../adapters/cluster/simulated-paper.js';
import { RconPool } from '../../adapters/rcon/pool.js';
import { auditLog } from '../../db/schema/audit.js';
import { createTestApps, createTestDeps, jsonRequest, type TestDeps } from '../../../test/helpers/app.js';
import { consoleCast, runningServer } from '../../../test/helpers/console.js';
import { useTestDatabase } from '../../../test/helpers/database.js';
import { startRconPeer, type RconPeer } from '../../../test/helpers/rcon-peer.js';
import { addServer } from '../../../test/helpers/servers.js';
import { createUser, signIn } from '../../../test/helpers/sessions.js';
import { describeBadBodies, describeTierMatrix } from '../../../test/helpers/tiers.js';

const database = useTestDatabase();
const peers: RconPeer[] = [];
afterEach(async () => {
  await Promise.all(peers.splice(0).map((p) => p.close()));
});

/** Deps whose RCON reaches a TCP peer (replies cut into 9-byte packets) instead of the simulated pod. */
async function withPeer(options: { game?: PaperGame; password?: string; dial?: string } = {}) {
  const peer = await startRconPeer({ fragmentBytes: 9, ...(options.game ? { game: options.game } : {}), password: 'secret-from-the-server' });
  peers.push(peer);
  const endpoint = { ...peer.endpoint, password: options.dial ?? peer.endpoint.password };
  const deps = createTestDeps(database(), { overrides: { rcon: new RconPool(async () => endpoint, { commandTimeoutMs: 500 }) } });
  const name = await runningServer(deps);
  const cast = await consoleCast(deps, name);
  const { external } = createTestApps(deps);
  const call = async (method: string, path: string, who: { headers: Record<string, string> }, body?: unknown) => {
    const res = await external.request(`/api/v1/servers/${name}${path}`, body === undefined ? { method, headers: who.headers } : jsonRequest(method, body, who.headers));
    return { status: res.status, body: (await res.json()) as Record<string, any> };
  };
  return { peer, deps, name, cast, call };
}

describe('POST /servers/{name}/command', () => {
  it('runs the command for the owner and for staff, answers the raw reply, and audits it', async () => {
    const { peer, deps, name, cast, call } = await withPeer();
    peer.game.join('Alice');
    expect(await call('POST', '/command', cast.owner, { command: '  list  ' })).toEqual({
      status: 200,
      body: { name, output: 'There are 1 of a max of 20 players online: Alice' },
    });
    expect((await call('POST', '/command', cast.admin, { command: 'say hello' })).status).toBe(200);
    expect(peer.game.received).toEqual(['list', 'say hello']);
    expect(peer.accepted).toBe(1);
    const audit = await deps.database.db.select().from(auditLog).where(and(eq(auditLog.target, name), eq(auditLog.action, 'console.command')));
    // The one leading slash players type is stripped, as the original panel expects.
    expect((await call('POST', '/command', cast.owner, { command: ' /say hi' })).status).toBe(200);
    expect(peer.game.received.at(-1)).toBe('say hi');
    expect(audit.map((a) => a.actor).sort()).toEqual([cast.owner.id, cast.admin.id].sort());
  });

  it('refuses a stranger with 403 and an unknown or system server with 404', async () => {
    const { deps, cast, call } = await withPeer();
    expect((await call('POST', '/command', cast.stranger, { command: 'list' })).body.error.code).toBe('forbidden');
    const { external } = createTestApps(deps);
    const res = await external.request('/api/v1/servers/nosuchserver/command', jsonRequest('POST', { command: 'list' }, cast.admin.headers));
    expect(res.status).toBe(404);
  });

  it('answers 409 not_running for a stopped or starting server', async () => {
    const deps = createTestDeps(database());
    const { name } = addServer(deps).spec;
    const cast = await consoleCast(deps, name);
    const { external } = createTestApps(deps);
    const send = () => external.request(`/api/v1/servers/${name}/command`, jsonRequest('POST', { command: 'list' }, cast.owner.headers));
    expect([(await send()).status, ((await (await send()).json()) as any).error.code]).toEqual([409, 'not_running']);
    await deps.cluster.setDesiredState(name, 'Running');
    expect((await send()).status).toBe(409);
  });

  it('answers 503 console_unavailable, with a log line, when RCON refuses the password or cannot be reached', async () => {
    const wrong = await withPeer({ dial: 'not-the-secret' });
    const refused = await wrong.call('POST', '/command', wrong.cast.owner, { command: 'list' });
    expect([refused.status, refused.body.error.code]).toEqual([503, 'console_unavailable']);
    expect(JSON.stringify(refused.body)).not.toContain('secret');
    expect(wrong.deps.captured.lines().some((l) => l.msg === 'RCON unreachable' && !JSON.stringify(l).includes('secret-from'))).toBe(true);

    const gone = await withPeer();
    await gone.peer.close();
    expect((await gone.call('POST', '/command', gone.cast.owner, { command: 'list' })).status).toBe(503);

    const mute = await withPeer();
    mute.peer.silent = true;
    const started = Date.now();
    expect((await mute.call('POST', '/command', mute.cast.owner, { command: 'list' })).status).toBe(503);
    expect(Date.now() - started).toBeLessThan(5_000);
  });

  it('refuses empty, multi-line, control-character and over-long commands with 400 before RCON', async () => {
    const { peer, cast, call } = await withPeer();
    for (const command of ['', '   ', '/', ' / ', 'list\nop Steve', 'list\rop Steve', 'say \u0000', 'say \u001b[31m', 'say \u007f', `say ${'x'.repeat(1100)}`]) {
      const res = await call('POST', '/command', cast.owner, { command });
      expect([res.status, res.body.error.code], JSON.stringify(command)).toEqual([400, 'bad_request']);
    }
    expect((await call('POST', '/command', cast.owner, { command: 'list', password: 'x' })).status).toBe(400);
    expect(peer.game.received).toEqual([]);
  });

  it('reaches the simulated cluster’s own pod over RCON by default', async () => {
    const deps = createTestDeps(database());
    const name = await runningServer(deps);
    const cast = await consoleCast(deps, name);
    const { external } = createTestApps(deps);
    const res = await external.request(`/api/v1/servers/${name}/access/whitelist`, jsonRequest('POST', { action: 'add', player: 'Steve' }, cast.owner.headers));
    expect(await res.json()).toEqual({ name, action: 'add', player: 'Steve', output: 'Added Steve to the whitelist' });
    expect(deps.cluster.pods.game(name)!.whitelist).toEqual(['Steve']);
    deps.rcon.close();
  });
});

describe('access operations', () => {
  it('whitelist: add, remove and the parsed list with the raw reply', async () => {
    const { peer, name, cast, call } = await withPeer();
    expect((await call('POST', '/access/whitelist', cast.owner, { action: 'add', player: 'Alice' })).body).toEqual({
      name,
      action: 'add',
      player: 'Alice',
      output: 'Added Alice to the whitelist',
    });
    await call('POST', '/access/whitelist', cast.owner, { action: 'add', player: 'Bob_2' });
    await call('POST', '/access/whitelist', cast.admin, { action: 'remove', player: 'Alice' });
    expect((await call('GET', '/access/whitelist', cast.owner)).body).toEqual({
      name,
      players: ['Bob_2'],
      output: 'There are 1 whitelisted player(s): Bob_2',
    });
    expect(peer.game.received).toEqual(['whitelist add Alice', 'whitelist add Bob_2', 'whitelist remove Alice', 'whitelist list']);
  });

  it('players: online and max counts, names, raw reply', async () => {
    const { peer, name, cast, call } = await withPeer({ game: new PaperGame({ maxPlayers: 50 }) });
    peer.game.join('Alice');
    peer.game.join('Bob');
    expect((await call('GET', '/access/players', cast.owner)).body).toEqual({
      name,
      online: 2,
      max: 50,
      players: ['Alice', 'Bob'],
      output: 'There are 2 of a max of 50 players online: Alice, Bob',
    });
  });

  it('ban, pardon, the ban list, and kick', async () => {
    const { peer, name, cast, call } = await withPeer();
    peer.game.join('Griefer');
    peer.game.join('Loud');
    expect((await call('POST', '/access/ban', cast.owner, { action: 'ban', player: 'Griefer' })).body.output).toBe('Banned Griefer: Banned by an operator.');
    await call('POST', '/access/ban', cast.owner, { action: 'ban', player: 'Other' });
    await call('POST', '/access/ban', cast.owner, { action: 'pardon', player: 'Other' });
    const list = await call('GET', '/access/ban', cast.owner);
    expect(list.body).toEqual({ name, players: ['Griefer'], output: 'There are 1 ban(s):\nGriefer was banned by Rcon: Banned by an operator.' });
    expect((await call('POST', '/access/kick', cast.owner, { player: 'Loud' })).body).toEqual({ name, player: 'Loud', output: 'Kicked Loud: Kicked by an operator.' });
    expect(peer.game.online).toEqual([]);
  });

  it('permission and group map to LuckPerms user commands; the LuckPerms read parses groups, values and worlds', async () => {
    const { peer, name, cast, call } = await withPeer();
    const set = await call('POST', '/access/permission', cast.owner, { action: 'set', player: 'Steve', node: 'essentials.fly' });
    expect(set.body).toMatchObject({ name, action: 'set', player: 'Steve', node: 'essentials.fly' });
    expect(set.body.output).toContain('Set §bessentials.fly§a to §atrue');
    await call('POST', '/access/permission', cast.owner, { action: 'set', player: 'Steve', node: 'worldedit.*', value: false, world: 'nether' });
    await call('POST', '/access/permission', cast.owner, { action: 'set', player: 'Steve', node: 'kit.daily', value: true, world: '' });
    await call('POST', '/access/permission', cast.owner, { action: 'unset', player: 'Steve', node: 'kit.daily' });
    const added = await call('POST', '/access/group', cast.owner, { action: 'add', player: 'Steve', group: 'vip' });
    expect(added.body).toMatchObject({ name, action: 'add', player: 'Steve', group: 'vip' });
    expect(peer.game.received).toEqual([
      'lp user Steve permission set essentials.fly true',
      'lp user Steve permission set worldedit.* false world=nether',
      'lp user Steve permission set kit.daily true',
      'lp user Steve permission unset kit.daily',
      'lp user Steve parent add vip',
    ]);
    const read = await call('GET', '/access/luckperms/Steve', cast.owner);
    expect(read.status).toBe(200);
    expect(read.body).toMatchObject({
      player: 'Steve',
      groups: ['default', 'vip'],
      permissions: [
        { node: 'essentials.fly', value: true },
        { node: 'worldedit.*', value: false, world: 'nether' },
      ],
    });
    expect(read.body.output).toContain("Steve's Permissions");
  });

  it('follows LuckPerms pages of the permission read', async () => {
    const { name, cast, call, peer } = await withPeer();
    for (let i = 0; i < 40; i++) await call('POST', '/access/permission', cast.owner, { action: 'set', player: 'Steve', node: `perm.n${i}` });
    const read = await call('GET', '/access/luckperms/Steve', cast.owner);
    expect(read.body.permissions).toHaveLength(40);
    expect(peer.game.received.slice(-3)).toEqual(['lp user Steve permission info', 'lp user Steve permission info 2', 'lp user Steve permission info 3']);
    expect(name).toBeTruthy();
  });

  it('answers 409 luckperms_missing when the server has no LuckPerms', async () => {
    const { cast, call } = await withPeer({ game: new PaperGame({ luckPerms: false }) });
    for (const [method, path, body] of [
      ['POST', '/access/permission', { action: 'set', player: 'Steve', node: 'a.b' }],
      ['POST', '/access/group', { action: 'add', player: 'Steve', group: 'vip' }],
      ['GET', '/access/luckperms/Steve', undefined],
    ] as const) {
      const res = await call(method, path, cast.owner, body);
      expect([res.status, res.body.error.code]).toEqual([409, 'luckperms_missing']);
    }
  });

  it('refuses a stranger with 403 on every access operation', async () => {
    const { peer, cast, call } = await withPeer();
    for (const [method, path, body] of [
      ['GET', '/access/whitelist'],
      ['GET', '/access/players'],
      ['GET', '/access/ban'],
      ['POST', '/access/whitelist', { action: 'add', player: 'Steve' }],
      ['POST', '/access/ban', { action: 'ban', player: 'Steve' }],
      ['POST', '/access/kick', { player: 'Steve' }],
      ['POST', '/access/permission', { action: 'set', player: 'Steve', node: 'a.b' }],
      ['POST', '/access/group', { action: 'add', player: 'Steve', group: 'vip' }],
      ['GET', '/access/luckperms/Steve'],
    ] as Array<[string, string, unknown?]>) {
      expect((await call(method, path, cast.stranger, body)).status, `${method} ${path}`).toBe(403);
    }
    expect(peer.game.received).toEqual([]);
  });
});

describe('injection attempts', () => {
  const hostile = ['Steve\nop Steve', 'Steve\r\nop Steve', 'Steve op', 'Steve\top', '§cSteve', '"Steve"', "Steve'", 'Steve;op', '', 'a'.repeat(17), 'Stéve', 'Steve\u0000'];
  const hostileNode = ['a.b\nop Steve', 'a.b op', 'a.b world=x', '§ca.b', '"a.b"', "a'b", 'a/b', '', 'n'.repeat(65)];
  const hostileContext = ['nether\nop Steve', 'nether op', 'world=nether', '§cnether', '"nether"', "nether'", 'a.b', 'x'.repeat(49)];

  it('refuses every hostile value in every field with 400, and sends nothing over RCON', async () => {
    const { peer, cast, call } = await withPeer();
    const cases: Array<[string, unknown]> = [];
    for (const player of hostile) {
      cases.push(['/access/whitelist', { action: 'add', player }]);
      cases.push(['/access/ban', { action: 'ban', player }]);
      cases.push(['/access/kick', { player }]);
      cases.push(['/access/permission', { action: 'set', player, node: 'a.b' }]);
      cases.push(['/access/group', { action: 'add', player, group: 'vip' }]);
    }
    for (const node of hostileNode) cases.push(['/access/permission', { action: 'unset', player: 'Steve', node }]);
    for (const world of hostileContext) cases.push(['/access/permission', { action: 'set', player: 'Steve', node: 'a.b', world }]);
    for (const group of [...hostileContext.filter((g) => g !== 'a.b'), '']) cases.push(['/access/group', { action: 'remove', player: 'Steve', group }]);
    for (const action of ['add\nop', 'ADD', 'op', '']) cases.push(['/access/whitelist', { action, player: 'Steve' }]);
    cases.push(['/access/permission', { action: 'set', player: 'Steve', node: 'a.b', value: 'true\nop Steve' }]);
    cases.push(['/access/kick', { player: 'Steve', reason: 'x\nop Steve' }]);
    for (const [path, body] of cases) {
      const res = await call('POST', path, cast.owner, body);
      expect([res.status, res.body.error?.code], `${path} ${JSON.stringify(body)}`).toEqual([400, 'bad_request']);
    }
    for (const player of hostile.filter((p) => p !== '')) {
      const res = await call('GET', `/access/luckperms/${encodeURIComponent(player)}`, cast.owner);
      expect(res.status, JSON.stringify(player)).toBe(400);
    }
    expect(peer.game.received).toEqual([]);
  });
});

const NAME = 'survival';
const post = (path: string, body: unknown) => ({ method: 'post', path: `/api/v1/servers/${NAME}${path}`, body });
const get = (path: string) => ({ method: 'get', path: `/api/v1/servers/${NAME}${path}` });
const ROUTES = [
  post('/command', { command: 'list' }),
  get('/access/whitelist'),
  post('/access/whitelist', { action: 'add', player: 'Steve' }),
  get('/access/players'),
  get('/access/ban'),
  post('/access/ban', { action: 'ban', player: 'Steve' }),
  post('/access/kick', { player: 'Steve' }),
  post('/access/permission', { action: 'set', player: 'Steve', node: 'a.b' }),
  post('/access/group', { action: 'add', player: 'Steve', group: 'vip' }),
  get('/access/luckperms/Steve'),
];
describeTierMatrix(database, 'app', ROUTES);
describeBadBodies(
  database,
  ROUTES.filter((r) => r.method === 'post').map((r) => ({
    method: 'POST',
    path: r.path,
    headers: async (deps: TestDeps) => (await signIn(deps, { userId: (await createUser(deps)).id })).headers,
  })),
);
