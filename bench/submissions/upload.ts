/**
 * A 500 MiB modpack context uploaded to the real service, with the server's memory watched:
 *
 *   npx tsx bench/submissions/upload.ts [MiB=500]
 *
 * The server runs alone in a child (upload-target.ts). Two runs: the panel's way (parts of
 * part_max_bytes, 32 MiB, each with its Content-Digest, then complete) and one request carrying the
 * whole context. Bodies are streamed by the pipeline to the store and never held whole, so the
 * server's resident memory should stay near its baseline whatever the size; the bench prints the
 * peak above the baseline and fails when it passes 96 MiB.
 */
import { fork, type ChildProcess } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import { request } from 'node:http';
import { fileURLToPath } from 'node:url';

const MIB = 1024 * 1024;
const total = Number(process.argv[2] ?? 500) * MIB;
const PART = 32 * MIB;
const LIMIT = 96 * MIB;

const child = fork(fileURLToPath(new URL('./upload-target.ts', import.meta.url)), [], {
  execArgv: ['--import', 'tsx', '--expose-gc'],
  stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
});
const ask = <T>(message: object, type: string) =>
  new Promise<T>((resolve) => {
    const on = (reply: { type: string }) => {
      if (reply.type !== type) return;
      child.off('message', on);
      resolve(reply as T);
    };
    child.on('message', on);
    if ('type' in message && message.type !== 'wait') child.send(message);
  });
const ready = await ask<{ port: number; headers: Record<string, string> }>({ type: 'wait' }, 'ready');
const base = '/api/v1/me/submissions';

/** One request by node:http (fetch cannot send the session's Host header); the body as chunks. */
function send(method: string, path: string, headers: Record<string, string>, chunks: Iterable<Buffer> = []) {
  return new Promise<{ status: number; text: string }>((resolve, reject) => {
    const req = request({ host: '127.0.0.1', port: ready.port, method, path, headers: { ...ready.headers, ...headers } }, (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (d: string) => (text += d));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, text }));
    });
    req.on('error', reject);
    (async () => {
      for (const chunk of chunks) if (!req.write(chunk)) await new Promise((r) => req.once('drain', r));
      req.end();
    })().catch(reject);
  });
}

// One pseudo-random block, varied per part so that no two parts are alike.
const block = randomBytes(PART);
const partAt = (offset: number) => {
  const part = Buffer.from(block.subarray(0, Math.min(PART, total - offset)));
  part.writeUInt32BE(offset / PART, 0);
  return part;
};
const digest = (bytes: Buffer) => `sha-256=:${createHash('sha256').update(bytes).digest('base64')}:`;

async function run(label: string, upload: (id: string) => Promise<string>) {
  const { id } = await ask<{ id: string }>({ type: 'submission' }, 'submission');
  await ask({ type: 'reset' }, 'reset');
  const started = performance.now();
  const expected = await upload(id);
  const seconds = (performance.now() - started) / 1000;
  const memory = await ask<{ baseline: number; max: number }>({ type: 'report' }, 'report');
  const res = await send('GET', `${base}/${id}`, {});
  const stored = (JSON.parse(res.text) as { context_sha256?: string }).context_sha256;
  if (stored !== expected) throw new Error(`${label}: stored digest ${stored} is not ${expected}`);
  const peak = memory.max - memory.baseline;
  console.log(
    `${label}: ${(total / MIB).toFixed(0)} MiB in ${seconds.toFixed(1)} s (${(total / MIB / seconds).toFixed(0)} MiB/s); ` +
      `server RSS at start ${(memory.baseline / MIB).toFixed(0)} MiB, peak +${(peak / MIB).toFixed(1)} MiB`,
  );
  return peak;
}

const whole = createHash('sha256');
for (let offset = 0; offset < total; offset += PART) whole.update(partAt(offset));
const wholeDigest = whole.digest('hex');

const peaks = [
  await run('in parts of 32 MiB', async (id) => {
    for (let offset = 0; offset < total; offset += PART) {
      const part = partAt(offset);
      const res = await send('PUT', `${base}/${id}/context/upload?offset=${offset}`, {
        'Content-Type': 'application/octet-stream',
        'Content-Length': String(part.length),
        'Content-Digest': digest(part),
      }, [part]);
      if (res.status !== 200) throw new Error(`part at ${offset}: ${res.status} ${res.text}`);
    }
    const done = await send('POST', `${base}/${id}/context/upload/complete`, {});
    if (done.status !== 200) throw new Error(`complete: ${done.status} ${done.text}`);
    return wholeDigest;
  }),
  await run('in one request', async (id) => {
    function* body() {
      for (let offset = 0; offset < total; offset += PART) yield partAt(offset);
    }
    const res = await send('POST', `${base}/${id}/context`, { 'Content-Type': 'application/gzip', 'Content-Length': String(total) }, body());
    if (res.status !== 200) throw new Error(`whole: ${res.status} ${res.text}`);
    return wholeDigest;
  }),
];

child.send({ type: 'stop' });
await new Promise((resolve) => (child as ChildProcess).once('exit', resolve));
if (peaks.some((p) => p > LIMIT)) {
  console.error(`memory grew by more than ${LIMIT / MIB} MiB`);
  process.exit(1);
}
