/** The front door of accounts' e-mailed one-time codes: issuing, checking and mailing them. */
export {
  CODE_MAX_ATTEMPTS,
  CODE_TTL_MS,
  DOOR_FAILURE_WINDOW_MS,
  checkCode,
  codeHeld,
  codeHold,
  codeMatches,
  codeRefused,
  dropCode,
  generateCode,
  invalidCode,
  issueCode,
  resendWait,
} from './email-codes.js';
export { mailCode, requireMail, sendCode } from './mail-codes.js';
