import { createHash, randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, readdirSync, statSync, statfsSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { createTestApps, createTestDeps, errorOf, jsonRequest } from '../../../../test/helpers/app.js';
import { useTestDatabase } from '../../../../test/helpers/database.js';
import { addServer } from '../../../../test/helpers/servers.js';
import { expectTierMatrix } from '../../../../test/helpers/tier-matrix.js';
import { claimFor, ownedWorld, testWorlds, useTempDir, worldMember } from '../../../../test/helpers/worlds.js';
import { eq } from 'drizzle-orm';
import { worldUploadSessions } from '../../../db/schema/world-files.js';
import { writeSetting } from '../../servers/wakes/settings.js';
import { stagedObjects } from './sessions.js';
import { sweepAbandonedUploads } from './sweep.js';
import type { FileOpView } from './ops.js';

const sha = (bytes: Buffer) => createHash('sha256').update(bytes).digest('hex');
const digestOf = (bytes: Buffer) => `sha-256=:${createHash('sha256').update(bytes).digest('base64')}:`;
const PART = 1024;

interface Session {
  id: string;
  path: string;
  size: number;
  received: number;
  part_max_bytes: number;
  parts: { size: number; sha256: string }[];
}
type Op = FileOpView;

describe('world upload sessions', () => {
  const database = useTestDatabase();
  const tempDir = useTempDir();

  async function setUp() {
    const root = tempDir();
    const deps = createTestDeps(database(), { env: { DATA_DIR: root }, overrides: { worlds: testWorlds(root) } });
    await writeSetting(deps.database.db, 'part_max_bytes', PART, deps.clock.now());
    const { external } = createTestApps(deps);
    const { owner, name, folder } = await ownedWorld(deps);
    mkdirSync(join(folder, 'world'));
    const uploads = `/api/v1/servers/${name}/files/uploads`;
    const q = (path: string) => `?path=${encodeURIComponent(path)}`;
    const begin = (path: string, size: number, headers = owner.headers) => external.request(`${uploads}${q(path)}`, jsonRequest('POST', { size }, headers));
    const put = (id: string, offset: number, body: Buffer, extra: Record<string, string> = {}, headers = owner.headers) =>
      external.request(`${uploads}/${id}?offset=${offset}`, {
        method: 'PUT',
        headers: { ...headers, 'Content-Type': 'application/octet-stream', ...extra },
        body: new Uint8Array(body),
      });
    const commit = (id: string, overwrite?: boolean, headers = owner.headers) =>
      external.request(`${uploads}/${id}/commit`, jsonRequest('POST', overwrite === undefined ? {} : { overwrite }, headers));
    const ops = async () => ((await (await external.request(`/api/v1/servers/${name}/files/ops`, { headers: owner.headers })).json()) as { ops: Op[] }).ops;
    return { deps, external, owner, name, folder, root, uploads, begin, put, commit, ops };
  }

  it('takes a file in parts, refusing a wrong offset, a wrong digest and an oversized part, then lands it byte for byte', async () => {
    const { deps, external, owner, folder, uploads, begin, put, commit, ops } = await setUp();
    const file = randomBytes(PART * 2 + 512);
    const begun = await begin('world/big.bin', file.length);
    expect(begun.status).toBe(201);
    const session = (await begun.json()) as Session;
    expect(session).toMatchObject({ path: 'world/big.bin', size: file.length, received: 0, part_max_bytes: PART, parts: [] });
    const id = session.id;
    const first = file.subarray(0, PART);

    const wrongOffset = await put(id, 100, first);
    expect(wrongOffset.status).toBe(409);
    expect((await errorOf(wrongOffset)).code).toBe('upload_offset_mismatch');
    expect(wrongOffset.headers.get('upload-offset')).toBe('0');

    const wrongDigest = await put(id, 0, first, { 'Content-Digest': digestOf(Buffer.from('something else')) });
    expect(wrongDigest.status).toBe(400);
    expect((await errorOf(wrongDigest)).code).toBe('digest_mismatch');
    expect(await stagedObjects(deps, id)).toEqual([]);

    const tooBig = await put(id, 0, file.subarray(0, PART + 1));
    expect(tooBig.status).toBe(413);
    expect((await errorOf(tooBig)).code).toBe('too_large');
    expect(await stagedObjects(deps, id)).toEqual([]);

    const took = await put(id, 0, first, { 'Content-Digest': digestOf(first) });
    expect(took.status).toBe(200);
    expect(await took.json()).toMatchObject({ received: PART, parts: [{ size: PART, sha256: sha(first) }] });

    // A client that lost the answer asks where the session stands and resumes from there.
    const where = (await (await external.request(`${uploads}/${id}`, { headers: owner.headers })).json()) as Session;
    expect(where.received).toBe(PART);
    const early = await commit(id);
    expect(early.status).toBe(409);
    expect((await errorOf(early)).code).toBe('upload_incomplete');

    expect((await put(id, PART, file.subarray(PART, PART * 2))).status).toBe(200);
    const pastTheEnd = await put(id, PART * 2, Buffer.concat([file.subarray(PART * 2), Buffer.alloc(1)]));
    expect(pastTheEnd.status).toBe(413);
    const last = await put(id, PART * 2, file.subarray(PART * 2));
    expect(((await last.json()) as Session).received).toBe(file.length);

    const committed = await commit(id);
    expect(committed.status).toBe(202);
    const { op } = (await committed.json()) as { op: Op };
    expect(op).toMatchObject({ op: 'upload', path: 'world/big.bin', state: 'running', total: file.length });
    await deps.worlds.jobs.idle();

    const landed = readFileSync(join(folder, 'world', 'big.bin'));
    expect(sha(landed)).toBe(sha(file));
    expect((await ops())[0]).toMatchObject({ id: op.id, state: 'succeeded', files: 1, bytes: file.length, done: file.length });
    expect(await stagedObjects(deps, id)).toEqual([]);
    const gone = await external.request(`${uploads}/${id}`, { headers: owner.headers });
    expect(gone.status).toBe(404);
    expect((await errorOf(gone)).code).toBe('upload_not_found');
    expect(readdirSync(join(folder, 'world'))).toEqual(['big.bin']);
  });

  it('ends a commit over an existing file with file_exists and keeps the session for a commit with overwrite', async () => {
    const { folder, begin, put, commit, ops, deps, name, external, uploads, owner } = await setUp();
    writeFileSync(join(folder, 'server.properties'), 'motd=old\n');
    const bytes = Buffer.from('motd=new\n');
    const { id } = (await (await begin('server.properties', bytes.length)).json()) as Session;
    expect((await put(id, 0, bytes)).status).toBe(200);

    expect((await commit(id, false)).status).toBe(202);
    await deps.worlds.jobs.idle();
    const [failed] = await ops();
    expect(failed).toMatchObject({ state: 'failed', error: { code: 'file_exists' } });
    expect(failed!.finished_at).toBeDefined();
    expect(readFileSync(join(folder, 'server.properties'), 'utf8')).toBe('motd=old\n');

    deps.clock.advance(1000);
    expect((await commit(id, true)).status).toBe(202);
    await deps.worlds.jobs.idle();
    expect(await ops()).toMatchObject([{ state: 'succeeded', files: 1 }, { state: 'failed' }]);
    expect(readFileSync(join(folder, 'server.properties'), 'utf8')).toBe('motd=new\n');

    // A commit on a running server is refused and the session stays for later.
    const again = (await (await begin('other.txt', 1)).json()) as Session;
    expect((await put(again.id, 0, Buffer.from('x'))).status).toBe(200);
    await deps.cluster.setDesiredState(name, 'Running');
    const running = await commit(again.id);
    expect(running.status).toBe(409);
    expect((await errorOf(running)).code).toBe('not_stopped');
    expect((await (await external.request(`${uploads}/${again.id}`, { headers: owner.headers })).json()) as Session).toMatchObject({ received: 1 });
  });

  it('answers nobody but the account and the server the session was begun for', async () => {
    const { deps, external, begin, put, commit, uploads } = await setUp();
    const { id } = (await (await begin('a.bin', 4)).json()) as Session;
    const admin = await worldMember(deps, 'admin');
    const stranger = await worldMember(deps);
    for (const res of [
      await external.request(`${uploads}/${id}`, { headers: admin.headers }),
      await put(id, 0, Buffer.from('abcd'), {}, admin.headers),
      await commit(id, false, admin.headers),
    ]) {
      expect(res.status).toBe(404);
      expect((await errorOf(res)).code).toBe('upload_not_found');
    }
    // On another server of the same owner the id names nothing either.
    const other = addServer(deps).spec.name;
    const { owner } = await setUpOwnerOf(deps, other);
    expect((await external.request(`/api/v1/servers/${other}/files/uploads/${id}`, { headers: owner.headers })).status).toBe(404);
    expect((await external.request(`${uploads}/${id}`, { headers: stranger.headers })).status).toBe(403);
    expect((await external.request(`${uploads}/not-a-uuid`, { headers: admin.headers })).status).toBe(404);
  });

  it('lets staff list every account\'s sessions on a server and cancel a player\'s, freeing its room (issue 43)', async () => {
    const { deps, external, owner, begin, uploads } = await setUp();
    const { id } = (await (await begin('theirs.bin', 4)).json()) as Session;
    const admin = await worldMember(deps, 'admin');
    const listed = (await (await external.request(uploads, { headers: admin.headers })).json()) as { uploads: Session[] };
    expect(listed.uploads.map((u) => u.id)).toEqual([id]);
    // A stranger still sees nothing of it, and its owner's list is only theirs.
    const stranger = await worldMember(deps);
    expect((await external.request(uploads, { headers: stranger.headers })).status).toBe(403);
    const cancelled = await external.request(`${uploads}/${id}`, { method: 'DELETE', headers: admin.headers });
    expect(cancelled.status).toBe(204);
    expect((await errorOf(await external.request(`${uploads}/${id}`, { headers: owner.headers }))).code).toBe('upload_not_found');
    expect(await (await external.request(uploads, { headers: admin.headers })).json()).toEqual({ uploads: [] });
  });

  it('ties a session\'s idle time to its progress: one byte of a large file holds its room about as long as an empty session (issue 43)', async () => {
    const { deps, external, owner, uploads, begin, put } = await setUp();
    try {
      const began = deps.clock.now();
      const big = (await (await begin('big.bin', 64 * 1024 * 1024)).json()) as Session;
      expect((await put(big.id, 0, Buffer.from('x'))).status).toBe(200);
      const { uploads: mine } = (await (await external.request(uploads, { headers: owner.headers })).json()) as { uploads: Array<Session & { expires_at: string }> };
      // 120 s, plus the share received of the 6 h that a nearly whole file gets.
      const lapses = Date.parse(mine[0]!.expires_at) - began.getTime();
      expect(lapses).toBeGreaterThanOrEqual(120_000);
      expect(lapses).toBeLessThan(121_000);
      deps.clock.advance(121_000);
      expect((await errorOf(await external.request(`${uploads}/${big.id}`, { headers: owner.headers }))).code).toBe('upload_not_found');
      expect(await sweepAbandonedUploads(deps)).toBeGreaterThanOrEqual(1);
      expect(await deps.database.db.select().from(worldUploadSessions).where(eq(worldUploadSessions.id, big.id))).toEqual([]);
    } finally {
      await deps.database.db.delete(worldUploadSessions);
    }
  });

  async function setUpOwnerOf(deps: Awaited<ReturnType<typeof setUp>>['deps'], name: string) {
    const owner = await worldMember(deps);
    await claimFor(deps, name, owner.id);
    return { owner };
  }

  it('bounds sessions: path, running server, room, count per account; cancels and sweeps abandoned ones', async () => {
    const { deps, external, owner, name, begin, put, uploads, root } = await setUp();
    expect((await errorOf(await begin('../escape', 1))).code).toBe('bad_path');
    expect((await errorOf(await begin('.', 1))).code).toBe('bad_path');
    expect((await errorOf(await begin('a\u0000b', 1))).code).toBe('bad_path');
    expect((await errorOf(await begin('a.bin', -1))).code).toBe('bad_request');
    const unknownField = await external.request(`${uploads}?path=a`, jsonRequest('POST', { size: 1, path: 'b' }, owner.headers));
    expect((await errorOf(unknownField)).code).toBe('bad_request');
    const full = await begin('huge.bin', 2 ** 52);
    expect(full.status).toBe(507);
    expect((await errorOf(full)).code).toBe('uploads_full');
    await writeSetting(deps.database.db, 'upload_sessions_per_user', 2, deps.clock.now());
    try {
      const a = (await (await begin('a.bin', 8)).json()) as Session;
      const b = (await (await begin('b.bin', 8)).json()) as Session;
      const third = await begin('c.bin', 8);
      expect(third.status).toBe(429);
      expect((await errorOf(third)).code).toBe('too_many_uploads');

      const cancelled = await external.request(`${uploads}/${a.id}`, { method: 'DELETE', headers: owner.headers });
      expect(cancelled.status).toBe(204);
      expect(await stagedObjects(deps, a.id)).toEqual([]);
      const c = (await (await begin('c.bin', 8)).json()) as Session;

      // Abandoned sessions go after the idle lifetime with their staged bytes; a stray staged file too.
      expect((await put(b.id, 0, Buffer.from('half'))).status).toBe(200);
      expect((await put(c.id, 0, Buffer.from('c'))).status).toBe(200);
      mkdirSync(join(root, 'uploads', 'worlds', '00000000-0000-4000-8000-000000000000'), { recursive: true });
      writeFileSync(join(root, 'uploads', 'worlds', '00000000-0000-4000-8000-000000000000', '000000000000000'), 'stray');
      // A session's idle time grows with its progress: c (1 of 8 bytes) lapses after 120 + 21480 / 8 s,
      // b (4 of 8) after 120 + 21480 / 2 s. c gets the rest of its bytes in time; b does not.
      deps.clock.advance(2_804_000);
      expect((await put(c.id, 1, Buffer.from('ccccccc'))).status).toBe(200);
      deps.clock.advance(10_860_000 - 2_804_000 + 1000);
      expect(await sweepAbandonedUploads(deps)).toBeGreaterThanOrEqual(1);
      expect(readdirSync(join(root, 'uploads', 'worlds')).filter((id) => readdirSync(join(root, 'uploads', 'worlds', id)).length > 0)).toEqual([c.id]);
      const swept = await external.request(`${uploads}/${b.id}`, { headers: owner.headers });
      expect((await errorOf(swept)).code).toBe('upload_not_found');
    } finally {
      await writeSetting(deps.database.db, 'upload_sessions_per_user', 4, deps.clock.now());
    }
    await deps.cluster.setDesiredState(name, 'Running');
    expect((await errorOf(await begin('a.bin', 1))).code).toBe('not_stopped');
  });

  it('keeps one player from blocking everyone\'s uploads: a per-account bound on reserved bytes (item 4)', async () => {
    const { deps, external, begin, root } = await setUp();
    const victim = await ownedWorld(deps);
    const victimBegin = (size: number) =>
      external.request(`/api/v1/servers/${victim.name}/files/uploads?path=mine.bin`, jsonRequest('POST', { size }, victim.owner.headers));
    mkdirSync(join(root, 'uploads', 'worlds'), { recursive: true });
    const fs = statfsSync(join(root, 'uploads', 'worlds'));
    const free = fs.bavail * fs.bsize;
    await writeSetting(deps.database.db, 'upload_reserved_bytes_per_user', Math.floor(free / 2), deps.clock.now());
    try {
      // The attack: one session as large as the free volume, that sends nothing.
      const whole = await begin('everything.bin', free - 32 * 1024 * 1024);
      expect(whole.status).toBe(413);
      expect((await errorOf(whole)).code).toBe('too_large');
      expect((await begin('half.bin', Math.floor(free / 2) - 4096)).status).toBe(201);
      const more = await begin('more.bin', 8192);
      expect(more.status).toBe(429);
      expect((await errorOf(more)).code).toBe('too_many_uploads');
      const other = await victimBegin(64 * 1024 * 1024);
      console.log(`reserved-bytes bound ${Math.floor(free / 2)}: the attacker's whole-volume session ${whole.status}, the other player's 64 MiB upload ${other.status}`);
      expect(other.status).toBe(201);
    } finally {
      await writeSetting(deps.database.db, 'upload_reserved_bytes_per_user', 8 * 1024 ** 3, deps.clock.now());
      await deps.database.db.delete(worldUploadSessions);
    }
  });

  it('lets a session that received nothing go after the short idle time, and lists the caller\'s own sessions (item 4)', async () => {
    const { deps, external, owner, uploads, begin, put, root } = await setUp();
    const victim = await ownedWorld(deps);
    const victimBegin = (size: number) =>
      external.request(`/api/v1/servers/${victim.name}/files/uploads?path=mine.bin`, jsonRequest('POST', { size }, victim.owner.headers));
    mkdirSync(join(root, 'uploads', 'worlds'), { recursive: true });
    const fs = statfsSync(join(root, 'uploads', 'worlds'));
    const free = fs.bavail * fs.bsize;
    await writeSetting(deps.database.db, 'upload_reserved_bytes_per_user', free, deps.clock.now());
    try {
      const began = deps.clock.now();
      const empty = (await (await begin('everything.bin', free - 32 * 1024 * 1024)).json()) as Session;
      const full = await victimBegin(64 * 1024 * 1024);
      expect(full.status).toBe(507);
      expect((await errorOf(full)).code).toBe('uploads_full');

      // The caller finds its own sessions (and nobody else's): ids, where each stands, when it lapses.
      deps.clock.advance(1000);
      const small = (await (await begin('small.bin', 8)).json()) as Session;
      expect((await put(small.id, 0, Buffer.from('half'))).status).toBe(200);
      const listed = await external.request(uploads, { headers: owner.headers });
      expect(listed.status).toBe(200);
      const { uploads: mine } = (await listed.json()) as { uploads: Array<Session & { created_at: string; expires_at: string }> };
      expect(mine.map((u) => [u.id, u.path, u.received])).toEqual([
        [empty.id, 'everything.bin', 0],
        [small.id, 'small.bin', 4],
      ]);
      expect(mine[0]!.expires_at).toBe(new Date(began.getTime() + 120_000).toISOString());
      // Half of it received: 120 s plus half of the rest of the 6 h.
      expect(mine[1]!.expires_at).toBe(new Date(began.getTime() + 1000 + (120 + (6 * 60 * 60 - 120) / 2) * 1000).toISOString());
      const theirs = await external.request(`/api/v1/servers/${victim.name}/files/uploads`, { headers: victim.owner.headers });
      expect(await theirs.json()).toEqual({ uploads: [] });

      // Two minutes without a byte: the empty session holds nothing any more and is swept.
      deps.clock.advance(120_000);
      const after = await victimBegin(64 * 1024 * 1024);
      console.log(`after 121 s the other player's 64 MiB upload: ${after.status} (before: ${full.status})`);
      expect(after.status).toBe(201);
      expect((await errorOf(await external.request(`${uploads}/${empty.id}`, { headers: owner.headers }))).code).toBe('upload_not_found');
      expect(await sweepAbandonedUploads(deps)).toBe(1);
      const left = (await (await external.request(uploads, { headers: owner.headers })).json()) as { uploads: Session[] };
      expect(left.uploads.map((u) => u.id)).toEqual([small.id]);
    } finally {
      await writeSetting(deps.database.db, 'upload_reserved_bytes_per_user', 8 * 1024 ** 3, deps.clock.now());
      await deps.database.db.delete(worldUploadSessions);
    }
  });

  it('takes one part at a time, and keeps nothing of a part that breaks off', async () => {
    const { deps, external, owner, uploads, begin, put } = await setUp();
    const { id } = (await (await begin('w.bin', 2048)).json()) as Session;
    let feed!: ReadableStreamDefaultController<Uint8Array>;
    const body = new ReadableStream<Uint8Array>({ start: (c) => void (feed = c) });
    feed.enqueue(new Uint8Array(100).fill(1));
    const slow = Promise.resolve(
      external.request(`${uploads}/${id}?offset=0`, {
        method: 'PUT',
        headers: { ...owner.headers, 'Content-Type': 'application/octet-stream' },
        body,
        duplex: 'half',
      } as RequestInit),
    );
    // The first part holds the session once its claim is in the database.
    for (let i = 0; i < 500; i++) {
      const [row] = await deps.database.db.select().from(worldUploadSessions).where(eq(worldUploadSessions.id, id));
      if (row?.busyUntil) break;
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
    const second = await put(id, 0, Buffer.alloc(10));
    expect(second.status).toBe(409);
    expect((await errorOf(second)).code).toBe('upload_busy');
    const cancel = await external.request(`${uploads}/${id}`, { method: 'DELETE', headers: owner.headers });
    expect((await errorOf(cancel)).code).toBe('upload_busy');

    feed.error(new Error('the client went away'));
    const broken = await slow;
    expect(broken.status).toBe(400);
    expect((await errorOf(broken)).code).toBe('bad_request');
    expect(await stagedObjects(deps, id)).toEqual([]);
    const after = (await (await external.request(`${uploads}/${id}`, { headers: owner.headers })).json()) as Session;
    expect(after).toMatchObject({ received: 0, parts: [] });
    expect((await put(id, 0, Buffer.alloc(10))).status).toBe(200);

    for (const [path, init] of [
      [`${uploads}/${id}?offset=abc`, { method: 'PUT', headers: { ...owner.headers, 'Content-Type': 'application/octet-stream' }, body: 'x' }],
      [`${uploads}/${id}`, { method: 'PUT', headers: { ...owner.headers, 'Content-Type': 'application/octet-stream' }, body: 'x' }],
      [`${uploads}/${id}/commit`, jsonRequest('POST', { overwrite: 'yes' }, owner.headers)],
      [`${uploads}/${id}/commit`, jsonRequest('POST', { overwrite: true, force: true }, owner.headers)],
      [`${uploads}?path=a`, jsonRequest('POST', { size: 1.5 }, owner.headers)],
    ] as const) {
      const res = await external.request(path, init as RequestInit);
      expect(res.status, path).toBe(400);
      expect((await errorOf(res)).code).toBe('bad_request');
    }
    const json = await external.request(`${uploads}/${id}?offset=10`, jsonRequest('PUT', {}, owner.headers));
    expect(json.status).toBe(415);
  });

  it('enforces the tiers of every upload route', async () => {
    const { external } = await setUp();
    const app = { tier: 'app' } as const;
    const id = '00000000-0000-4000-8000-000000000000';
    await expectTierMatrix(external, [
      { method: 'POST', path: '/api/v1/servers/alpha/files/uploads?path=a', access: app },
      { method: 'GET', path: '/api/v1/servers/alpha/files/uploads', access: app },
      { method: 'GET', path: `/api/v1/servers/alpha/files/uploads/${id}`, access: app },
      { method: 'PUT', path: `/api/v1/servers/alpha/files/uploads/${id}?offset=0`, access: app },
      { method: 'DELETE', path: `/api/v1/servers/alpha/files/uploads/${id}`, access: app },
      { method: 'POST', path: `/api/v1/servers/alpha/files/uploads/${id}/commit`, access: app },
      { method: 'POST', path: '/api/v1/servers/alpha/files/unzip?path=a.zip', access: app },
      { method: 'GET', path: '/api/v1/servers/alpha/files/ops', access: app },
    ]);
  });
});
