import { isIP } from 'node:net';
import { describe, expect, it } from 'vitest';
import { normalizeIp } from './client-ip.js';

describe('client addresses (issue 30, item 14)', () => {
  it('spells every form of one IPv4 address the same, so a limit keys one bucket', () => {
    for (const form of [
      '203.0.113.7',
      ' 203.0.113.7 ',
      '::ffff:203.0.113.7',
      '::FFFF:203.0.113.7',
      '::ffff:cb00:7107',
      '0:0:0:0:0:ffff:cb00:7107',
      '[::ffff:cb00:7107]',
      '[::ffff:cb00:7107]:443',
      '203.0.113.7:443',
      '203.000.113.007',
      '3405803783',
    ]) {
      expect(normalizeIp(form), form).toBe('203.0.113.7');
    }
    // Leading zeros are decimal, as a person (and every proxy's log) reads them, not octal: one bucket with 10.60.0.1.
    for (const form of ['10.60.0.1', '010.060.000.001', '010.60.0.1', '0010.060.0.01', '171704321', '[::ffff:10.60.0.1]']) {
      expect(normalizeIp(form), form).toBe('10.60.0.1');
    }
    // Two hex-written mapped addresses are two addresses, not one shared bucket.
    expect(normalizeIp('::ffff:cb00:7108')).toBe('203.0.113.8');
  });

  it('writes IPv6 canonically, with or without brackets, a port or a zone', () => {
    for (const form of ['2001:db8::1', '2001:0DB8:0000:0000:0000:0000:0000:0001', '[2001:db8::1]', '[2001:db8::1]:8443', 'fe80::1%eth0'.replace('fe80::1', '2001:db8::1')]) {
      expect(normalizeIp(form), form).toBe('2001:db8::1');
    }
  });

  it('leaves what is not an address as not an address (the caller falls back to the TCP peer)', () => {
    for (const form of ['example.com', 'unknown', 'user@203.0.113.7', '203.0.113.7/evil', '', '1.2.3.4.5']) {
      expect(isIP(normalizeIp(form)), form).toBe(0);
    }
  });
});
