import { connect } from 'node:net';
import mc from 'minecraft-protocol';

/** The version the stand-in speaks. */
export const GAME_VERSION = '1.20.4';

/** minecraft-protocol's connection option: dial 127.0.0.1:`port` whatever host the handshake names. */
const dial = (port: number) => (client: mc.Client) => client.setSocket(connect({ host: '127.0.0.1', port }));

/** A status ping that names `host` in its handshake; resolves with the MOTD text. */
export async function pingMotd(port: number, host: string): Promise<{ motd: string; online: number; max: number }> {
  const answer = (await mc.ping({ host, port, version: GAME_VERSION, connect: dial(port), closeTimeout: 10_000 } as mc.PingOptions)) as mc.NewPingResult;
  const description = answer.description as { text?: string } | string;
  return { motd: typeof description === 'string' ? description : (description.text ?? ''), online: answer.players.online, max: answer.players.max };
}

export interface LoginOutcome {
  /** The game's login success reached the client: the connection was forwarded and the game took it. */
  joined: boolean;
  /** The login-state disconnect's text, when the listener (or the game) refused. */
  reason?: string;
  client: mc.Client;
}

/** A login as `username` naming `host`; resolves at the game's login success or a disconnect. */
export function login(port: number, host: string, username: string, timeoutMs = 28_000): Promise<LoginOutcome> {
  const client = mc.createClient({ host, port, username, auth: 'offline', version: GAME_VERSION, connect: dial(port), hideErrors: true } as mc.ClientOptions);
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      client.end('test timeout');
      reject(new Error(`login as ${username} to ${host} had no outcome in ${timeoutMs} ms`));
    }, timeoutMs);
    const done = (outcome: Omit<LoginOutcome, 'client'>) => {
      clearTimeout(timer);
      resolve({ ...outcome, client });
    };
    client.on('packet', (data: { reason?: string }, meta: { name: string; state: string }) => {
      if (meta.state === 'login' && meta.name === 'success') done({ joined: true });
      else if (meta.state === 'login' && meta.name === 'disconnect') {
        let reason = data.reason ?? '';
        try {
          reason = (JSON.parse(reason) as { text?: string }).text ?? reason;
        } catch {
          // Plain text.
        }
        done({ joined: false, reason });
      }
    });
    client.on('error', () => undefined);
    client.on('end', () => done({ joined: false }));
  });
}
