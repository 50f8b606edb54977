import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { chownSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort } from './ports.js';

const BIN = execFileSync('pg_config', ['--bindir'], { encoding: 'utf8' }).trim();
// PostgreSQL refuses to run as root; CI runs as root, a developer usually does not.
const AS_ROOT = process.getuid?.() === 0;

function command(program: string, args: string[]): [string, string[]] {
  return AS_ROOT ? ['runuser', ['-u', 'postgres', '--', join(BIN, program), ...args]] : [join(BIN, program), args];
}

/**
 * A PostgreSQL server of the test's own (initdb in a temporary folder), which the test may stop and
 * start again: the machine's shared server must never be taken down by a fault test.
 */
export class ThrowawayPostgres {
  #child: ChildProcess | undefined;

  private constructor(
    readonly dir: string,
    readonly port: number,
  ) {}

  static async create(): Promise<ThrowawayPostgres> {
    const dir = mkdtempSync(join(tmpdir(), 'felis-pg-'));
    if (AS_ROOT) chownSync(dir, Number(execFileSync('id', ['-u', 'postgres'], { encoding: 'utf8' })), Number(execFileSync('id', ['-g', 'postgres'], { encoding: 'utf8' })));
    const [program, args] = command('initdb', ['-D', join(dir, 'data'), '-U', 'postgres', '--auth=trust', '--no-sync', '-E', 'UTF8']);
    execFileSync(program, args, { stdio: 'ignore' });
    const server = new ThrowawayPostgres(dir, await freePort());
    await server.start();
    return server;
  }

  get url(): string {
    return `postgres://postgres@127.0.0.1:${this.port}/postgres`;
  }

  /** Starts the server and resolves once it accepts connections. */
  async start(): Promise<void> {
    const [program, args] = command('postgres', [
      '-D', join(this.dir, 'data'), '-p', String(this.port), '-k', this.dir,
      '-c', 'listen_addresses=127.0.0.1', '-c', 'fsync=off', '-c', 'full_page_writes=off',
    ]);
    const child = spawn(program, args, { stdio: ['ignore', 'ignore', 'pipe'] });
    this.#child = child;
    let log = '';
    await new Promise<void>((resolve, reject) => {
      child.stderr!.on('data', (d: Buffer) => {
        log += d.toString();
        if (log.includes('ready to accept connections')) resolve();
      });
      child.once('exit', (code) => reject(new Error(`postgres exited ${code}: ${log}`)));
    });
  }

  /** Fast shutdown: open connections are ended by the server, as in a real outage. */
  async stop(): Promise<void> {
    const child = this.#child;
    if (!child || child.exitCode !== null) return;
    const exited = new Promise((resolve) => child.once('exit', resolve));
    const [program, args] = command('pg_ctl', ['stop', '-D', join(this.dir, 'data'), '-m', 'fast', '-w']);
    execFileSync(program, args, { stdio: 'ignore' });
    await exited;
    this.#child = undefined;
  }

  async destroy(): Promise<void> {
    await this.stop();
    rmSync(this.dir, { recursive: true, force: true });
  }
}
