import { createHmac } from 'node:crypto';
import { request as httpRequest } from 'node:http';
import { request as httpsRequest } from 'node:https';
import type { BlockList } from 'node:net';
import { SERVICE_VERSION } from '../../version.js';
import { checkedLookup, ForbiddenDestinationError, isForbidden } from './destinations.js';

export const SIGNATURE_HEADER = 'x-felis-signature';
export const TIMESTAMP_HEADER = 'x-felis-timestamp';
export const DELIVERY_HEADER = 'x-felis-delivery';
export const EVENT_HEADER = 'x-felis-event';
/** How long one attempt may take, connection to last byte. */
export const ATTEMPT_TIMEOUT_MS = 10_000;
/** At most this much of an answer is read (and a short part of it kept as the error). */
const MAX_ANSWER_BYTES = 64 * 1024;

/**
 * `sha256=<hex>` of HMAC-SHA256 over `<timestamp>.<body>` with the endpoint's secret: the receiver
 * recomputes it from the two headers and the raw body, and refuses an old timestamp (a replay).
 */
export function signature(secret: string, timestamp: string, body: string): string {
  return `sha256=${createHmac('sha256', secret).update(`${timestamp}.${body}`).digest('hex')}`;
}

interface EventPayload {
  id: string;
  type: string;
  at: string;
  summary: string;
  subject: { kind: string; id: string };
  data: Record<string, unknown>;
}

const COLORS: Record<string, number> = { failed: 0xd83c3e, corrupt: 0xd83c3e, gave_up: 0xd83c3e, blocked: 0xe67e22, test: 0x5865f2 };

/** A Discord-compatible body: a content line and one embed (Discord reads these fields and ignores the headers). */
export function discordBody(payload: EventPayload): Record<string, unknown> {
  const tone = Object.keys(COLORS).find((k) => payload.type.includes(k));
  return {
    content: payload.summary.slice(0, 2000),
    embeds: [
      {
        title: payload.type,
        description: payload.summary.slice(0, 4096),
        timestamp: payload.at,
        color: tone ? COLORS[tone] : 0x2ecc71,
        fields: [
          { name: payload.subject.kind, value: payload.subject.id.slice(0, 1024), inline: true },
          { name: 'event', value: payload.id, inline: true },
        ],
      },
    ],
  };
}

export interface Attempt {
  ok: boolean;
  status?: number;
  error?: string;
  /** The destination is forbidden: no later attempt can succeed. */
  forbidden?: boolean;
}

export interface Delivery {
  id: string;
  url: string;
  secret: string;
  format: 'json' | 'discord';
  eventType: string;
  payload: Record<string, unknown>;
}

/** One attempt: POST the body, signed, to the endpoint; 2xx is delivered. Redirects are not followed. */
export function sendOnce(delivery: Delivery, now: Date, forbidden: BlockList): Promise<Attempt> {
  const url = new URL(delivery.url);
  const host = url.hostname.replace(/^\[|\]$/g, '');
  if (isForbidden(forbidden, host)) return Promise.resolve({ ok: false, forbidden: true, error: 'the address is in a forbidden network' });
  const body = JSON.stringify(delivery.format === 'discord' ? discordBody(delivery.payload as unknown as EventPayload) : delivery.payload);
  const timestamp = String(Math.floor(now.getTime() / 1000));
  const headers = {
    'content-type': 'application/json',
    'content-length': String(Buffer.byteLength(body)),
    'user-agent': `Felis-Webhooks/${SERVICE_VERSION}`,
    [EVENT_HEADER]: delivery.eventType,
    [DELIVERY_HEADER]: delivery.id,
    [TIMESTAMP_HEADER]: timestamp,
    [SIGNATURE_HEADER]: signature(delivery.secret, timestamp, body),
  };
  const request = url.protocol === 'https:' ? httpsRequest : httpRequest;
  return new Promise<Attempt>((resolve) => {
    let settled = false;
    const done = (attempt: Attempt) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      resolve(attempt);
    };
    const req = request(url, { method: 'POST', headers, lookup: checkedLookup(forbidden), agent: false }, (res) => {
      const status = res.statusCode ?? 0;
      let kept = '';
      let read = 0;
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => {
        read += chunk.length;
        if (kept.length < 200) kept += chunk.slice(0, 200 - kept.length);
        if (read > MAX_ANSWER_BYTES) res.destroy();
      });
      const finish = () => done(status >= 200 && status < 300 ? { ok: true, status } : { ok: false, status, error: `answered ${status}${kept ? `: ${kept.trim()}` : ''}` });
      res.on('end', finish);
      res.on('close', finish);
      res.on('error', finish);
    });
    const timer = setTimeout(() => {
      req.destroy();
      done({ ok: false, error: `no answer within ${ATTEMPT_TIMEOUT_MS / 1000} s` });
    }, ATTEMPT_TIMEOUT_MS);
    timer.unref();
    req.on('error', (err) => {
      const forbiddenErr = err instanceof ForbiddenDestinationError;
      done({ ok: false, forbidden: forbiddenErr, error: forbiddenErr ? err.message : `${(err as NodeJS.ErrnoException).code ?? 'error'}: ${err.message}`.slice(0, 300) });
    });
    req.end(body);
  });
}
