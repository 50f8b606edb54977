import type { Transporter } from 'nodemailer';
import type SMTPTransport from 'nodemailer/lib/smtp-transport/index.js';
import { MailError, type MailAdapter, type MailMessage } from './types.js';

/** Failures before the relay could answer: it is unreachable, not refusing. */
const CONNECTION_CODES = new Set(['ECONNECTION', 'ETIMEDOUT', 'EDNS', 'ESOCKET', 'ETLS', 'EPROXY']);

export interface SmtpMailOptions {
  /** `smtp://user:pass@host:port` or `smtps://…` (SMTP_URL), or transport options (tests). */
  transport: string | SMTPTransport.Options;
  from: string;
}

/**
 * SMTP through a relay with nodemailer, loaded at the first mail: about 40 modules and 20 MiB of
 * resident memory that a service sending no mail never needs (docs/notes/issue-29-speed.md).
 */
export function createSmtpMail(options: SmtpMailOptions): MailAdapter {
  let transporter: Promise<Transporter<SMTPTransport.SentMessageInfo>> | undefined;
  const transport = () =>
    (transporter ??= import('nodemailer').then(({ default: nodemailer }) =>
      nodemailer.createTransport(
        typeof options.transport === 'string'
          ? options.transport
          : { connectionTimeout: 10_000, greetingTimeout: 10_000, socketTimeout: 20_000, ...options.transport },
      ),
    ));
  return {
    kind: 'smtp',
    async send(message: MailMessage): Promise<void> {
      try {
        const info = await (await transport()).sendMail({ from: options.from, to: message.to, subject: message.subject, text: message.text });
        if (info.rejected.length > 0) throw new MailError('undeliverable', `relay rejected ${info.rejected.length} recipient(s): ${info.response}`);
      } catch (err) {
        if (err instanceof MailError) throw err;
        const e = err as { code?: string; responseCode?: number; response?: string; message?: string };
        const kind = e.responseCode === undefined && CONNECTION_CODES.has(e.code ?? '') ? 'unavailable' : 'undeliverable';
        throw new MailError(kind, `${e.code ?? 'error'} ${e.response ?? e.message ?? ''}`.trim());
      }
    },
    async close(): Promise<void> {
      (await transporter)?.close();
    },
  };
}
