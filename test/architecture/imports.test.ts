import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { basename, dirname, join, relative, resolve, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';

/**
 * The shape of the service (docs/architecture.md), checked on every build: the layers import
 * only downwards, a feature is entered only through its front door (`index.ts`), features form
 * no cycle, and the Kubernetes client stays inside the cluster adapter. Tests are exempt: a
 * feature's tests may reach into it.
 */

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../..');
const SRC = join(ROOT, 'src');
const FEATURES = join(SRC, 'features');

function sourceFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) return sourceFiles(path);
    return /\.tsx?$/.test(name) && !/\.test\.tsx?$/.test(name) ? [path] : [];
  });
}

interface Import {
  from: string;
  /** A file of the project, or a package name. */
  to: string;
  local: boolean;
}

function importsOf(file: string): Import[] {
  const { importedFiles } = ts.preProcessFile(readFileSync(file, 'utf8'), true, true);
  return importedFiles.map(({ fileName }) => {
    if (!fileName.startsWith('.')) return { from: file, to: fileName.startsWith('@') ? fileName.split('/').slice(0, 2).join('/') : fileName.split('/')[0]!, local: false };
    const to = resolve(dirname(file), fileName.replace(/\.js$/, '.ts'));
    return { from: file, to: existsSync(to) ? to : `${to}x`, local: true };
  });
}

const FILES = sourceFiles(SRC);
const IMPORTS = FILES.flatMap(importsOf);
const rel = (path: string) => relative(ROOT, path).split(sep).join('/');

/** The feature a file belongs to: the nearest folder under src/features that has an index.ts. */
function featureOf(file: string): string | undefined {
  if (!file.startsWith(FEATURES + sep)) return undefined;
  for (let dir = dirname(file); dir.startsWith(FEATURES + sep); dir = dirname(dir)) {
    if (existsSync(join(dir, 'index.ts'))) return dir;
  }
  return join(FEATURES, relative(FEATURES, file).split(sep)[0]!);
}

/** The layer a file is in: its first folder under src/, or the file itself at the top. */
function layerOf(file: string): string {
  const [first] = relative(SRC, file).split(sep);
  return first!.replace(/\.tsx?$/, '');
}

/** What each layer may import (besides itself and packages). */
const MAY_IMPORT: Record<string, readonly string[]> = {
  lib: [],
  version: [],
  config: ['lib'],
  db: ['lib', 'config'],
  coordination: ['lib', 'db'],
  adapters: ['lib', 'config'],
  http: ['lib', 'config', 'version'],
  runtime: ['lib', 'http'],
  // The game listener knows the service only through the internal face's contract (over HTTP).
  'game-listener': ['lib'],
  features: ['lib', 'config', 'version', 'db', 'coordination', 'adapters', 'http', 'deps'],
  deps: ['lib', 'config', 'db', 'coordination', 'adapters', 'http'],
  app: ['lib', 'config', 'version', 'http', 'features', 'deps', 'web'],
  // The pages: the public HTTP API only (called in-process), never a feature.
  web: ['lib', 'config', 'http'],
  'startup-failure': ['lib', 'config', 'db'],
  service: ['lib', 'config', 'db', 'coordination', 'adapters', 'http', 'runtime', 'game-listener', 'features', 'app', 'deps', 'startup-failure'],
  main: ['lib', 'config', 'service', 'startup-failure'],
  cli: ['lib', 'config', 'version', 'db', 'coordination', 'adapters', 'features', 'service', 'deps', 'startup-failure'],
};

const SCHEMA = join(SRC, 'db', 'schema');

/** The feature a file belongs to at the top: its folder directly under src/features. */
const topFeatureOf = (file: string) => relative(FEATURES, file).split(sep)[0];
const topFeatureDir = (file: string) => join(FEATURES, topFeatureOf(file) ?? '');

/** Which feature owns each schema file of src/db/schema (its tables are that feature's alone). */
const TABLE_OWNER: Record<string, string> = {
  accounts: 'accounts',
  audit: 'audit',
  auth: 'auth',
  builds: 'builds',
  console: 'console',
  images: 'images',
  linking: 'linking',
  migration: 'migration',
  nodes: 'nodes',
  notifications: 'notifications',
  'op-login': 'op-login',
  operations: 'operations',
  passkeys: 'passkeys',
  schedules: 'schedules',
  servers: 'servers',
  settings: 'runtime-settings',
  submissions: 'builds',
  usage: 'fleet',
  verifier: 'verifier',
  'world-files': 'worlds',
  worlds: 'worlds',
};

/**
 * Module-level WeakMap registries that still hold state nobody starts or stops (issue 39): each is
 * to become a field of its module, made by the composition root. Remove a line when it goes.
 */
const WEAKMAP_REGISTRIES_TODAY: string[] = [];

