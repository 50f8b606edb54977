import type { ContentfulStatusCode } from 'hono/utils/http-status';
import { DomainError, type ErrorCode } from '../lib/errors.js';

/**
 * The edge's one table: the HTTP status of every error code (contract section 7 and the status
 * table of api-extensions). A code a feature adds to src/lib/errors.ts must be given its status
 * here, or the type check fails.
 */
export const ERROR_STATUS = {
  bad_request: 400,
  unauthorized: 401,
  forbidden: 403,
  not_found: 404,
  method_not_allowed: 405,
  too_large: 413,
  unsupported_media_type: 415,
  internal: 500,
  unavailable: 503,
  wrong_caller: 403,
  setup_required: 403,
  cross_site: 403,
  conflict: 409,
  precondition_failed: 412,
  image_not_in_registry: 400,
  registry_unavailable: 503,
  maintenance_in_progress: 409,
  start_failed: 409,
  at_capacity: 503,
  not_linked: 404,
  account_retired: 409,
  protected_admin: 409,
  not_admin: 403,
  op_login_not_found: 404,
  op_login_mismatch: 409,
  op_login_invalid: 400,
  bad_name: 400,
  bad_path: 400,
  not_stopped: 409,
  not_running: 409,
  file_changed: 409,
  rate_limited: 429,
  cooldown: 429,
  quota_exceeded: 403,
  already_claimed: 409,
  link_required: 412,
  image_not_whitelisted: 400,
  local_auth_disabled: 403,
  no_passkey: 400,
  passkey_login_failed: 400,
  passkey_login_invalid: 400,
  passkey_unavailable: 503,
  passkey_challenge_invalid: 400,
  invalid_attestation: 400,
  passkey_already_bound: 409,
  staff_reauth: 403,
  no_step_up_factor: 409,
  otp_resend_cooldown: 429,
  too_many_challenges: 429,
  too_many_attempts: 429,
  invalid_code: 400,
  invalid_credentials: 401,
  staff_account: 403,
  account_disabled: 403,
  reauth_required: 403,
  mail_undeliverable: 502,
  mail_unavailable: 503,
  backup_store_full: 507,
  volume_full: 507,
  uploads_full: 507,
  upload_offset_mismatch: 409,
  upload_busy: 409,
  console_unavailable: 503,
  luckperms_missing: 409,
  digest_mismatch: 400,
  request_timeout: 408,
  expectation_failed: 417,
  header_too_large: 431,
  already_linked: 409,
  no_migration: 404,
  already_confirmed: 409,
  not_confirmed: 409,
  passkey_required: 409,
  invalid_target: 400,
  target_not_found: 400,
  target_unavailable: 400,
  setup_token_invalid: 400,
  session_not_found: 404,
  password_change_required: 403,
  node_operation_busy: 409,
  node_control_unavailable: 503,
  distributed_unavailable: 503,
  bad_node: 400,
  migration_busy: 409,
  wake_share_exceeded: 403,
  retiring: 409,
  file_exists: 409,
  no_backup: 404,
  backup_corrupt: 409,
  restore_in_progress: 409,
  upload_not_found: 404,
  upload_incomplete: 409,
  too_many_uploads: 429,
  claim_not_linked: 412,
  bad_schedule: 400,
  bad_id: 400,
  schedule_running: 409,
  schedule_limit: 409,
  schedule_stale: 409,
  server_retiring: 409,
  bad_host: 400,
  confirm_mismatch: 400,
  export_expired: 410,
  auth_sources_changed: 409,
  auth_source_tag_locked: 409,
  auth_source_unavailable: 503,
  auth_source_unknown: 400,
  auth_source_lookup_unsupported: 400,
  minecraft_profile_not_found: 404,
  user_not_found: 404,
  already_member: 409,
} as const satisfies Record<ErrorCode, ContentfulStatusCode>;

/** Codes that answer under another code's name: the claim's `not_linked` is a 412, elsewhere a 404. */
const WIRE_CODE: Partial<Record<ErrorCode, ErrorCode>> = { claim_not_linked: 'not_linked' };

/** Retry-After of a 503 whose error names no wait of its own (DependencyUnavailable's default too). */
const DEFAULT_RETRY_AFTER_SECONDS = 5;

/** How a domain error answers: its status, the code the envelope names, the headers its facts make. */
export function answerOf(err: DomainError): { status: ContentfulStatusCode; code: ErrorCode; headers: Record<string, string> } {
  const headers: Record<string, string> = {};
  if (err.facts.retryAfterSeconds !== undefined) headers['Retry-After'] = String(err.facts.retryAfterSeconds);
  // Every 503 says when to try again (a cluster or dependency outage is brief or it is paged).
  else if (ERROR_STATUS[err.code] === 503) headers['Retry-After'] = String(DEFAULT_RETRY_AFTER_SECONDS);
  if (err.facts.uploadOffset !== undefined) headers['Upload-Offset'] = String(err.facts.uploadOffset);
  if (err.facts.challenge !== undefined) headers['WWW-Authenticate'] = err.facts.challenge;
  return { status: ERROR_STATUS[err.code], code: WIRE_CODE[err.code] ?? err.code, headers };
}

/** Maps an HTTPException thrown inside Hono or its middleware (validator, body limit) to a code. */
export function codeForStatus(status: number): ErrorCode {
  switch (status) {
    case 400:
      return 'bad_request';
    case 401:
      return 'unauthorized';
    case 403:
      return 'forbidden';
    case 404:
      return 'not_found';
    case 405:
      return 'method_not_allowed';
    case 413:
      return 'too_large';
    case 415:
      return 'unsupported_media_type';
    case 429:
      return 'rate_limited';
    case 503:
      return 'unavailable';
    default:
      return 'internal';
  }
}

export interface ErrorEnvelope {
  error: { code: string; message: string; request_id?: string };
}

/** The envelope's JSON text for an error code (its default message unless one is given). */
export function envelopeText(code: ErrorCode, requestId: string, message?: string): string {
  const body: ErrorEnvelope = { error: { code, message: message ?? new DomainError(code).message, request_id: requestId } };
  return JSON.stringify(body);
}
