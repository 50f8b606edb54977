import { randomUUID } from 'node:crypto';

/** Inbound ids we keep: 1 to 128 of letters, digits, `-`, `_` and `=`; they go on the wire as they are. */
const REQUEST_ID = /^[\w\-=]{1,128}$/;

/** The request id of an answer: a well-formed inbound one (contract section 7), else a fresh one. */
export function requestIdFor(inbound: string | undefined): string {
  return inbound !== undefined && REQUEST_ID.test(inbound) ? inbound : randomUUID();
}
