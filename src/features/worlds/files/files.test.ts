import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, readdirSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { createTestApps, createTestDeps, errorOf, jsonRequest } from '../../../../test/helpers/app.js';
import { useTestDatabase } from '../../../../test/helpers/database.js';
import { expectTierMatrix } from '../../../../test/helpers/tier-matrix.js';
import { ownedWorld, testWorlds, useTempDir, worldMember } from '../../../../test/helpers/worlds.js';

const sha = (bytes: string | Buffer) => createHash('sha256').update(bytes).digest('hex');
const b64 = (text: string) => Buffer.from(text).toString('base64');

describe('world file routes', () => {
  const database = useTestDatabase();
  const tempDir = useTempDir();

  async function setUp() {
    const root = tempDir();
    const deps = createTestDeps(database(), { overrides: { worlds: testWorlds(root) } });
    const { external } = createTestApps(deps);
    const { owner, name, folder } = await ownedWorld(deps);
    mkdirSync(join(folder, 'world'));
    writeFileSync(join(folder, 'server.properties'), 'motd=hello\n');
    const base = `/api/v1/servers/${name}`;
    const q = (path: string) => `?path=${encodeURIComponent(path)}`;
    return { deps, external, owner, name, folder, base, q, root };
  }


  it('lists, reads and writes with the editor’s base64 and sha-256', async () => {
    const { external, owner, base, q, folder } = await setUp();
    const listed = await external.request(`${base}/files`, { headers: owner.headers });
    expect(listed.status).toBe(200);
    const listing = (await listed.json()) as { path: string; entries: { name: string; is_dir: boolean; size: number }[]; truncated: boolean; free_bytes: number };
    expect(listing).toMatchObject({ path: '', truncated: false });
    expect(listing.free_bytes).toBeGreaterThan(0);
    expect(listing.entries.map((e) => [e.name, e.is_dir, e.size])).toEqual([
      ['server.properties', false, 11],
      ['world', true, 0],
    ]);

    const read = await external.request(`${base}/file${q('server.properties')}`, { headers: owner.headers });
    const file = (await read.json()) as { content: string; sha256: string; content_sha256: string; path: string };
    expect(file).toEqual({ path: 'server.properties', content: b64('motd=hello\n'), sha256: sha('motd=hello\n'), content_sha256: sha('motd=hello\n') });

    const body = { content: b64('motd=changed\n'), content_sha256: sha('motd=changed\n'), expect_sha256: file.sha256 };
    const written = await external.request(`${base}/file${q('server.properties')}`, jsonRequest('PUT', body, owner.headers));
    expect(await written.json()).toEqual({ path: 'server.properties', status: 'written', sha256: sha('motd=changed\n') });
    expect(readFileSync(join(folder, 'server.properties'), 'utf8')).toBe('motd=changed\n');

    const stale = await external.request(`${base}/file${q('server.properties')}`, jsonRequest('PUT', body, owner.headers));
    expect(stale.status).toBe(409);
    expect((await errorOf(stale)).code).toBe('file_changed');

    const created = await external.request(`${base}/file${q('world/new.txt')}`, jsonRequest('PUT', { content: b64('new'), create_only: true }, owner.headers));
    expect(await created.json()).toEqual({ path: 'world/new.txt', status: 'created', sha256: sha('new') });
    const again = await external.request(`${base}/file${q('world/new.txt')}`, jsonRequest('PUT', { content: b64('x'), create_only: true }, owner.headers));
    expect((await errorOf(again)).code).toBe('file_exists');

    const mismatch = await external.request(`${base}/file${q('a.txt')}`, jsonRequest('PUT', { content: b64('abc'), content_sha256: sha('abd') }, owner.headers));
    expect(mismatch.status).toBe(400);
    expect((await errorOf(mismatch)).code).toBe('digest_mismatch');
    expect(existsSync(join(folder, 'a.txt'))).toBe(false);
    const notBase64 = await external.request(`${base}/file${q('a.txt')}`, jsonRequest('PUT', { content: '@@@' }, owner.headers));
    expect((await errorOf(notBase64)).code).toBe('bad_request');
    const noFolder = await external.request(`${base}/file${q('nowhere/a.txt')}`, jsonRequest('PUT', { content: b64('x') }, owner.headers));
    expect(noFolder.status).toBe(404);
  });

  it('lets exactly one of two concurrent writers with the same expect_sha256 win', async () => {
    const { external, owner, base, q, folder } = await setUp();
    const expect_sha256 = sha('motd=hello\n');
    const [a, b] = await Promise.all(
      ['one', 'two'].map((who) =>
        external.request(`${base}/file${q('server.properties')}`, jsonRequest('PUT', { content: b64(`motd=${who}\n`), expect_sha256 }, owner.headers)),
      ),
    );
    const statuses = [a!.status, b!.status].sort();
    expect(statuses).toEqual([200, 409]);
    const loser = a!.status === 409 ? a! : b!;
    expect((await errorOf(loser)).code).toBe('file_changed');
    expect(['motd=one\n', 'motd=two\n']).toContain(readFileSync(join(folder, 'server.properties'), 'utf8'));
    expect(readdirSync(folder).sort()).toEqual(['server.properties', 'world']);
  });

  it('refuses every path that could leave the world with 400 bad_path', async () => {
    const { external, owner, base, q, folder, root } = await setUp();
    writeFileSync(join(root, 'outside.txt'), 'secret');
    symlinkSync(join(root, 'outside.txt'), join(folder, 'link-out'));
    symlinkSync(root, join(folder, 'dir-out'));
    const paths = [
      '../outside.txt',
      'world/../../outside.txt',
      '/etc/passwd',
      'C:/Windows',
      'world\\..\\..\\outside.txt',
      'a\u0000b',
      'link-out',
      'dir-out/outside.txt',
      `${'a/'.repeat(2100)}x`,
      'x'.repeat(256),
    ];
    for (const path of paths) {
      for (const [method, route, body] of [
        ['GET', 'file', undefined],
        ['PUT', 'file', { content: b64('pwned') }],
        ['GET', 'files', undefined],
        ['POST', 'files/mkdir', undefined],
      ] as const) {
        const init = body ? jsonRequest(method, body, owner.headers) : { method, headers: owner.headers };
        const res = await external.request(`${base}/${route}${q(path)}`, init);
        expect(res.status, `${method} ${route} ${JSON.stringify(path.slice(0, 40))}`).toBe(400);
        // A NUL is bad_path as the extensions page says, though the pipeline refuses NUL elsewhere.
        expect((await errorOf(res)).code).toBe('bad_path');
      }
    }
    const renamed = await external.request(`${base}/files/rename${q('server.properties')}`, jsonRequest('POST', { to: '../stolen' }, owner.headers));
    expect((await errorOf(renamed)).code).toBe('bad_path');
    const renamedToNul = await external.request(`${base}/files/rename${q('server.properties')}`, jsonRequest('POST', { to: 'a\u0000b' }, owner.headers));
    expect((await errorOf(renamedToNul)).code).toBe('bad_path');
    expect(readFileSync(join(root, 'outside.txt'), 'utf8')).toBe('secret');

    // A link is deleted as itself, never what it names.
    const removed = await external.request(`${base}/file${q('link-out')}`, { method: 'DELETE', headers: owner.headers });
    expect(await removed.json()).toEqual({ path: 'link-out', status: 'deleted' });
    expect(readFileSync(join(root, 'outside.txt'), 'utf8')).toBe('secret');
    const rootDelete = await external.request(`${base}/file${q('.')}`, { method: 'DELETE', headers: owner.headers });
    expect((await errorOf(rootDelete)).code).toBe('bad_path');
  });

  it('makes folders, renames and deletes, never over something', async () => {
    const { external, owner, base, q, folder } = await setUp();
    const made = await external.request(`${base}/files/mkdir${q('world/datapacks')}`, { method: 'POST', headers: owner.headers });
    expect(await made.json()).toEqual({ path: 'world/datapacks', status: 'created' });
    const twice = await external.request(`${base}/files/mkdir${q('world/datapacks')}`, { method: 'POST', headers: owner.headers });
    expect((await errorOf(twice)).code).toBe('file_exists');
    const over = await external.request(`${base}/files/rename${q('server.properties')}`, jsonRequest('POST', { to: 'world' }, owner.headers));
    expect((await errorOf(over)).code).toBe('file_exists');
    const moved = await external.request(`${base}/files/rename${q('server.properties')}`, jsonRequest('POST', { to: 'world/datapacks/s.p' }, owner.headers));
    expect(await moved.json()).toEqual({ path: 'server.properties', to: 'world/datapacks/s.p', status: 'renamed' });
    const deleted = await external.request(`${base}/file${q('world')}`, { method: 'DELETE', headers: owner.headers });
    expect(await deleted.json()).toEqual({ path: 'world', status: 'deleted' });
    expect(readdirSync(folder)).toEqual([]);
    const missing = await external.request(`${base}/file${q('world')}`, { method: 'DELETE', headers: owner.headers });
    expect(missing.status).toBe(404);
  });

  it('takes raw uploads with Content-Digest, storing nothing on a mismatch', async () => {
    const { external, owner, base, q, folder } = await setUp();
    const bytes = Buffer.alloc(300_000, 7);
    const digest = `sha-256=:${createHash('sha256').update(bytes).digest('base64')}:`;
    const put = (path: string, body: Buffer, headers: Record<string, string>) =>
      external.request(`${base}/files/upload${path}`, { method: 'PUT', headers: { ...owner.headers, 'Content-Type': 'application/octet-stream', ...headers }, body: new Uint8Array(body) });
    const ok = await put(q('world/big.bin'), bytes, { 'Content-Digest': digest });
    expect(await ok.json()).toEqual({ path: 'world/big.bin', status: 'created', sha256: sha(bytes), size: bytes.length });
    const exists = await put(q('world/big.bin'), bytes, {});
    expect((await errorOf(exists)).code).toBe('file_exists');
    const wrong = await put(`${q('world/big.bin')}&overwrite=true`, Buffer.alloc(300_000, 8), { 'Content-Digest': digest });
    expect(wrong.status).toBe(400);
    expect((await errorOf(wrong)).code).toBe('digest_mismatch');
    expect(readFileSync(join(folder, 'world', 'big.bin')).equals(bytes)).toBe(true);
    expect(readdirSync(join(folder, 'world'))).toEqual(['big.bin']);
    const replaced = await put(`${q('world/big.bin')}&overwrite=true`, Buffer.from('small'), {});
    expect(await replaced.json()).toMatchObject({ status: 'written', size: 5 });
    const json = await external.request(`${base}/files/upload${q('x')}`, jsonRequest('PUT', {}, owner.headers));
    expect(json.status).toBe(415);
  });

  it('answers 409 not_stopped on a running server, 403 to a stranger, and serves staff', async () => {
    const { deps, external, owner, base, q, name } = await setUp();
    const stranger = await worldMember(deps);
    const admin = await worldMember(deps, 'admin');
    expect((await external.request(`${base}/files`, { headers: stranger.headers })).status).toBe(403);
    expect((await external.request(`${base}/file${q('server.properties')}`, { headers: admin.headers })).status).toBe(200);
    await deps.cluster.setDesiredState(name, 'Running');
    for (const [method, route] of [
      ['GET', 'files'],
      ['GET', 'file'],
      ['DELETE', 'file'],
      ['POST', 'files/mkdir'],
    ] as const) {
      const res = await external.request(`${base}/${route}${q('server.properties')}`, { method, headers: owner.headers });
      expect((await errorOf(res)).code, `${method} ${route}`).toBe('not_stopped');
    }
  });

  it('enforces the tiers of every file route', async () => {
    const { external } = await setUp();
    const app = { tier: 'app' } as const;
    await expectTierMatrix(external, [
      { method: 'GET', path: '/api/v1/servers/alpha/files?path=', access: app },
      { method: 'GET', path: '/api/v1/servers/alpha/file?path=a', access: app },
      { method: 'PUT', path: '/api/v1/servers/alpha/file?path=a', access: app },
      { method: 'DELETE', path: '/api/v1/servers/alpha/file?path=a', access: app },
      { method: 'POST', path: '/api/v1/servers/alpha/files/mkdir?path=a', access: app },
      { method: 'POST', path: '/api/v1/servers/alpha/files/rename?path=a', access: app },
      { method: 'PUT', path: '/api/v1/servers/alpha/files/upload?path=a', access: app },
    ]);
  });
});
