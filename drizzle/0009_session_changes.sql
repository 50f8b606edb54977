-- A notification on felis_session_changes whenever a session check's answer may change: a session
-- revoked, moved to another user or host, or deleted; an account changed or deleted. Every replica
-- listens (src/db/change-feed.ts) and forgets the session rows it cached. A session's own
-- last_seen_at and expires_at writes (once a minute while in use) do not notify: they only slide.
CREATE OR REPLACE FUNCTION "felis_notify_session_change"() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  PERFORM pg_notify('felis_session_changes', '');
  RETURN NULL;
END
$$;--> statement-breakpoint
CREATE TRIGGER "sessions_notify_change" AFTER UPDATE OF "token_hash", "user_id", "host", "revoked_at" OR DELETE ON "sessions"
  FOR EACH STATEMENT EXECUTE FUNCTION "felis_notify_session_change"();--> statement-breakpoint
CREATE TRIGGER "users_notify_change" AFTER UPDATE OR DELETE ON "users"
  FOR EACH STATEMENT EXECUTE FUNCTION "felis_notify_session_change"();
