export interface MailMessage {
  to: string;
  subject: string;
  text: string;
}

/**
 * Why a message was not sent. `unavailable`: the relay could not be reached (or none is set);
 * `undeliverable`: the relay answered and refused it. `detail` is for the log only, never a client.
 */
export class MailError extends Error {
  override name = 'MailError';
  constructor(
    readonly kind: 'unavailable' | 'undeliverable',
    readonly detail: string,
  ) {
    super(`mail ${kind}: ${detail}`);
  }
}

/** Outbound mail: SMTP through a relay, or the log (development). */
export interface MailAdapter {
  readonly kind: 'smtp' | 'log';
  /** Resolves once the relay accepted the message; throws MailError otherwise. */
  send(message: MailMessage): Promise<void>;
  close(): Promise<void>;
}
