import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, readdirSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { crc32, deflateRawSync } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import { createTestApps, createTestDeps, errorOf, jsonRequest } from '../../../../test/helpers/app.js';
import { useTestDatabase } from '../../../../test/helpers/database.js';
import { ownedWorld, testWorlds, useTempDir, worldMember } from '../../../../test/helpers/worlds.js';
import { writeSetting } from '../../servers/wakes/settings.js';
import type { FileOpView } from './ops.js';

interface ZipEntry {
  name: string;
  data?: Buffer;
  /** Unix mode with its type bits (0o100644 a file, 0o040755 a folder, 0o120777 a link). */
  mode?: number;
  /** A size to declare instead of the true one (a lying archive). */
  declaredSize?: number;
}

/** A zip written by hand, so that a test controls every name, type and size it declares. */
function zip(entries: ZipEntry[]): Buffer {
  const locals: Buffer[] = [];
  const centrals: Buffer[] = [];
  let offset = 0;
  for (const entry of entries) {
    const name = Buffer.from(entry.name, 'utf8');
    const data = entry.data ?? Buffer.alloc(0);
    const packed = data.length > 0 ? deflateRawSync(data) : data;
    const method = data.length > 0 ? 8 : 0;
    const size = entry.declaredSize ?? data.length;
    const crc = crc32(data);
    const local = Buffer.alloc(30);
    local.writeUInt32LE(0x04034b50, 0);
    local.writeUInt16LE(20, 4);
    local.writeUInt16LE(0x800, 6);
    local.writeUInt16LE(method, 8);
    local.writeUInt16LE(0x21, 12);
    local.writeUInt32LE(crc, 14);
    local.writeUInt32LE(packed.length, 18);
    local.writeUInt32LE(size, 22);
    local.writeUInt16LE(name.length, 26);
    locals.push(local, name, packed);
    const central = Buffer.alloc(46);
    central.writeUInt32LE(0x02014b50, 0);
    central.writeUInt16LE((3 << 8) | 20, 4);
    central.writeUInt16LE(20, 6);
    central.writeUInt16LE(0x800, 8);
    central.writeUInt16LE(method, 10);
    central.writeUInt16LE(0x21, 14);
    central.writeUInt32LE(crc, 16);
    central.writeUInt32LE(packed.length, 20);
    central.writeUInt32LE(size, 24);
    central.writeUInt16LE(name.length, 28);
    central.writeUInt32LE(((entry.mode ?? (entry.name.endsWith('/') ? 0o040755 : 0o100644)) << 16) >>> 0, 38);
    central.writeUInt32LE(offset, 42);
    centrals.push(central, name);
    offset += 30 + name.length + packed.length;
  }
  const directory = Buffer.concat(centrals);
  const end = Buffer.alloc(22);
  end.writeUInt32LE(0x06054b50, 0);
  end.writeUInt16LE(entries.length, 8);
  end.writeUInt16LE(entries.length, 10);
  end.writeUInt32LE(directory.length, 12);
  end.writeUInt32LE(offset, 16);
  return Buffer.concat([...locals, directory, end]);
}

const sha = (bytes: Buffer) => createHash('sha256').update(bytes).digest('hex');

type Op = FileOpView;

/** Every path under a folder, folders with a trailing slash, sorted. */
function tree(dir: string, prefix = ''): string[] {
  return readdirSync(dir, { withFileTypes: true })
    .flatMap((e) => (e.isDirectory() ? [`${prefix}${e.name}/`, ...tree(join(dir, e.name), `${prefix}${e.name}/`)] : [`${prefix}${e.name}`]))
    .sort();
}

