import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { UpdateComponentRecord } from '../../db/schema/operations.js';
import type { RegistryAdapter } from '../../adapters/registry/types.js';
import { parseImageRef } from '../../adapters/registry/types.js';
import semver from 'semver';

/**
 * `1.4.2` against `1.10.0`, by semver's precedence (a pre-release sorts before its release);
 * a loose version (`v4.1`, `1.21`) is coerced to the semver it names.
 */
export function compareVersions(a: string, b: string): number {
  return semver.compare(asSemver(a), asSemver(b));
}

function asSemver(version: string): semver.SemVer {
  return semver.parse(version, { loose: true }) ?? semver.coerce(version, { includePrerelease: true }) ?? new semver.SemVer('0.0.0');
}

/**
 * A dependency whose range stays on one minor line (`~5.9`) or one version (`1.4.0`) is held
 * there on purpose (TypeScript stays on 5.x until its native 7.x is weighed): it is reported
 * `pinned`, never offered as an update.
 */
export function isPinnedRange(range: string): boolean {
  return range.startsWith('~') || /^\d+\.\d+\.\d+$/.test(range);
}

export interface NpmCheckOptions {
  /** The package root: its package.json and node_modules. */
  root: string;
  /** The registry root, `https://registry.npmjs.org` unless told otherwise. */
  registryUrl: string;
  fetch?: typeof fetch;
  timeoutMs?: number;
}

async function installedVersion(root: string, name: string): Promise<string> {
  const manifest = JSON.parse(await readFile(join(root, 'node_modules', name, 'package.json'), 'utf8')) as { version?: unknown };
  if (typeof manifest.version !== 'string') throw new Error('no version in its package.json');
  return manifest.version;
}

async function latestVersion(options: NpmCheckOptions, name: string): Promise<string> {
  const url = `${options.registryUrl.replace(/\/+$/, '')}/${name.replace('/', '%2f')}`;
  const res = await (options.fetch ?? fetch)(url, {
    headers: { Accept: 'application/vnd.npm.install-v1+json' },
    signal: AbortSignal.timeout(options.timeoutMs ?? 10_000),
  });
  if (!res.ok) throw new Error(`the registry answered ${res.status}`);
  const latest = ((await res.json()) as { 'dist-tags'?: { latest?: unknown } })['dist-tags']?.latest;
  if (typeof latest !== 'string') throw new Error('the registry names no latest version');
  return latest;
}

const reason = (err: unknown) => (err instanceof Error ? err.message : String(err)).slice(0, 200);

/** One component per production dependency of the service, against the npm registry. */
export async function checkDependencies(options: NpmCheckOptions): Promise<UpdateComponentRecord[]> {
  const pkg = JSON.parse(await readFile(join(options.root, 'package.json'), 'utf8')) as { dependencies?: Record<string, string> };
  return Promise.all(
    Object.entries(pkg.dependencies ?? {}).map(async ([name, range]): Promise<UpdateComponentRecord> => {
      let current: string;
      try {
        current = await installedVersion(options.root, name);
      } catch (err) {
        return { name, state: 'unreadable', error: `installed version: ${reason(err)}` };
      }
      if (isPinnedRange(range)) return { name, state: 'pinned', current, note: `held at ${range} by policy` };
      try {
        const latest = await latestVersion(options, name);
        return compareVersions(latest, current) > 0
          ? { name, state: 'available', current, latest, selector: `--dependency=${name}` }
          : { name, state: 'current', current };
      } catch (err) {
        return { name, state: 'unknown', current, error: `release feed: ${reason(err)}` };
      }
    }),
  );
}

/**
 * The service's own image (`FELIS_IMAGE`, `registry/felis:<version>`): an update is available when
 * the registry's `latest` tag names another image than the running version's tag.
 */
export async function checkOwnImage(registry: RegistryAdapter, image: string | undefined): Promise<UpdateComponentRecord> {
  const ref = image === undefined ? undefined : parseImageRef(image);
  if (!ref?.tag) return { name: 'image', state: 'unknown', error: 'FELIS_IMAGE names no tagged image of the service' };
  if (registry.kind === 'static') return { name: 'image', state: 'unknown', current: ref.tag, error: 'no REGISTRY_URL to ask' };
  try {
    const [running, latest] = await Promise.all([registry.resolve(ref), registry.resolve({ ...ref, tag: 'latest', digest: undefined })]);
    return running === latest
      ? { name: 'image', state: 'current', current: ref.tag }
      : { name: 'image', state: 'available', current: ref.tag, latest: `latest@${latest}`, selector: '--image' };
  } catch (err) {
    return { name: 'image', state: 'unknown', current: ref.tag, error: `registry: ${reason(err)}` };
  }
}
