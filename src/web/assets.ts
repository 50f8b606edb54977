import { createHash } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { CLIENT_SCRIPTS } from './client.js';

/**
 * The files the pages load, each served at a name carrying its content's hash
 * (`/assets/pico.3f2a9c1e.css`) with a year-long immutable cache: a new version is a new name.
 * The kept libraries are read from node_modules as their packages ship them (no bundler, no build
 * step); the pages' own small scripts are strings of client.ts, compiled with the service.
 */
export interface Asset {
  name: string;
  path: string;
  type: string;
  bytes: Uint8Array;
  etag: string;
}

const require = createRequire(import.meta.url);

/** A package's folder: its entry resolved, then up to the package.json that names it. */
function packageDir(name: string): string {
  let dir = dirname(require.resolve(name));
  while (!existsSync(join(dir, 'package.json')) || (JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8')) as { name?: string }).name !== name) {
    const up = dirname(dir);
    if (up === dir) throw new Error(`the package ${name} is not installed`);
    dir = up;
  }
  return dir;
}

const LIBRARIES: Array<{ name: string; package: string; file: string; type: string }> = [
  { name: 'pico.css', package: '@picocss/pico', file: 'css/pico.min.css', type: 'text/css; charset=utf-8' },
  { name: 'uplot.css', package: 'uplot', file: 'dist/uPlot.min.css', type: 'text/css; charset=utf-8' },
  { name: 'uplot.js', package: 'uplot', file: 'dist/uPlot.iife.min.js', type: 'text/javascript; charset=utf-8' },
  { name: 'webauthn.js', package: '@simplewebauthn/browser', file: 'dist/bundle/index.umd.min.js', type: 'text/javascript; charset=utf-8' },
];

function asset(name: string, type: string, bytes: Uint8Array): Asset {
  const hash = createHash('sha256').update(bytes).digest('hex').slice(0, 12);
  const dot = name.lastIndexOf('.');
  const path = `/assets/${name.slice(0, dot)}.${hash}${name.slice(dot)}`;
  return { name, path, type, bytes, etag: `"${hash}"` };
}

export class Assets {
  private readonly byName = new Map<string, Asset>();
  private readonly byPath = new Map<string, Asset>();

  constructor() {
    for (const lib of LIBRARIES) this.add(asset(lib.name, lib.type, readFileSync(join(packageDir(lib.package), lib.file))));
    for (const [name, source] of Object.entries(CLIENT_SCRIPTS)) this.add(asset(name, name.endsWith('.css') ? 'text/css; charset=utf-8' : 'text/javascript; charset=utf-8', Buffer.from(source)));
  }

  private add(a: Asset): void {
    this.byName.set(a.name, a);
    this.byPath.set(a.path, a);
  }

  /** The hashed path of an asset by its plain name. */
  url(name: string): string {
    const a = this.byName.get(name);
    if (!a) throw new Error(`no asset ${name}`);
    return a.path;
  }

  at(path: string): Asset | undefined {
    return this.byPath.get(path);
  }
}
