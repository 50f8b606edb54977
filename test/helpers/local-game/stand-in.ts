/**
 * A stand-in game server for CLUSTER=local tests and benches, run as LOCAL_SERVER_COMMAND
 * (`node stand-in.ts`, Node's own type stripping). Like a vanilla server it reads server.properties
 * and eula.txt from its folder, refuses to run without `eula=true`, speaks the Minecraft (Java)
 * protocol through minecraft-protocol (status ping and an offline or online login), answers RCON
 * (`list`, `say`, `save-all`, `stop`), writes a vanilla server's log lines, and stops on `stop`
 * or a TERM. STANDIN_NO_RCON=1, or a file `standin-no-rcon` in its folder, makes a game whose RCON
 * never answers (a start that times out).
 */
import { existsSync, readFileSync } from 'node:fs';
import { createServer, type Socket } from 'node:net';
import mc from 'minecraft-protocol';

const VERSION = '1.20.4';
const started = Date.now();
const time = () => new Date().toISOString().slice(11, 19);
const log = (message: string, level = 'INFO') => process.stdout.write(`[${time()}] [Server thread/${level}]: ${message}\n`);

function readProperties(path: string): Map<string, string> {
  const values = new Map<string, string>();
  let text = '';
  try {
    text = readFileSync(path, 'utf8');
  } catch {
    return values;
  }
  for (const line of text.split(/\r?\n/)) {
    if (line.trim() === '' || /^\s*[#!]/.test(line)) continue;
    const match = /^((?:\\.|[^=:\\])*)[=:](.*)$/.exec(line);
    if (!match) continue;
    const unescape = (s: string) =>
      s.replace(/\\u([0-9a-fA-F]{4})|\\(.)/g, (_, hex: string | undefined, ch: string | undefined) =>
        hex ? String.fromCharCode(parseInt(hex, 16)) : ch === 'n' ? '\n' : ch === 't' ? '\t' : ch === 'r' ? '\r' : ch!,
      );
    values.set(unescape(match[1]!.trim()), unescape(match[2]!));
  }
  return values;
}

log(`Starting minecraft server version ${VERSION}`);
const eula = readProperties('eula.txt');
if (eula.get('eula') !== 'true') {
  log('Failed to load eula.txt', 'WARN');
  log('You need to agree to the EULA in order to run the server. Go to eula.txt for more info.');
  process.exit(1);
}
log('Loading properties');
const props = readProperties('server.properties');
const host = props.get('server-ip') || '0.0.0.0';
const port = Number(props.get('server-port') ?? 25565);
const maxPlayers = Number(props.get('max-players') ?? 20);
const players = new Map<string, mc.ServerClient>();
let stopping = false;

const game = mc.createServer({
  'online-mode': props.get('online-mode') !== 'false',
  host,
  port,
  version: VERSION,
  motd: props.get('motd') ?? 'A Minecraft Server',
  maxPlayers,
  hideErrors: true,
});
game.on('playerJoin', (client) => {
  players.set(client.username, client);
  log(`${client.username}[/${client.socket.remoteAddress}:${client.socket.remotePort}] logged in`);
  log(`${client.username} joined the game`);
  // The bench's bulk transfer: payloads on felis:bulk are counted, felis:done is answered with the total.
  let received = 0;
  client.on('custom_payload', (packet: { channel: string; data: Buffer }) => {
    if (packet.channel === 'felis:bulk') received += packet.data.length;
    else if (packet.channel === 'felis:done') client.write('custom_payload', { channel: 'felis:done', data: Buffer.from(String(received)) });
  });
  client.on('end', () => {
    players.delete(client.username);
    log(`${client.username} left the game`);
  });
});
game.on('listening', () => {
  log(`Starting Minecraft server on ${host}:${port}`);
  log('Preparing level "world"');
  log(`Done (${((Date.now() - started) / 1000).toFixed(3)}s)! For help, type "help"`);
  if (props.get('enable-rcon') === 'true' && process.env.STANDIN_NO_RCON !== '1' && !existsSync('standin-no-rcon')) startRcon();
});
game.on('error', (err) => {
  log(`**** FAILED TO BIND TO PORT! ${err.message}`, 'ERROR');
  process.exit(1);
});

function execute(command: string): string {
  const [verb, ...rest] = command.trim().split(/\s+/);
  switch (verb) {
    case 'list':
      return `There are ${players.size} of a max of ${maxPlayers} players online: ${[...players.keys()].join(', ')}`;
    case 'say':
      log(`[Rcon] ${rest.join(' ')}`);
      return '';
    case 'save-all':
      log('Saving the game (this may take a moment!)');
      log('Saved the game');
      return 'Saving the game (this may take a moment!)Saved the game';
    case 'stop':
      setImmediate(stop);
      return 'Stopping the server';
    default:
      return `Unknown or incomplete command, see below for error${verb}<--[HERE]`;
  }
}

function frame(id: number, type: number, body: string): Buffer {
  const bytes = Buffer.from(body, 'utf8');
  const out = Buffer.alloc(14 + bytes.length);
  out.writeInt32LE(10 + bytes.length, 0);
  out.writeInt32LE(id, 4);
  out.writeInt32LE(type, 8);
  bytes.copy(out, 12);
  return out;
}

const rconSockets = new Set<Socket>();
function startRcon(): void {
  const rconPort = Number(props.get('rcon.port') ?? 25575);
  const password = props.get('rcon.password') ?? '';
  log('Starting remote control listener');
  const rcon = createServer((socket) => {
    rconSockets.add(socket);
    socket.on('close', () => rconSockets.delete(socket));
    socket.on('error', () => socket.destroy());
    let authed = false;
    let pending = Buffer.alloc(0);
    socket.on('data', (chunk: Buffer) => {
      pending = Buffer.concat([pending, chunk]);
      while (pending.length >= 4) {
        const length = pending.readInt32LE(0);
        if (length < 10 || length > 1456) return socket.destroy();
        if (pending.length < 4 + length) return;
        const id = pending.readInt32LE(4);
        const type = pending.readInt32LE(8);
        const body = pending.subarray(12, 4 + length - 2).toString('utf8');
        pending = pending.subarray(4 + length);
        if (type === 3) {
          authed = password !== '' && body === password;
          socket.write(frame(authed ? id : -1, 2, ''));
        } else if (type === 2 && authed) {
          socket.write(frame(id, 0, execute(body)));
        } else if (type === 2) {
          socket.write(frame(-1, 2, ''));
        } else {
          socket.write(frame(id, 0, `Unknown request ${type.toString(16)}`));
        }
      }
    });
  });
  rcon.listen(rconPort, host, () => log(`RCON running on ${host}:${rconPort}`));
}

function stop(): void {
  if (stopping) return;
  stopping = true;
  log('Stopping the server');
  log('Stopping server');
  log('Saving players');
  for (const client of players.values()) client.end('Server closed');
  log('Saving worlds');
  for (const socket of rconSockets) socket.destroy();
  game.close();
  log('ThreadedAnvilChunkStorage: All dimensions are saved');
  process.exit(0);
}
process.on('SIGTERM', stop);
process.on('SIGINT', stop);
