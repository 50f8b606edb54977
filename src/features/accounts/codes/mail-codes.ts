import { MailError } from '../../../adapters/mail/types.js';
import type { EmailCodePurpose } from '../../../db/schema/accounts.js';
import type { Deps } from '../../../deps.js';
import { DomainError } from '../../../lib/errors.js';
import { CODE_TTL_MS, dropCode, issueCode } from './email-codes.js';

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

/**
 * Stores a fresh code for one purpose of the account (superseding any earlier one) and mails it;
 * returns when it expires. A code the relay did not take is forgotten, so that its cooldown does
 * not hold the retry. The caller has checked `codeHold` first.
 */
export async function sendCode(
  deps: Pick<Deps, 'database' | 'random' | 'mail' | 'log'>,
  input: { userId: string; purpose: EmailCodePurpose; email: string; now: Date; requestId?: string },
): Promise<Date> {
  const db = deps.database.db;
  const { code, expiresAt } = await issueCode(db, { ...input, random: deps.random });
  try {
    await mailCode(deps, input.email, code, input.requestId);
  } catch (err) {
    await dropCode(db, input.userId, input.purpose);
    throw err;
  }
  return expiresAt;
}
