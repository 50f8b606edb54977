import { afterAll, beforeAll } from 'vitest';
import { SMTPServer } from 'smtp-server';
import { createSmtpMail } from '../../src/adapters/mail/smtp.js';
import type { MailAdapter } from '../../src/adapters/mail/types.js';

export interface ReceivedMail {
  from: string;
  to: string[];
  raw: string;
}

export interface TestSmtp {
  port: number;
  received: ReceivedMail[];
  /** A nodemailer transport (the real SMTP adapter) pointed at this server. */
  adapter(): MailAdapter;
  /** The six-digit code of the last message to `to`. */
  lastCode(to: string): string | undefined;
  close(): Promise<void>;
}

/** A real SMTP server on 127.0.0.1:0. Recipients matching `refuse` get a 550 at RCPT TO. */
export async function startSmtp(options: { refuse?: (address: string) => boolean } = {}): Promise<TestSmtp> {
  const received: ReceivedMail[] = [];
  const server = new SMTPServer({
    authOptional: true,
    disabledCommands: ['STARTTLS'],
    logger: false,
    onRcptTo(address, _session, callback) {
      if (options.refuse?.(address.address)) {
        const err = new Error('5.1.1 Mailbox unavailable: user unknown at relay-internal.example') as Error & { responseCode: number };
        err.responseCode = 550;
        return callback(err);
      }
      callback();
    },
    onData(stream, session, callback) {
      const chunks: Buffer[] = [];
      stream.on('data', (c: Buffer) => chunks.push(c));
      stream.on('end', () => {
        received.push({
          from: session.envelope.mailFrom ? session.envelope.mailFrom.address : '',
          to: session.envelope.rcptTo.map((r) => r.address),
          raw: Buffer.concat(chunks).toString('utf8'),
        });
        callback();
      });
    },
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.server.address() as { port: number }).port;
  return {
    port,
    received,
    adapter: () => createSmtpMail({ transport: { host: '127.0.0.1', port, secure: false, ignoreTLS: true }, from: 'felis@felis.test' }),
    lastCode(to) {
      const mail = [...received].reverse().find((m) => m.to.includes(to));
      return mail?.raw.match(/code is (\d{6})/)?.[1];
    },
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

/** Registers hooks that start one SMTP server for the file and close it afterwards. */
export function useTestSmtp(): () => TestSmtp {
  let smtp: TestSmtp | undefined;
  beforeAll(async () => {
    smtp = await startSmtp();
  });
  afterAll(async () => {
    await smtp?.close();
  });
  return () => {
    if (!smtp) throw new Error('useTestSmtp(): the server is started in beforeAll');
    return smtp;
  };
}
