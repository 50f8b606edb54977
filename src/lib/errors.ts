/**
 * Why a service refuses: the codes of the API's error envelope, thrown as a DomainError by the
 * features and the HTTP edge alike. A DomainError knows nothing of HTTP; one table at the edge
 * (src/http/errors.ts) gives each code its status and turns its facts into headers.
 */
export type ErrorCode =
  | 'bad_request'
  | 'unauthorized'
  | 'forbidden'
  | 'not_found'
  | 'method_not_allowed'
  | 'too_large'
  | 'unsupported_media_type'
  | 'internal'
  | 'unavailable'
  | 'wrong_caller'
  | 'setup_required'
  | 'cross_site'
  | 'conflict'
  | 'precondition_failed'
  | 'image_not_in_registry'
  | 'registry_unavailable'
  | 'maintenance_in_progress'
  | 'start_failed'
  | 'at_capacity'
  | 'not_linked'
  | 'account_retired'
  | 'protected_admin'
  | 'not_admin'
  | 'op_login_not_found'
  | 'op_login_mismatch'
  | 'op_login_invalid'
  | 'bad_name'
  | 'bad_path'
  | 'not_stopped'
  | 'not_running'
  | 'file_changed'
  | 'rate_limited'
  | 'cooldown'
  | 'quota_exceeded'
  | 'already_claimed'
  | 'link_required'
  | 'image_not_whitelisted'
  | 'local_auth_disabled'
  | 'no_passkey'
  | 'passkey_login_failed'
  | 'passkey_login_invalid'
  | 'passkey_unavailable'
  | 'passkey_challenge_invalid'
  | 'invalid_attestation'
  | 'passkey_already_bound'
  | 'staff_reauth'
  | 'no_step_up_factor'
  | 'otp_resend_cooldown'
  | 'too_many_challenges'
  | 'too_many_attempts'
  | 'invalid_code'
  | 'invalid_credentials'
  | 'staff_account'
  | 'account_disabled'
  | 'reauth_required'
  | 'mail_undeliverable'
  | 'mail_unavailable'
  | 'backup_store_full'
  | 'volume_full'
  | 'uploads_full'
  | 'upload_offset_mismatch'
  | 'upload_busy'
  | 'console_unavailable'
  | 'luckperms_missing'
  | 'digest_mismatch'
  | 'request_timeout'
  | 'expectation_failed'
  | 'header_too_large'
  | 'already_linked'
  | 'no_migration'
  | 'already_confirmed'
  | 'not_confirmed'
  | 'passkey_required'
  | 'invalid_target'
  | 'target_not_found'
  | 'target_unavailable'
  | 'setup_token_invalid'
  | 'session_not_found'
  | 'password_change_required'
  | 'node_operation_busy'
  | 'node_control_unavailable'
  | 'distributed_unavailable'
  | 'bad_node'
  | 'migration_busy'
  | 'wake_share_exceeded'
  | 'retiring'
  | 'file_exists'
  | 'no_backup'
  | 'backup_corrupt'
  | 'restore_in_progress'
  | 'upload_not_found'
  | 'upload_incomplete'
  | 'too_many_uploads'
  | 'claim_not_linked'
  | 'bad_schedule'
  | 'bad_id'
  | 'schedule_running'
  | 'schedule_limit'
  | 'schedule_stale'
  | 'server_retiring'
  | 'bad_host'
  | 'confirm_mismatch'
  | 'export_expired'
  | 'auth_sources_changed'
  | 'auth_source_tag_locked'
  | 'auth_source_unavailable'
  | 'auth_source_unknown'
  | 'auth_source_lookup_unsupported'
  | 'minecraft_profile_not_found'
  | 'user_not_found'
  | 'already_member';

/** Facts a refusal carries for the client beyond its code (the edge writes them as headers). */
export interface ErrorFacts {
  /** Seconds after which the same request may succeed: a cooldown, a limit, a busy gate (`Retry-After`). */
  retryAfterSeconds?: number;
  /** A resumable upload's size so far: where the next part must start (`Upload-Offset`). */
  uploadOffset?: number;
  /** The credential the caller must present to be let in (`WWW-Authenticate`). */
  challenge?: 'Bearer';
  cause?: unknown;
}

const DEFAULT_MESSAGE: Partial<Record<ErrorCode, string>> = {
  bad_request: 'The request is malformed or invalid.',
  unauthorized: 'Authentication is missing or invalid.',
  forbidden: 'You may not do this.',
  not_found: 'Nothing is served at this path.',
  method_not_allowed: 'This path is not served for this method.',
  too_large: 'The request body is larger than 1 MiB.',
  unsupported_media_type: 'The request body must be application/json.',
  internal: 'An unexpected error occurred; the server log has the details under this request id.',
  wrong_caller: 'This operation does not serve your caller.',
  cross_site: 'Cross-site requests are refused.',
  rate_limited: 'Too many requests; try again later.',
  link_required: 'Link your Minecraft account first.',
  request_timeout: 'The request did not arrive in time.',
  expectation_failed: 'Only Expect: 100-continue is understood.',
  header_too_large: 'The request header block is too large.',
};

/** A refusal with a stable code; services throw it, the HTTP edge answers it as the envelope. */
export class DomainError extends Error {
  override readonly name = 'DomainError';

  constructor(
    readonly code: ErrorCode,
    message?: string,
    readonly facts: ErrorFacts = {},
  ) {
    super(message ?? DEFAULT_MESSAGE[code] ?? code, { cause: facts.cause });
  }
}
