import { randomUUID } from 'node:crypto';
import semver from 'semver';
import type { ContextContents } from './context-scan.js';

/**
 * The simulated scanner: a Trivy-format report (SchemaVersion 2) and a CycloneDX SBOM of a
 * context, made the way Trivy would report it: every jar as a language package, the versions of a
 * few well-known vulnerable libraries as vulnerabilities, and secrets found by Trivy's rule ids.
 */

interface KnownVulnerability {
  /** Jar file name pattern; group 1 is the version. */
  jar: RegExp;
  package: string;
  id: string;
  severity: string;
  title: string;
  /** Fixed in this version (absent: no fix). */
  fixed?: string;
  affected: (version: string) => boolean;
}

/** A jar's version below `limit`, by semver precedence (`2.14` and `2.0-beta9` coerced to the semver they name). */
const below = (limit: string) => (version: string) => {
  const coerced = semver.coerce(version, { includePrerelease: true });
  return coerced !== null && semver.lt(coerced, limit);
};

const KNOWN: KnownVulnerability[] = [
  {
    jar: /(?:^|\/)log4j-core-(\d[\w.-]*)\.jar$/,
    package: 'org.apache.logging.log4j:log4j-core',
    id: 'CVE-2021-44228',
    severity: 'CRITICAL',
    title: 'log4j-core: Remote code execution in Log4j 2.x when logs contain an attacker-controlled string value',
    fixed: '2.15.0',
    affected: below('2.15.0'),
  },
  {
    jar: /(?:^|\/)gson-(\d[\w.-]*)\.jar$/,
    package: 'com.google.code.gson:gson',
    id: 'CVE-2022-25647',
    severity: 'HIGH',
    title: 'gson: writeReplace() method can lead to denial of service',
    fixed: '2.8.9',
    affected: below('2.8.9'),
  },
  {
    jar: /(?:^|\/)snakeyaml-(\d[\w.-]*)\.jar$/,
    package: 'org.yaml:snakeyaml',
    id: 'CVE-2022-1471',
    severity: 'HIGH',
    title: 'SnakeYaml: Constructor Deserialization Remote Code Execution',
    affected: below('2.0.0'),
  },
];

const SECRET_RULES = [
  { id: 'aws-access-key-id', category: 'AWS', severity: 'CRITICAL', title: 'AWS Access Key ID', pattern: /\b(?:AKIA|ASIA)[0-9A-Z]{16}\b/ },
  { id: 'private-key', category: 'AsymmetricPrivateKey', severity: 'HIGH', title: 'Asymmetric Private Key', pattern: /-----BEGIN[ A-Z0-9_-]{0,100}PRIVATE KEY-----/ },
  { id: 'github-pat', category: 'GitHub', severity: 'CRITICAL', title: 'GitHub Personal Access Token', pattern: /\bghp_[0-9a-zA-Z]{36}\b/ },
];

const jarVersion = (path: string) => /-(\d[\w.]*)\.jar$/.exec(path)?.[1];
const jarName = (path: string) => (path.split('/').pop() ?? path).replace(/(-\d[\w.]*)?\.jar$/, '');

export function standInReport(imageRef: string, contents: ContextContents, createdAt: Date) {
  const jars = contents.files.filter((f) => f.path.endsWith('.jar'));
  const results: Array<Record<string, unknown>> = [];
  if (jars.length > 0) {
    results.push({
      Target: 'Java',
      Class: 'lang-pkgs',
      Type: 'jar',
      Packages: jars.map((j) => ({ Name: jarName(j.path), Version: jarVersion(j.path) ?? '', FilePath: j.path })),
      Vulnerabilities: jars.flatMap((j) =>
        KNOWN.flatMap((k) => {
          const version = k.jar.exec(j.path)?.[1];
          if (!version || !k.affected(version)) return [];
          return [
            {
              VulnerabilityID: k.id,
              PkgName: k.package,
              PkgPath: j.path,
              InstalledVersion: version,
              ...(k.fixed ? { FixedVersion: k.fixed, Status: 'fixed' } : { Status: 'affected' }),
              Severity: k.severity,
              Title: k.title,
              PrimaryURL: `https://avd.aquasec.com/nvd/${k.id.toLowerCase()}`,
            },
          ];
        }),
      ),
    });
  }
  for (const [path, text] of contents.texts) {
    const secrets = SECRET_RULES.flatMap((rule) => {
      const match = rule.pattern.exec(text);
      if (!match) return [];
      const line = text.slice(0, match.index).split('\n').length;
      return [{ RuleID: rule.id, Category: rule.category, Severity: rule.severity, Title: rule.title, StartLine: line, EndLine: line, Match: '*****' }];
    });
    if (secrets.length > 0) results.push({ Target: `/${path}`, Class: 'secret', Secrets: secrets });
  }
  return {
    SchemaVersion: 2,
    CreatedAt: createdAt.toISOString(),
    ArtifactName: imageRef,
    ArtifactType: 'container_image',
    Metadata: { ImageConfig: { architecture: 'amd64', os: 'linux' } },
    Results: results,
  };
}

export function standInSbom(imageRef: string, contents: ContextContents, createdAt: Date) {
  return {
    bomFormat: 'CycloneDX',
    specVersion: '1.5',
    serialNumber: `urn:uuid:${randomUUID()}`,
    version: 1,
    metadata: { timestamp: createdAt.toISOString(), component: { type: 'container', name: imageRef } },
    components: contents.files
      .filter((f) => f.path.endsWith('.jar'))
      .map((j) => ({ type: 'library', name: jarName(j.path), version: jarVersion(j.path) ?? '', properties: [{ name: 'aquasecurity:trivy:FilePath', value: j.path }] })),
  };
}