describe('the shape of the service', () => {
  it('knows every layer it finds', () => {
    expect([...new Set(FILES.map(layerOf))].filter((layer) => !(layer in MAY_IMPORT))).toEqual([]);
  });

  it('imports only downwards between layers', () => {
    const wrong = IMPORTS.filter((i) => i.local && i.to.startsWith(SRC + sep))
      .filter((i) => layerOf(i.from) !== layerOf(i.to) && !MAY_IMPORT[layerOf(i.from)]?.includes(layerOf(i.to)))
      .map((i) => `${rel(i.from)} -> ${rel(i.to)}`);
    expect(wrong).toEqual([]);
  });

  it('enters a feature only through its front door, index.ts', () => {
    const wrong = IMPORTS.filter((i) => i.local)
      .filter((i) => {
        const target = featureOf(i.to);
        return target !== undefined && featureOf(i.from) !== target && i.to !== join(target, 'index.ts');
      })
      .map((i) => `${rel(i.from)} -> ${rel(i.to)}`);
    expect(wrong).toEqual([]);
  });

  it('has no import cycle between features', () => {
    const edges = new Map<string, Set<string>>();
    for (const i of IMPORTS) {
      const [a, b] = [featureOf(i.from), i.local ? featureOf(i.to) : undefined];
      if (a && b && a !== b) edges.set(a, (edges.get(a) ?? new Set()).add(b));
    }
    const cycles: string[] = [];
    const state = new Map<string, 'open' | 'done'>();
    const path: string[] = [];
    const visit = (node: string) => {
      state.set(node, 'open');
      path.push(node);
      for (const next of edges.get(node) ?? []) {
        if (state.get(next) === 'open') cycles.push([...path.slice(path.indexOf(next)), next].map((f) => rel(f).replace('src/features/', '')).join(' -> '));
        else if (!state.has(next)) visit(next);
      }
      path.pop();
      state.set(node, 'done');
    };
    for (const node of edges.keys()) if (!state.has(node)) visit(node);
    expect(cycles).toEqual([]);
  });

  it('keeps the infrastructure free of feature types: src/deps.ts and the layers below it name no feature', () => {
    const infrastructure = new Set(['lib', 'version', 'config', 'db', 'coordination', 'adapters', 'http', 'runtime', 'deps']);
    const wrong = IMPORTS.filter((i) => i.local && infrastructure.has(layerOf(i.from)) && i.to.startsWith(FEATURES + sep)).map((i) => `${rel(i.from)} -> ${rel(i.to)}`);
    expect(wrong).toEqual([]);
  });

  it('reads and writes a table only in the feature that owns it: another feature asks the owner\'s API', () => {
    const wrong = IMPORTS.filter((i) => i.local && i.to.startsWith(SCHEMA + sep) && i.from.startsWith(FEATURES + sep))
      .filter((i) => TABLE_OWNER[basename(i.to, '.ts')] !== topFeatureOf(i.from))
      .map((i) => `${rel(i.from)} -> ${basename(i.to, '.ts')}`);
    expect(wrong).toEqual([]);
  });

  it('keeps no module-level WeakMap registry in a feature (today\'s exceptions listed, to be removed)', () => {
    const found = FILES.filter((f) => f.startsWith(FEATURES + sep) && /^(?:export )?(?:const|let) \w+ = new WeakMap\b/m.test(readFileSync(f, 'utf8'))).map(rel);
    expect(found.filter((f) => !WEAKMAP_REGISTRIES_TODAY.includes(f))).toEqual([]);
    expect(WEAKMAP_REGISTRIES_TODAY.filter((f) => !found.includes(f))).toEqual([]);
  });

  it('builds every feature as a module: each has module.ts, and the routes and tasks are mounted and started only from the modules', () => {
    const features = readdirSync(FEATURES).filter((name) => existsSync(join(FEATURES, name, 'index.ts')));
    // doors, audit and runtime-settings offer functions only: no route, no task (audit's one made
    // object, the front door's change recorder, is made by its createAuditParts).
    const withoutModule = features.filter((name) => !existsSync(join(FEATURES, name, 'module.ts')) && !['doors', 'audit', 'runtime-settings'].includes(name));
    expect(withoutModule).toEqual([]);
    // The faces and the task list name no feature's route table or task maker: they take the modules'.
    const handPicked = ['app/external.ts', 'app/internal.ts', 'service.ts'].flatMap((file) =>
      [...readFileSync(join(SRC, file), 'utf8').matchAll(/import \{([^}]*)\} from '\.\.?\/(?:\.\.\/)?features\/[^']+'/g)]
        .flatMap((m) => m[1]!.split(',').map((name) => name.trim()))
        .filter((name) => /(?:Routes|Tasks?)$/.test(name))
        .map((name) => `${file}: ${name}`),
    );
    expect(handPicked).toEqual([]);
  });

  it('keeps the run-time settings below every feature: they import none', () => {
    // Read by accounts, servers, the verifier, linking, builds and the settings pages above them.
    const bottom = [join(FEATURES, 'runtime-settings')];
    const wrong = IMPORTS.filter((i) => i.local && bottom.includes(topFeatureDir(i.from)) && i.to.startsWith(FEATURES + sep) && topFeatureDir(i.to) !== topFeatureDir(i.from)).map(
      (i) => `${rel(i.from)} -> ${rel(i.to)}`,
    );
    expect(wrong).toEqual([]);
  });

  it('keeps the Kubernetes client inside the cluster adapter', () => {
    const wrong = IMPORTS.filter((i) => !i.local && i.to === '@kubernetes/client-node' && !i.from.startsWith(join(SRC, 'adapters', 'cluster') + sep)).map((i) => rel(i.from));
    expect(wrong).toEqual([]);
  });
});
