import { describe, expect, it } from 'vitest';
import { sameHost } from '../../src/http/cross-site.js';

describe('Origin against Host', () => {
  it('matches the same host whatever the case, a trailing dot, or a default port written out', () => {
    for (const [origin, host] of [
      ['https://panel.felis.test', 'panel.felis.test'],
      ['https://panel.felis.test', 'panel.felis.test:443'],
      ['https://Panel.Felis.Test', 'panel.felis.test.'],
      ['https://panel.felis.test.', 'PANEL.felis.test'],
      ['http://localhost', 'localhost:80'],
      ['http://localhost:8080', 'localhost:08080'],
      ['http://[::1]:8080', '[::1]:8080'],
      ['http://127.0.0.1:40000', '127.0.0.1:40000'],
    ]) {
      expect(sameHost(origin!, host!), `${origin} vs ${host}`).toBe(true);
    }
  });

  it('refuses another host, another port, a suffix trick, opaque origins and a malformed Host', () => {
    for (const [origin, host] of [
      ['https://evil.example', 'panel.felis.test'],
      ['https://panel.felis.test.evil.example', 'panel.felis.test'],
      ['https://evil-panel.felis.test', 'panel.felis.test'],
      ['https://panel.felis.test:8443', 'panel.felis.test'],
      ['https://panel.felis.test', 'panel.felis.test:8443'],
      ['http://panel.felis.test', 'panel.felis.test:443'],
      ['null', 'panel.felis.test'],
      ['file://', 'panel.felis.test'],
      ['ftp://panel.felis.test', 'panel.felis.test'],
      ['https://panel.felis.test', 'panel.felis.test:443:443'],
      ['https://panel.felis.test', 'user@panel.felis.test'],
      ['https://panel.felis.test', ''],
    ]) {
      expect(sameHost(origin!, host!), `${origin} vs ${host}`).toBe(false);
    }
  });
});
