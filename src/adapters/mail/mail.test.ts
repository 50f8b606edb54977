import { createServer } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../config.js';
import { captureLog } from '../../../test/helpers/log.js';
import { TEST_ENV } from '../../../test/helpers/app.js';
import { startSmtp, type TestSmtp } from '../../../test/helpers/smtp.js';
import { createMail } from './index.js';
import { createSmtpMail } from './smtp.js';
import { MailError } from './types.js';

describe('mail adapters', () => {
  let smtp: TestSmtp;
  beforeAll(async () => {
    smtp = await startSmtp({ refuse: (a) => a.endsWith('@refused.test') });
  });
  afterAll(async () => {
    await smtp.close();
  });

  it('delivers through a real SMTP server', async () => {
    await smtp.adapter().send({ to: 'alex@example.com', subject: 'Hello', text: 'Your Felis code is 123456.' });
    const last = smtp.received.at(-1)!;
    expect(last.to).toEqual(['alex@example.com']);
    expect(last.from).toBe('felis@felis.test');
    expect(last.raw).toContain('Subject: Hello');
    expect(smtp.lastCode('alex@example.com')).toBe('123456');
  });

  it('reports a refused recipient as undeliverable, keeping the relay text for the log', async () => {
    const err = await smtp.adapter().send({ to: 'x@refused.test', subject: 's', text: 't' }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(MailError);
    expect((err as MailError).kind).toBe('undeliverable');
    expect((err as MailError).detail).toContain('Mailbox unavailable');
  });

  it('reports an unreachable relay as unavailable', async () => {
    // A port that was just free: nothing listens there.
    const port = await new Promise<number>((resolve) => {
      const s = createServer().listen(0, '127.0.0.1', () => {
        const p = (s.address() as { port: number }).port;
        s.close(() => resolve(p));
      });
    });
    const mail = createSmtpMail({ transport: { host: '127.0.0.1', port, ignoreTLS: true, connectionTimeout: 2000 }, from: 'f@felis.test' });
    const err = await mail.send({ to: 'a@example.com', subject: 's', text: 't' }).catch((e: unknown) => e);
    expect((err as MailError).kind).toBe('unavailable');
  });

  it('chooses the transport from the configuration: log without a relay, smtp with SMTP_URL, none on request', () => {
    const log = captureLog().log;
    const { MAIL_TRANSPORT: _chosenByTests, ...defaults } = TEST_ENV;
    expect(createMail(loadConfig(defaults as NodeJS.ProcessEnv), log)?.kind).toBe('log');
    expect(createMail(loadConfig({ ...TEST_ENV, MAIL_TRANSPORT: 'none' } as NodeJS.ProcessEnv), log)).toBeUndefined();
    expect(createMail(loadConfig({ ...defaults, SMTP_URL: 'smtp://relay.example:25' } as NodeJS.ProcessEnv), log)?.kind).toBe('smtp');
    expect(createMail(loadConfig({ ...TEST_ENV, MAIL_TRANSPORT: 'log' } as NodeJS.ProcessEnv), log)?.kind).toBe('log');
    expect(() => loadConfig({ ...TEST_ENV, MAIL_TRANSPORT: 'smtp' } as NodeJS.ProcessEnv)).toThrow(/SMTP_URL/);
  });

  it('the log transport writes the message to the log', async () => {
    const captured = captureLog();
    const mail = createMail(loadConfig({ ...TEST_ENV, MAIL_TRANSPORT: 'log' } as NodeJS.ProcessEnv), captured.log)!;
    await mail.send({ to: 'dev@example.com', subject: 'Code', text: 'Your Felis code is 654321.' });
    expect(captured.lines().at(-1)).toMatchObject({ mail_to: 'dev@example.com', mail_text: 'Your Felis code is 654321.' });
  });
});
