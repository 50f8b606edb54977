import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { afterAll } from 'vitest';
import type { TestDeps } from './app.js';
import { addServer, randomMcUuid } from './servers.js';
import { createUser, linkAccount, signIn } from './sessions.js';
import { serverClaims } from '../../src/db/schema/servers.js';
import { LocalBackupStore } from '../../src/adapters/backup-store/local.js';
import type { BackupStore } from '../../src/adapters/backup-store/types.js';
import { SimulatedWorldFolders } from '../../src/adapters/cluster/simulated-worlds.js';
import { JobTracker, type WorldsRuntime } from '../../src/features/worlds/volumes/runtime.js';

/** A temporary directory removed after the file's tests. */
export function useTempDir(prefix = 'felis-worlds-'): () => string {
  const dirs: string[] = [];
  afterAll(() => {
    for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
  });
  return () => {
    const dir = mkdtempSync(join(tmpdir(), prefix));
    dirs.push(dir);
    return dir;
  };
}

/** World folders and a local store in `root` (or the given store), as the simulated cluster has. */
export function testWorlds(root: string, store?: BackupStore): WorldsRuntime & { folders: SimulatedWorldFolders } {
  return {
    store: store ?? new LocalBackupStore(join(root, 'backups')),
    folders: new SimulatedWorldFolders(join(root, 'worlds')),
    jobs: new JobTracker(),
  };
}

/**
 * Fills a folder like a small Minecraft world, plus the entries an archive must skip: a symbolic
 * link (leading out of the world), a FIFO and a listening Unix socket. Resolves with a closer for
 * the socket's server.
 */
export async function seedWorld(folder: string): Promise<{ close(): Promise<void>; skippable: number }> {
  mkdirSync(join(folder, 'world', 'region'), { recursive: true });
  writeFileSync(join(folder, 'server.properties'), 'motd=A Felis world\nmax-players=20\n');
  writeFileSync(join(folder, 'world', 'level.dat'), Buffer.from([0x0a, 0, 0, 1, 2, 3, 4, 5, 0xff]));
  const region = Buffer.alloc(256 * 1024);
  for (let i = 0; i < region.length; i++) region[i] = (i * 2654435761) >>> 24;
  writeFileSync(join(folder, 'world', 'region', 'r.0.0.mca'), region);
  execFileSync('ln', ['-s', '/etc/passwd', join(folder, 'escape-link')]);
  execFileSync('mkfifo', [join(folder, 'pipe')]);
  const socket = createServer();
  await new Promise<void>((resolve) => socket.listen(join(folder, 'rcon.sock'), resolve));
  return {
    skippable: 3,
    close: () => new Promise<void>((resolve) => socket.close(() => resolve())),
  };
}

/** A signed-in account with a linked player, as the panel's user (or staff) would be. */
export async function worldMember(deps: TestDeps, role: 'user' | 'admin' = 'user') {
  const user = await createUser(deps, { role });
  await linkAccount(deps, { userId: user.id, mcUuid: randomMcUuid() });
  return { ...user, headers: (await signIn(deps, { userId: user.id })).headers };
}

/** A server owned by a signed-in member, with its (empty) world folder. */
export async function ownedWorld(deps: TestDeps & { worlds: { folders?: SimulatedWorldFolders | WorldsRuntime['folders'] } }) {
  const owner = await worldMember(deps);
  const { name } = addServer(deps).spec;
  await claimFor(deps, name, owner.id);
  const folder = await deps.worlds.folders!.folder(name);
  return { owner, name, folder };
}

/** Records `userId` as the server's owner. */
export async function claimFor(deps: TestDeps, serverName: string, userId: string): Promise<void> {
  await deps.database.db.insert(serverClaims).values({ serverName, subdomain: serverName, userId, claimedAt: deps.clock.now() });
}

/** Every file and folder under `dir` with its size and sha-256: equal manifests are byte-identical worlds. */
export function worldManifest(dir: string): string[] {
  const out: string[] = [];
  const walk = (at: string) => {
    for (const name of readdirSync(at).sort()) {
      const path = join(at, name);
      const stat = statSync(path);
      if (stat.isDirectory()) {
        out.push(`${relative(dir, path)}/`);
        walk(path);
      } else out.push(`${relative(dir, path)} ${stat.size} ${createHash('sha256').update(readFileSync(path)).digest('hex')}`);
    }
  };
  walk(dir);
  return out;
}
