import { createHash } from 'node:crypto';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { eq } from 'drizzle-orm';
import * as tar from 'tar';
import { describe, expect, it } from 'vitest';
import { createTestApps, createTestDeps, errorOf } from '../../../../test/helpers/app.js';
import { useTestDatabase } from '../../../../test/helpers/database.js';
import { expectTierMatrix } from '../../../../test/helpers/tier-matrix.js';
import { worldBackups } from '../../../db/schema/worlds.js';
import { ownedWorld, testWorlds, useTempDir, worldMember } from '../../../../test/helpers/worlds.js';

/** The names and contents of a tar.gz's files. */
async function filesOf(archive: Uint8Array): Promise<Record<string, string>> {
  const files: Record<string, string> = {};
  const parser = new tar.Parser({
    onReadEntry: (entry) => {
      const chunks: Buffer[] = [];
      entry.on('data', (c: Buffer) => chunks.push(c));
      entry.on('end', () => {
        if (entry.type === 'File') files[entry.path.replace(/^\.\//, '')] = Buffer.concat(chunks).toString();
      });
    },
  });
  await new Promise<void>((resolve, reject) => {
    parser.on('end', resolve);
    parser.on('error', reject);
    Readable.from([Buffer.from(archive)]).pipe(parser as unknown as NodeJS.WritableStream);
  });
  return files;
}

describe('exports', () => {
  const database = useTestDatabase();
  const tempDir = useTempDir();


  async function setUp() {
    const deps = createTestDeps(database(), { overrides: { worlds: testWorlds(tempDir()) } });
    const { external } = createTestApps(deps);
    const { owner, name, folder } = await ownedWorld(deps);
    mkdirSync(join(folder, 'world'));
    writeFileSync(join(folder, 'world', 'level.dat'), 'LEVEL');
    writeFileSync(join(folder, 'server.properties'), 'motd=x\n');
    return { deps, external, owner, name, folder };
  }

  const post = (external: { request: (p: string, i: RequestInit) => Response | Promise<Response> }, path: string, headers: Record<string, string>) =>
    external.request(path, { method: 'POST', headers });

  it('exports a stopped world, downloadable only by the user who asked', async () => {
    const { deps, external, owner, name } = await setUp();
    const admin = await worldMember(deps, 'admin');
    const res = await post(external, `/api/v1/servers/${name}/world/export`, owner.headers);
    expect(res.status).toBe(202);
    const ticket = (await res.json()) as { ticket: string; state: string; filename: string };
    // The original's states: pending, then ready (or failed).
    expect(ticket).toMatchObject({ state: 'pending', filename: expect.stringMatching(new RegExp(`^${name}-.*\\.tar\\.gz$`)) });
    await deps.worlds.jobs.idle();
    expect(await (await external.request(`/api/v1/exports/${ticket.ticket}`, { headers: owner.headers })).json()).toEqual({ state: 'ready' });

    const download = await external.request(`/api/v1/exports/${ticket.ticket}/download`, { headers: owner.headers });
    expect(download.status).toBe(200);
    expect(download.headers.get('content-type')).toBe('application/gzip');
    expect(download.headers.get('content-disposition')).toBe(`attachment; filename="${ticket.filename}"`);
    expect(await filesOf(new Uint8Array(await download.arrayBuffer()))).toEqual({ 'server.properties': 'motd=x\n', 'world/level.dat': 'LEVEL' });

    for (const path of [`/api/v1/exports/${ticket.ticket}`, `/api/v1/exports/${ticket.ticket}/download`]) {
      expect((await external.request(path, { headers: admin.headers })).status).toBe(404);
    }
    // The download spent the ticket: a second one, or its state, is 410 export_expired (the original).
    for (const path of [`/api/v1/exports/${ticket.ticket}/download`, `/api/v1/exports/${ticket.ticket}`]) {
      const spent = await external.request(path, { headers: owner.headers });
      expect(spent.status, path).toBe(410);
      expect(((await spent.json()) as { error: { code: string } }).error.code).toBe('export_expired');
    }
    // A ticket whose time ran out is 410 too.
    const late = (await (await post(external, `/api/v1/servers/${name}/world/export`, owner.headers)).json()) as { ticket: string };
    await deps.worlds.jobs.idle();
    deps.clock.advance(25 * 3600 * 1000);
    expect((await external.request(`/api/v1/exports/${late.ticket}`, { headers: owner.headers })).status).toBe(410);
  });

  it('exports a backup and a single file; refuses a running world', async () => {
    const { deps, external, owner, name } = await setUp();
    await post(external, `/api/v1/servers/${name}/backup`, owner.headers);
    await deps.worlds.jobs.idle();
    const [backup] = await deps.database.db.select().from(worldBackups).where(eq(worldBackups.serverName, name));
    const res = await post(external, `/api/v1/servers/${name}/backups/${backup!.id}/export`, owner.headers);
    const ticket = (await res.json()) as { ticket: string; state: string };
    expect(ticket.state).toBe('ready');
    const bytes = new Uint8Array(await (await external.request(`/api/v1/exports/${ticket.ticket}/download`, { headers: owner.headers })).arrayBuffer());
    expect(createHash('sha256').update(bytes).digest('hex')).toBe(backup!.sha256);

    const file = await post(external, `/api/v1/servers/${name}/files/download?path=world/level.dat`, owner.headers);
    const fileTicket = (await file.json()) as { ticket: string; filename: string };
    expect(fileTicket.filename).toBe('level.dat');
    await deps.worlds.jobs.idle();
    const got = await external.request(`/api/v1/exports/${fileTicket.ticket}/download`, { headers: owner.headers });
    expect(await got.text()).toBe('LEVEL');

    const missing = await post(external, `/api/v1/servers/${name}/files/download?path=nope`, owner.headers);
    expect(missing.status).toBe(404);
    const escape = await post(external, `/api/v1/servers/${name}/files/download?path=../x`, owner.headers);
    expect((await errorOf(escape)).code).toBe('bad_path');
    const nul = await post(external, `/api/v1/servers/${name}/files/download?path=a%00b`, owner.headers);
    expect((await errorOf(nul)).code).toBe('bad_path');
    await deps.cluster.setDesiredState(name, 'Running');
    const running = await post(external, `/api/v1/servers/${name}/world/export`, owner.headers);
    expect((await errorOf(running)).code).toBe('not_stopped');
  });

  it('enforces the tiers of the export routes', async () => {
    const { external } = await setUp();
    const id = crypto.randomUUID();
    const app = { tier: 'app' } as const;
    await expectTierMatrix(external, [
      { method: 'POST', path: `/api/v1/servers/alpha/backups/${id}/export`, access: app },
      { method: 'POST', path: '/api/v1/servers/alpha/world/export', access: app },
      { method: 'POST', path: '/api/v1/servers/alpha/files/download?path=a', access: app },
      { method: 'GET', path: `/api/v1/exports/${id}`, access: app },
      { method: 'GET', path: `/api/v1/exports/${id}/download`, access: app },
    ]);
  });
});
