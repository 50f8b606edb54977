import { randomBytes } from 'node:crypto';

/** Randomness comes from here so that a test can make codes and tokens predictable. */
export interface RandomSource {
  bytes(length: number): Uint8Array;
}

export const cryptoRandom: RandomSource = {
  bytes: (length) => new Uint8Array(randomBytes(length)),
};
