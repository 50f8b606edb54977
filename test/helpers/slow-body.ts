import { TOKENS } from './app.js';
import { ECHO_PATH } from './fixture-routes.js';
import type { RawConnection } from './raw-http.js';

/** The head of a POST to the fixture echo route with the proxy's token and `extra` headers. */
export const echoHead = (port: number, extra: string[]) =>
  [`POST ${ECHO_PATH} HTTP/1.1`, `Host: 127.0.0.1:${port}`, `Authorization: Bearer ${TOKENS.proxy}`, 'Content-Type: application/json', ...extra]
    .join('\r\n')
    .concat('\r\n\r\n');

/** `{"name":"x","count":1}` padded with spaces to `size` bytes (valid JSON of any length). */
export const paddedBody = (size: number) => {
  const json = '{"name":"x","count":1}';
  return json + ' '.repeat(size - json.length);
};

/**
 * Sends the head of a `body`-sized request, then the body 20 bytes every 25 ms (800 B/s, far
 * below the rule's 16 KiB/s) until the server closes the connection.
 */
export async function trickleUntilClosed(conn: RawConnection, port: number, body: string) {
  await conn.write(echoHead(port, [`Content-Length: ${body.length}`]));
  const started = Date.now();
  let sent = 0;
  const trickle = setInterval(() => {
    if (conn.closed) return clearInterval(trickle);
    conn.socket.write(body.slice(sent, sent + 20));
    sent += 20;
  }, 25);
  try {
    await conn.whenClosed();
  } finally {
    clearInterval(trickle);
  }
  return { sent, elapsedMs: Date.now() - started };
}
