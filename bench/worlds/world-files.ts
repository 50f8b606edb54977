import { randomBytes } from 'node:crypto';
import { createWriteStream, mkdirSync } from 'node:fs';
import { join } from 'node:path';

const MIB = 1024 * 1024;

/** Region-file-like content: half random (compresses badly), half repeated runs (compresses well). */
export async function writeWorld(folder: string, worldMib: number): Promise<void> {
  const fileMib = 16;
  const random = randomBytes(MIB);
  const runs = Buffer.alloc(MIB);
  for (let i = 0; i < runs.length; i++) runs[i] = (i >> 9) & 0xff;
  mkdirSync(join(folder, 'world', 'region'), { recursive: true });
  for (let f = 0; f < Math.ceil(worldMib / fileMib); f++) {
    const out = createWriteStream(join(folder, 'world', 'region', `r.${f}.0.mca`));
    for (let m = 0; m < fileMib; m++) {
      random[m] = f; // no two MiB alike
      if (!out.write(m % 2 === 0 ? Buffer.from(random) : runs)) await new Promise<void>((r) => out.once('drain', () => r()));
    }
    await new Promise<void>((resolve, reject) => out.end((err?: Error | null) => (err ? reject(err) : resolve())));
  }
}
