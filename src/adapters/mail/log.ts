import type { Logger } from '../../lib/logger.js';
import type { MailAdapter, MailMessage } from './types.js';

/**
 * Development mail (MAIL_TRANSPORT=log): each message is written to the log instead of being sent,
 * so a developer without a relay can read the code. Never choose it in production: the log then
 * holds sign-in codes.
 */
export function createLogMail(log: Logger): MailAdapter {
  return {
    kind: 'log',
    async send(message: MailMessage): Promise<void> {
      log.warn({ mail_to: message.to, mail_subject: message.subject, mail_text: message.text }, 'mail (log transport, not sent)');
    },
    async close(): Promise<void> {},
  };
}
