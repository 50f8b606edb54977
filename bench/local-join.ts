/**
 * Issue 45's figures on the compiled service: `npm run bench:local-join`. Starts the service
 * (dist-bench/src/main.js) with CLUSTER=local, GAME_PORT and the stand-in game as
 * LOCAL_SERVER_COMMAND, on servers seeded in the local cluster's own store, and measures:
 *   - wake on join: a login through GAME_PORT to a stopped public server, from the login start to
 *     the game's login success (the forward), against the same stand-in started by hand and logged
 *     into directly (spawn to login success) in the same run;
 *   - bytes/s a logged-in client sends to the game through the forward, against a direct
 *     connection to the game's own port (the same client, the same game);
 *   - resident memory per running stand-in (VmRSS), against the service's own.
 * BENCH_RUNS (3) wakes, BENCH_BULK_MIB (32) per transfer.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import type { EventEmitter } from 'node:events';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { connect, createServer, type AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import mc from 'minecraft-protocol';
import { processesIn, STAND_IN } from '../test/helpers/local-game/index.js';

const RUNS = Number(process.env.BENCH_RUNS ?? 3);
const BULK_MIB = Number(process.env.BENCH_BULK_MIB ?? 32);
const VERSION = '1.20.4';
const TOKEN = 'bench-proxy-token-0123456789';
const standIn = resolve(STAND_IN.replace(`${join('dist-bench', 'test')}`, 'test'));
const command = `exec '${process.execPath}' '${standIn}'`;

async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const { port } = server.address() as AddressInfo;
  await new Promise((r) => server.close(r));
  return port;
}

const rssMiB = (pid: number) => Number(/VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))![1]) / 1024;
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
/** Events minecraft-protocol's types do not list (the socket's connect, state changes, packets by name). */
const on = (client: mc.Client, event: string, listener: Parameters<EventEmitter['on']>[1]) => (client as unknown as EventEmitter).on(event, listener);
const dial = (port: number) => (client: mc.Client) => client.setSocket(connect({ host: '127.0.0.1', port }));

/** Logs in and resolves with the client and the ms from the socket's connect (the login start follows it at once) to the login success. */
function loginTimed(port: number, host: string, username: string): Promise<{ client: mc.Client; ms: number }> {
  const client = mc.createClient({ host, port, username, auth: 'offline', version: VERSION, connect: dial(port), hideErrors: true } as mc.ClientOptions);
  return new Promise((resolvePromise, reject) => {
    let began = 0;
    on(client, 'connect', () => (began = performance.now()));
    client.on('packet', (data: { reason?: string }, meta: { name: string; state: string }) => {
      if (meta.state === 'login' && meta.name === 'success') resolvePromise({ client, ms: performance.now() - began });
      if (meta.state === 'login' && meta.name === 'disconnect') reject(new Error(`refused: ${data.reason}`));
    });
    client.on('error', () => undefined);
    client.on('end', (why: string) => reject(new Error(`ended before login: ${why}`)));
  });
}

/** Sends BULK_MIB of plugin-message payloads to the game once in play; resolves with MiB/s. */
async function bulk(port: number, host: string, username: string): Promise<number> {
  const { client } = await loginTimed(port, host, username);
  await new Promise<void>((r) => (client.state === 'play' ? r() : on(client, 'state', (s: string) => s === 'play' && r())));
  // Random bytes: the library compresses every packet over 256 bytes (vanilla's threshold too), and
  // a compressible payload would measure zlib's ratio instead of the bytes on the wire.
  const chunk = randomBytes(30_000);
  const total = BULK_MIB * 1048576;
  const began = performance.now();
  const answered = new Promise<number>((r) => on(client, 'custom_payload', (p: { channel: string; data: Buffer }) => p.channel === 'felis:done' && r(Number(p.data.toString()))));
  for (let sent = 0; sent < total; sent += chunk.length) client.write('custom_payload', { channel: 'felis:bulk', data: chunk });
  client.write('custom_payload', { channel: 'felis:done', data: Buffer.alloc(0) });
  const received = await answered;
  const seconds = (performance.now() - began) / 1000;
  client.end('done');
  return received / 1048576 / seconds;
}

