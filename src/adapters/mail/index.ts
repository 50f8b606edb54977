import type { Config } from '../../config.js';
import type { Logger } from '../../lib/logger.js';
import { createLogMail } from './log.js';
import { createSmtpMail } from './smtp.js';
import type { MailAdapter } from './types.js';

export type { MailAdapter, MailMessage } from './types.js';
export { MailError } from './types.js';

/** The configured mail transport, or undefined when none is: the e-mail doors then answer mail_unavailable. */
export function createMail(config: Config, log: Logger): MailAdapter | undefined {
  switch (config.mailTransport) {
    case 'smtp':
      return createSmtpMail({ transport: config.smtpUrl!, from: config.mailFrom });
    case 'log':
      return createLogMail(log);
    case 'none':
      return undefined;
  }
}
