import { mkdir, rm, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { defaultWorldClaim } from './world-volumes.js';

const NAME = /^[a-z0-9][a-z0-9-]{0,62}$/;

/**
 * The world volumes of the simulated cluster: one real folder per server under a root
 * (`DATA_DIR/worlds/<name>`), so backups, restores and file routes work on real bytes without
 * Kubernetes. A volume exists from its first use until it is released. A world a move copied to
 * another node (node-local volumes, world-volumes.ts) is the folder of the move's claim,
 * `DATA_DIR/worlds/.volumes/<claim>`, once the server's spec names that claim (`volumeOf`).
 */
export class SimulatedWorldFolders {
  readonly kind = 'local' as const;
  #volumeOf: ((serverName: string) => Promise<string | undefined>) | undefined;

  constructor(
    readonly root: string,
    volumeOf?: (serverName: string) => Promise<string | undefined>,
  ) {
    this.#volumeOf = volumeOf;
  }

  /** Follows the servers' volumes as the cluster records them (the claim a move switched to). */
  followVolumes(volumeOf: (serverName: string) => Promise<string | undefined>): void {
    this.#volumeOf = volumeOf;
  }

  /** The folder of a server's world (or of its volume `claim`), created on first use. Names are the cluster's (`[a-z0-9-]`). */
  async folder(serverName: string, claim?: string): Promise<string> {
    const path = this.pathOf(serverName, claim ?? (await this.#volumeOf?.(serverName)));
    await mkdir(path, { recursive: true });
    return path;
  }

  /** Where the folder is (or would be), without creating it. */
  pathOf(serverName: string, claim?: string): string {
    if (!NAME.test(serverName)) throw new Error(`not a server name: ${JSON.stringify(serverName)}`);
    if (claim === undefined || claim === defaultWorldClaim(serverName)) return join(this.root, serverName);
    if (!NAME.test(claim)) throw new Error(`not a claim name: ${JSON.stringify(claim)}`);
    return join(this.root, '.volumes', claim);
  }

  async exists(serverName: string): Promise<boolean> {
    try {
      return (await stat(this.pathOf(serverName, await this.#volumeOf?.(serverName)))).isDirectory();
    } catch {
      return false;
    }
  }

  /** Gives the volume back (idle reclaim, a move's old volume): its folder and everything in it are removed. */
  async release(serverName: string, claim?: string): Promise<void> {
    await rm(this.pathOf(serverName, claim ?? (await this.#volumeOf?.(serverName))), { recursive: true, force: true });
  }
}
