import type { Logger } from '../lib/logger.js';

/**
 * The fields of the one wide line each answered request leaves (DESIGN.md: one line per request),
 * after the bindings of its route and method (face, method, route).
 */
export interface RequestLine {
  path: string;
  status: number;
  duration_ms: number;
  request_id: string;
  caller: string | undefined;
  user_id: string | undefined;
  /** A streamed answer: the bytes sent, and whether the client left before its end. */
  bytes?: number;
  aborted?: boolean;
}

/**
 * The request log of one route: a pino child logger per method, bound to face, method and route
 * once, so a line serialises only its own fields. The line's fields are fixed and never secret,
 * so the child drops the logger's wildcard redaction, which cost the hot path more than the rest
 * of the line (issue 11). 5xx lines are errors, the rest info.
 */
export class RouteLog {
  private readonly byMethod = new Map<string, Logger>();

  constructor(
    private readonly log: Logger,
    private readonly face: string,
    private readonly route: string,
  ) {}

  write(method: string, line: RequestLine): void {
    let child = this.byMethod.get(method);
    if (child === undefined) {
      child = this.log.child({ face: this.face, method, route: this.route }, { redact: [] });
      this.byMethod.set(method, child);
    }
    if (line.status >= 500) child.error(line, 'request');
    else child.info(line, 'request');
  }
}