/** The stand-in started by hand in its own folder: spawn to a login success on its port. */
async function coldStandIn(dir: string): Promise<number> {
  const port = await freePort();
  const folder = mkdtempSync(join(dir, 'cold-'));
  writeFileSync(join(folder, 'eula.txt'), 'eula=true\n');
  writeFileSync(join(folder, 'server.properties'), `server-ip=127.0.0.1\nserver-port=${port}\nonline-mode=false\n`);
  const began = performance.now();
  const child = spawn('/bin/sh', ['-c', command], { cwd: folder, stdio: ['ignore', 'pipe', 'inherit'] });
  await new Promise<void>((r) => child.stdout!.on('data', (d: Buffer) => /done \(/i.test(d.toString()) && r()));
  const { client } = await loginTimed(port, 'cold', 'Cold');
  const ms = performance.now() - began;
  client.end('done');
  child.kill('SIGTERM');
  await new Promise((r) => child.once('exit', r));
  return ms;
}

const dir = mkdtempSync(join(tmpdir(), 'felis-bench-local-'));
let service: ChildProcess | undefined;
try {
  const names = Array.from({ length: RUNS }, (_, i) => `bench${i + 1}`);
  mkdirSync(join(dir, 'local'), { recursive: true });
  writeFileSync(
    join(dir, 'local', 'servers.json'),
    JSON.stringify({ servers: names.map((name) => ({ name, subdomain: name, labels: {}, autostartPolicy: 'public', memory: '1Gi', desiredState: 'Stopped' })) }),
  );
  const [internalPort, externalPort, gamePort] = [await freePort(), await freePort(), await freePort()];
  const portBase = 30_000 + Math.floor(Math.random() * 100) * 200;
  service = spawn(process.execPath, [resolve('dist-bench/src/main.js')], {
    env: {
      PATH: process.env.PATH,
      DATABASE_URL: 'memory:',
      DATA_DIR: dir,
      SERVICE_TOKEN_PROXY: TOKEN,
      ROOT_DOMAIN: 'felis.test',
      INTERNAL_PORT: String(internalPort),
      EXTERNAL_PORT: String(externalPort),
      CLUSTER: 'local',
      LOCAL_EULA: 'true',
      LOCAL_ONLINE_MODE: 'off',
      LOCAL_SERVER_COMMAND: command,
      LOCAL_PORT_RANGE: `${portBase}-${portBase + 199}`,
      GAME_PORT: String(gamePort),
      MAIL_TRANSPORT: 'none',
      LOG_LEVEL: 'warn',
    },
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  // Up once the internal face answers.
  for (;;) {
    const up = await fetch(`http://127.0.0.1:${internalPort}/healthz`).then((r) => r.ok, () => false);
    if (up) break;
    await new Promise((r) => setTimeout(r, 100));
  }

  const cold: number[] = [];
  for (let i = 0; i < RUNS; i++) cold.push(await coldStandIn(dir));
  const wakes: number[] = [];
  const clients: mc.Client[] = [];
  for (const [i, name] of names.entries()) {
    const { client, ms } = await loginTimed(gamePort, `${name}.felis.test`, `Player${i}`);
    wakes.push(ms);
    clients.push(client);
  }
  for (const client of clients) client.end('done');

  const status = (await (await fetch(`http://127.0.0.1:${internalPort}/api/v1/internal/servers/bench1/status`, { headers: { authorization: `Bearer ${TOKEN}` } })).json()) as { endpointAddress: string };
  const gameOwnPort = Number(status.endpointAddress.split(':')[1]);
  const direct: number[] = [];
  const forwarded: number[] = [];
  await bulk(gameOwnPort, 'direct', 'Warmup'); // the first transfer pays the JIT's warm-up on both ends
  for (let i = 0; i < RUNS; i++) {
    direct.push(await bulk(gameOwnPort, 'direct', `Direct${i}`));
    forwarded.push(await bulk(gamePort, 'bench1.felis.test', `Forward${i}`));
  }

  const games = processesIn(join(dir, 'worlds'));
  const gameRss = games.map(rssMiB);
  const serviceRss = rssMiB(service.pid!);

  const f = (n: number) => n.toFixed(0);
  process.stdout.write(`| figure | baseline (same run) | measured | ratio |\n|---|---|---|---|\n`);
  process.stdout.write(
    `| wake on join, login start to the game's login success (median of ${RUNS}) | stand-in started by hand, spawn to login success: ${f(median(cold))} ms | ${f(median(wakes))} ms | ${(median(wakes) / median(cold)).toFixed(2)} |\n`,
  );
  process.stdout.write(
    `| bytes/s a client sends to the game (${BULK_MIB} MiB, median of ${RUNS}) | direct to the game's port: ${median(direct).toFixed(1)} MiB/s | through GAME_PORT: ${median(forwarded).toFixed(1)} MiB/s | ${(median(forwarded) / median(direct)).toFixed(2)} |\n`,
  );
  process.stdout.write(
    `| resident memory per running stand-in (${games.length} running, median) | the service: ${serviceRss.toFixed(0)} MiB | ${median(gameRss).toFixed(0)} MiB | ${(median(gameRss) / serviceRss).toFixed(2)} |\n`,
  );
  process.stdout.write(`\nwakes (ms): ${wakes.map(f).join(', ')}; cold starts (ms): ${cold.map(f).join(', ')}; direct MiB/s: ${direct.map((x) => x.toFixed(1)).join(', ')}; forwarded MiB/s: ${forwarded.map((x) => x.toFixed(1)).join(', ')}\n`);
} finally {
  if (service) {
    service.kill('SIGTERM');
    await new Promise((r) => service!.once('exit', r));
  }
  rmSync(dir, { recursive: true, force: true });
}
