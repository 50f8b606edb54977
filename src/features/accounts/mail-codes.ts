import { MailError } from '../../adapters/mail/types.js';
import type { Deps } from '../../deps.js';
import { DomainError } from '../../lib/errors.js';
import { CODE_TTL_MS } from './email-codes.js';

/** No relay configured: the same answer for every address. */
export function requireMail(deps: Pick<Deps, 'mail'>) {
  if (!deps.mail) throw new DomainError('mail_unavailable', 'E-mail is not available on this installation.');
  return deps.mail;
}

/**
 * Mails a one-time code. A relay's refusal becomes `mail_undeliverable` and its unreachability
 * `mail_unavailable`; the relay's own text goes to the log only.
 */
export async function mailCode(deps: Pick<Deps, 'mail' | 'log'>, to: string, code: string, requestId?: string): Promise<void> {
  const mail = requireMail(deps);
  const minutes = Math.round(CODE_TTL_MS / 60_000);
  try {
    await mail.send({
      to,
      subject: `Your Felis code: ${code}`,
      text: `Your Felis code is ${code}.\n\nIt expires in ${minutes} minutes. If you did not ask for it, ignore this message.\n`,
    });
  } catch (err) {
    if (!(err instanceof MailError)) throw err;
    deps.log.warn({ request_id: requestId, mail_error: err.kind, detail: err.detail }, 'mail not sent');
    throw err.kind === 'undeliverable'
      ? new DomainError('mail_undeliverable', 'The mail relay refused the message.')
      : new DomainError('mail_unavailable', 'The mail relay cannot be reached; try again later.');
  }
}
