import { spawn, type ChildProcess } from 'node:child_process';
import { createInterface } from 'node:readline';

/** An S3-compatible server (npm `s3rver`) in a child process on 127.0.0.1, for the S3 store's tests. */
export interface S3rverProcess {
  endpoint: string;
  bucket: string;
  stop(): Promise<void>;
}

const SCRIPT = `
const S3rver = require('s3rver');
const [directory, bucket] = process.argv.slice(1);
const server = new S3rver({ address: '127.0.0.1', port: 0, silent: true, directory, configureBuckets: [{ name: bucket }] });
server.run().then((address) => process.stdout.write(JSON.stringify({ port: address.port }) + '\\n'));
process.on('SIGTERM', () => server.close().then(() => process.exit(0)));
`;

export async function startS3rver(directory: string, bucket = 'felis-backups'): Promise<S3rverProcess> {
  const child: ChildProcess = spawn(process.execPath, ['-e', SCRIPT, directory, bucket], { stdio: ['ignore', 'pipe', 'inherit'] });
  const lines = createInterface({ input: child.stdout! });
  const port = await new Promise<number>((resolve, reject) => {
    child.once('exit', (code) => reject(new Error(`s3rver exited with ${code}`)));
    lines.once('line', (line) => resolve((JSON.parse(line) as { port: number }).port));
  });
  return {
    endpoint: `http://127.0.0.1:${port}`,
    bucket,
    stop: () =>
      new Promise<void>((resolve) => {
        if (child.exitCode !== null) return resolve();
        child.once('exit', () => resolve());
        child.kill('SIGTERM');
      }),
  };
}