describe('unzip and the file ops list', () => {
  const database = useTestDatabase();
  const tempDir = useTempDir();

  async function setUp() {
    const root = tempDir();
    const deps = createTestDeps(database(), { env: { DATA_DIR: root }, overrides: { worlds: testWorlds(root) } });
    const { external } = createTestApps(deps);
    const { owner, name, folder } = await ownedWorld(deps);
    mkdirSync(join(folder, 'mods'));
    const base = `/api/v1/servers/${name}/files`;
    const unzip = async (path: string, overwrite?: boolean) => {
      const res = await external.request(`${base}/unzip?path=${encodeURIComponent(path)}`, jsonRequest('POST', overwrite === undefined ? {} : { overwrite }, owner.headers));
      return res;
    };
    /** Unzips and waits for the op's end; the op as the list shows it. */
    const unzipped = async (path: string, overwrite?: boolean): Promise<Op> => {
      const res = await unzip(path, overwrite);
      expect(res.status).toBe(202);
      const { op } = (await res.json()) as { op: Op };
      await deps.worlds.jobs.idle();
      deps.clock.advance(1000);
      const ops = (await (await external.request(`${base}/ops`, { headers: owner.headers })).json()) as { ops: Op[] };
      return ops.ops.find((o) => o.id === op.id)!;
    };
    return { deps, external, owner, name, folder, root, base, unzip, unzipped };
  }

  it('extracts a good zip byte for byte into its folder, respecting overwrite', async () => {
    const { folder, unzipped } = await setUp();
    const big = Buffer.alloc(300_000);
    for (let i = 0; i < big.length; i++) big[i] = (i * 2654435761) >>> 24;
    const files = {
      'pack/config.toml': Buffer.from('a = 1\n'),
      'pack/lib/big.bin': big,
      'pack/start.sh': Buffer.from('#!/bin/sh\n'),
    };
    writeFileSync(
      join(folder, 'mods', 'pack.zip'),
      zip([
        { name: 'pack/' },
        { name: 'pack/config.toml', data: files['pack/config.toml'] },
        { name: 'pack/lib/big.bin', data: big },
        { name: 'pack/start.sh', data: files['pack/start.sh'], mode: 0o100755 },
        { name: 'pack/empty/' },
        { name: '__MACOSX/pack/._config.toml', data: Buffer.from('junk') },
      ]),
    );
    const op = await unzipped('mods/pack.zip');
    expect(op).toMatchObject({ op: 'unzip', path: 'mods/pack.zip', state: 'succeeded', files: 3, total: big.length + 16, done: big.length + 16 });
    for (const [path, bytes] of Object.entries(files)) expect(sha(readFileSync(join(folder, 'mods', path)))).toBe(sha(bytes));
    expect(statSync(join(folder, 'mods', 'pack', 'start.sh')).mode & 0o777).toBe(0o755);
    expect(tree(join(folder, 'mods'))).toEqual(['pack.zip', 'pack/', 'pack/config.toml', 'pack/empty/', 'pack/lib/', 'pack/lib/big.bin', 'pack/start.sh']);

    // Again: the files exist, so without overwrite nothing changes and the op lists them.
    writeFileSync(join(folder, 'mods', 'pack', 'config.toml'), 'a = 2\n');
    writeFileSync(join(folder, 'mods', 'pack', 'mine.txt'), 'kept');
    const refused = await unzipped('mods/pack.zip', false);
    expect(refused).toMatchObject({ state: 'failed', error: { code: 'file_exists', conflict_count: 3 } });
    expect(refused.error!.conflicts).toEqual(['mods/pack/config.toml', 'mods/pack/lib/big.bin', 'mods/pack/start.sh']);
    expect(readFileSync(join(folder, 'mods', 'pack', 'config.toml'), 'utf8')).toBe('a = 2\n');

    const replaced = await unzipped('mods/pack.zip', true);
    expect(replaced).toMatchObject({ state: 'succeeded', files: 3 });
    expect(readFileSync(join(folder, 'mods', 'pack', 'config.toml'), 'utf8')).toBe('a = 1\n');
    expect(readFileSync(join(folder, 'mods', 'pack', 'mine.txt'), 'utf8')).toBe('kept');
    expect(readdirSync(join(folder, 'mods')).filter((n) => n.startsWith('.felis'))).toEqual([]);
  });

  it('refuses archives with entries that lead out, are absolute, or are links, writing nothing', async () => {
    const { folder, root, unzipped } = await setUp();
    const cases: Array<[string, ZipEntry, string]> = [
      ['dotdot.zip', { name: '../evil.txt', data: Buffer.from('pwned') }, 'archive_unsafe'],
      ['deep.zip', { name: 'a/../../../evil.txt', data: Buffer.from('pwned') }, 'archive_unsafe'],
      ['absolute.zip', { name: '/tmp/evil.txt', data: Buffer.from('pwned') }, 'archive_unsafe'],
      ['backslash.zip', { name: '..\\..\\evil.txt', data: Buffer.from('pwned') }, 'archive_unsafe'],
      ['drive.zip', { name: 'C:/evil.txt', data: Buffer.from('pwned') }, 'archive_unsafe'],
      ['link.zip', { name: 'link', data: Buffer.from('/etc/passwd'), mode: 0o120777 }, 'archive_symlink'],
      ['fifo.zip', { name: 'pipe', mode: 0o010644 }, 'archive_unsafe'],
    ];
    for (const [file, bad, code] of cases) {
      writeFileSync(join(folder, 'mods', file), zip([{ name: 'good.txt', data: Buffer.from('fine') }, bad]));
      const op = await unzipped(`mods/${file}`);
      expect(op, file).toMatchObject({ state: 'failed', error: { code } });
    }
    expect(tree(join(folder, 'mods'))).toEqual(cases.map(([f]) => f).sort());
    expect(existsSync(join(root, 'evil.txt')) || existsSync(join(root, 'worlds', 'evil.txt')) || existsSync('/tmp/evil.txt')).toBe(false);
  });

  it('stops zip bombs: declared sizes over the bound, too many entries, and entries that lie about their size', async () => {
    const { deps, folder, unzipped } = await setUp();
    const zeros = Buffer.alloc(16 * 1024 * 1024);
    writeFileSync(join(folder, 'mods', 'bomb.zip'), zip([{ name: 'a.bin', data: zeros }, { name: 'b.bin', data: zeros }]));
    expect(statSync(join(folder, 'mods', 'bomb.zip')).size).toBeLessThan(100_000);
    await writeSetting(deps.database.db, 'unzip_max_bytes', 20 * 1024 * 1024, deps.clock.now());
    try {
      expect(await unzipped('mods/bomb.zip')).toMatchObject({ state: 'failed', error: { code: 'archive_too_large' } });
    } finally {
      await writeSetting(deps.database.db, 'unzip_max_bytes', 8 * 1024 ** 3, deps.clock.now());
    }

    // Headers that declare 10 bytes for 16 MiB: the extraction stops at the lie and keeps nothing.
    writeFileSync(join(folder, 'mods', 'liar.zip'), zip([{ name: 'ok.txt', data: Buffer.from('ok') }, { name: 'z.bin', data: zeros, declaredSize: 10 }]));
    expect(await unzipped('mods/liar.zip')).toMatchObject({ state: 'failed', error: { code: 'archive_invalid' } });

    writeFileSync(join(folder, 'mods', 'many.zip'), zip(Array.from({ length: 5 }, (_, i) => ({ name: `f${i}.txt`, data: Buffer.from(`${i}`) }))));
    await writeSetting(deps.database.db, 'unzip_max_entries', 3, deps.clock.now());
    try {
      expect(await unzipped('mods/many.zip')).toMatchObject({ state: 'failed', error: { code: 'archive_too_large' } });
    } finally {
      await writeSetting(deps.database.db, 'unzip_max_entries', 100_000, deps.clock.now());
    }
    writeFileSync(join(folder, 'mods', 'junk.zip'), 'not a zip at all');
    expect(await unzipped('mods/junk.zip')).toMatchObject({ state: 'failed', error: { code: 'archive_invalid' } });
    expect(await unzipped('mods/missing.zip')).toMatchObject({ state: 'failed', error: { code: 'not_found' } });
    expect(tree(join(folder, 'mods'))).toEqual(['bomb.zip', 'junk.zip', 'liar.zip', 'many.zip']);
  });

  it('refuses a path that is not a .zip or leads out at once, and a running server with not_stopped', async () => {
    const { deps, name, unzip, folder } = await setUp();
    writeFileSync(join(folder, 'mods', 'a.zip'), zip([{ name: 'x.txt', data: Buffer.from('x') }]));
    for (const path of ['mods/a.txt', '../a.zip', '/etc/a.zip', 'mods/a\u0000.zip']) {
      const res = await unzip(path);
      expect(res.status, path).toBe(400);
      expect((await errorOf(res)).code).toBe('bad_path');
    }
    await deps.cluster.setDesiredState(name, 'Running');
    const running = await unzip('mods/a.zip');
    expect(running.status).toBe(409);
    expect((await errorOf(running)).code).toBe('not_stopped');
    expect(existsSync(join(folder, 'mods', 'x.txt'))).toBe(false);
  });

  it('lists both uploads and unzips of the server, newest first, to its owner and staff only', async () => {
    const { deps, external, owner, name, folder, base, unzipped } = await setUp();
    const archive = zip([{ name: 'x.txt', data: Buffer.from('x') }]);
    const begun = await external.request(`${base}/uploads?path=mods%2Fup.zip`, jsonRequest('POST', { size: archive.length }, owner.headers));
    const { id } = (await begun.json()) as { id: string };
    const put = await external.request(`${base}/uploads/${id}?offset=0`, {
      method: 'PUT',
      headers: { ...owner.headers, 'Content-Type': 'application/octet-stream' },
      body: new Uint8Array(archive),
    });
    expect(put.status).toBe(200);
    expect((await external.request(`${base}/uploads/${id}/commit`, jsonRequest('POST', { overwrite: false }, owner.headers))).status).toBe(202);
    await deps.worlds.jobs.idle();
    deps.clock.advance(1000);
    expect(await unzipped('mods/up.zip')).toMatchObject({ state: 'succeeded', files: 1 });
    expect(readFileSync(join(folder, 'mods', 'x.txt'), 'utf8')).toBe('x');

    const listed = (await (await external.request(`${base}/ops`, { headers: owner.headers })).json()) as { ops: Op[] };
    expect(listed.ops.map((o) => [o.op, o.path, o.state])).toEqual([
      ['unzip', 'mods/up.zip', 'succeeded'],
      ['upload', 'mods/up.zip', 'succeeded'],
    ]);
    const admin = await worldMember(deps, 'admin');
    expect(((await (await external.request(`${base}/ops`, { headers: admin.headers })).json()) as { ops: Op[] }).ops).toHaveLength(2);
    const stranger = await worldMember(deps);
    expect((await external.request(`${base}/ops`, { headers: stranger.headers })).status).toBe(403);
    expect((await external.request(`/api/v1/servers/nosuch/files/ops`, { headers: admin.headers })).status).toBe(404);
    // A finished op leaves the list after half an hour.
    deps.clock.advance(31 * 60 * 1000);
    expect(((await (await external.request(`${base}/ops`, { headers: owner.headers })).json()) as { ops: Op[] }).ops).toEqual([]);
    void name;
  });
});
