import type { RandomSource } from '../../lib/random.js';
import { sha256Hex } from '../../lib/secrets.js';

/** No 0/O, 1/I/L: a code read off a game screen is typed back without guessing. */
export const CODE_ALPHABET = 'ABCDEFGHJKMNPQRSTUVWXYZ23456789';
export const CODE_LENGTH = 8;
/** Link, bind and migration codes (api-extensions, lifetimes). */
export const LINK_CODE_TTL_MS = 10 * 60 * 1000;

const CODE_PATTERN = new RegExp(`^[${CODE_ALPHABET}]{${CODE_LENGTH}}$`);
/** Bytes at or above this are redrawn, so every character is equally likely. */
const UNBIASED_LIMIT = 256 - (256 % CODE_ALPHABET.length);

export function generateLinkCode(random: RandomSource): string {
  let code = '';
  while (code.length < CODE_LENGTH) {
    for (const byte of random.bytes(CODE_LENGTH * 2)) {
      if (byte < UNBIASED_LIMIT && code.length < CODE_LENGTH) code += CODE_ALPHABET[byte % CODE_ALPHABET.length];
    }
  }
  return code;
}

/** A typed code as it is stored: trimmed and upper-cased; undefined when it cannot be one of ours. */
export function normalizeLinkCode(typed: string): string | undefined {
  const code = typed.trim().toUpperCase();
  return CODE_PATTERN.test(code) ? code : undefined;
}

export const linkCodeHash = (code: string): string => sha256Hex(`link-code:${code}`);
