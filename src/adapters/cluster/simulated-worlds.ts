import { mkdir, rm, stat } from 'node:fs/promises';
import { join } from 'node:path';

/**
 * The world volumes of the simulated cluster: one real folder per server under a root
 * (`DATA_DIR/worlds/<name>`), so backups, restores and file routes work on real bytes without
 * Kubernetes. A volume exists from its first use until it is released.
 */
export class SimulatedWorldFolders {
  readonly kind = 'local' as const;
  constructor(readonly root: string) {}

  /** The folder of a server's world, created on first use. Names are the cluster's (`[a-z0-9-]`). */
  async folder(serverName: string): Promise<string> {
    const path = this.pathOf(serverName);
    await mkdir(path, { recursive: true });
    return path;
  }

  /** Where the folder is (or would be), without creating it. */
  pathOf(serverName: string): string {
    if (!/^[a-z0-9][a-z0-9-]{0,62}$/.test(serverName)) throw new Error(`not a server name: ${JSON.stringify(serverName)}`);
    return join(this.root, serverName);
  }

  async exists(serverName: string): Promise<boolean> {
    try {
      return (await stat(this.pathOf(serverName))).isDirectory();
    } catch {
      return false;
    }
  }

  /** Gives the volume back (idle reclaim): its folder and everything in it are removed. */
  async release(serverName: string): Promise<void> {
    await rm(this.pathOf(serverName), { recursive: true, force: true });
  }
}
