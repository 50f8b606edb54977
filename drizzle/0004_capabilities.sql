CREATE TABLE "server_guest_wakes" (
	"server_name" text PRIMARY KEY NOT NULL,
	"waker" text NOT NULL,
	"woken_at" timestamp with time zone NOT NULL
);
--> statement-breakpoint
CREATE TABLE "server_retirements" (
	"server_name" text PRIMARY KEY NOT NULL,
	"requested_at" timestamp with time zone NOT NULL,
	"requested_by" uuid NOT NULL,
	"delete" boolean NOT NULL
);
--> statement-breakpoint
CREATE TABLE "db_backups" (
	"id" uuid PRIMARY KEY DEFAULT gen_random_uuid() NOT NULL,
	"at" timestamp with time zone NOT NULL,
	"name" text NOT NULL,
	"label" text NOT NULL,
	"size_bytes" bigint NOT NULL,
	"dir" text NOT NULL,
	"felis_version" text,
	"schema_version" integer,
	"recorded_at" timestamp with time zone NOT NULL
);
--> statement-breakpoint
CREATE TABLE "update_reports" (
	"id" uuid PRIMARY KEY DEFAULT gen_random_uuid() NOT NULL,
	"checked_at" timestamp with time zone NOT NULL,
	"felis" text NOT NULL,
	"components" jsonb NOT NULL,
	"recorded_at" timestamp with time zone NOT NULL
);
--> statement-breakpoint
CREATE TABLE "update_window" (
	"id" integer PRIMARY KEY DEFAULT 1 NOT NULL,
	"start" timestamp with time zone,
	"end" timestamp with time zone,
	"updated_at" timestamp with time zone NOT NULL,
	"updated_by" text,
	CONSTRAINT "update_window_single_row" CHECK ("update_window"."id" = 1)
);
--> statement-breakpoint
CREATE TABLE "build_log_lines" (
	"build_id" uuid NOT NULL,
	"seq" bigint GENERATED ALWAYS AS IDENTITY (sequence name "build_log_lines_seq_seq" INCREMENT BY 1 MINVALUE 1 MAXVALUE 9223372036854775807 START WITH 1 CACHE 1),
	"at" timestamp with time zone NOT NULL,
	"line" text NOT NULL
);
--> statement-breakpoint
CREATE TABLE "build_scans" (
	"build_id" uuid PRIMARY KEY NOT NULL,
	"scanned_at" timestamp with time zone NOT NULL,
	"summary" jsonb NOT NULL,
	"report" jsonb,
	"sbom" jsonb
);
--> statement-breakpoint
CREATE TABLE "builds" (
	"id" uuid PRIMARY KEY DEFAULT gen_random_uuid() NOT NULL,
	"image_ref" text NOT NULL,
	"status" text NOT NULL,
	"requested_by" text NOT NULL,
	"dockerfile" text,
	"context_ref" text,
	"context_digest" text,
	"base_image" text,
	"job_name" text,
	"log_ref" text,
	"error" text,
	"created_at" timestamp with time zone NOT NULL,
	"updated_at" timestamp with time zone NOT NULL,
	"finished_at" timestamp with time zone
);
--> statement-breakpoint
CREATE TABLE "submission_uploads" (
	"submission_id" uuid PRIMARY KEY NOT NULL,
	"received" bigint NOT NULL,
	"busy_until" timestamp with time zone,
	"updated_at" timestamp with time zone NOT NULL
);
--> statement-breakpoint
CREATE TABLE "submissions" (
	"id" uuid PRIMARY KEY DEFAULT gen_random_uuid() NOT NULL,
	"submitted_by" uuid NOT NULL,
	"display_name" text NOT NULL,
	"status" text NOT NULL,
	"context_sha256" text,
	"context_bytes" bigint,
	"image_ref" text,
	"build_id" uuid,
	"reviewed_by" text,
	"reject_reason" text,
	"reviewed_at" timestamp with time zone,
	"created_at" timestamp with time zone NOT NULL
);
--> statement-breakpoint
CREATE TABLE "event_streams" (
	"id" uuid PRIMARY KEY DEFAULT gen_random_uuid() NOT NULL,
	"user_id" uuid NOT NULL,
	"kind" text NOT NULL,
	"target" text NOT NULL,
	"opened_at" timestamp with time zone NOT NULL,
	"expires_at" timestamp with time zone NOT NULL
);
--> statement-breakpoint
CREATE TABLE "link_codes" (
	"code_hash" text PRIMARY KEY NOT NULL,
	"mc_uuid" uuid NOT NULL,
	"auth_source" text NOT NULL,
	"created_at" timestamp with time zone NOT NULL,
	"expires_at" timestamp with time zone NOT NULL,
	"used_at" timestamp with time zone
);
--> statement-breakpoint
CREATE TABLE "op_login_requests" (
	"id" text PRIMARY KEY NOT NULL,
	"user_id" uuid NOT NULL,
	"email" text NOT NULL,
	"client_ip" text DEFAULT '' NOT NULL,
	"user_agent" text DEFAULT '' NOT NULL,
	"status" text NOT NULL,
	"code_hash" text NOT NULL,
	"attempts" integer DEFAULT 0 NOT NULL,
	"created_at" timestamp with time zone NOT NULL,
	"expires_at" timestamp with time zone NOT NULL,
	"approved_by" uuid,
	"approved_at" timestamp with time zone,
	"consumed_at" timestamp with time zone
);
--> statement-breakpoint
CREATE TABLE "account_migrations" (
	"id" uuid PRIMARY KEY DEFAULT gen_random_uuid() NOT NULL,
	"source_user_id" uuid NOT NULL,
	"state" text NOT NULL,
	"created_at" timestamp with time zone NOT NULL,
	"confirm_code_hash" text,
	"confirm_code_expires_at" timestamp with time zone,
	"confirm_attempts" integer DEFAULT 0 NOT NULL,
	"confirm_factor" text,
	"confirm_session" text,
	"confirmed_at" timestamp with time zone,
	"target_user_id" uuid,
	"code_hash" text,
	"code_expires_at" timestamp with time zone,
	"finished_at" timestamp with time zone
);
--> statement-breakpoint
CREATE TABLE "passkey_ceremonies" (
	"id" uuid PRIMARY KEY DEFAULT gen_random_uuid() NOT NULL,
	"purpose" text NOT NULL,
	"subject" text NOT NULL,
	"challenge" text NOT NULL,
	"user_id" uuid,
	"network" text,
	"created_at" timestamp with time zone NOT NULL,
	"expires_at" timestamp with time zone NOT NULL
);
--> statement-breakpoint
CREATE TABLE "passkey_credentials" (
	"id" uuid PRIMARY KEY DEFAULT gen_random_uuid() NOT NULL,
	"user_id" uuid NOT NULL,
	"credential_id" text NOT NULL,
	"public_key" text NOT NULL,
	"counter" bigint NOT NULL,
	"transports" text[] NOT NULL,
	"device_type" text NOT NULL,
	"backed_up" boolean NOT NULL,
	"aaguid" text,
	"name" text DEFAULT '' NOT NULL,
	"created_at" timestamp with time zone NOT NULL,
	"last_used_at" timestamp with time zone
);
--> statement-breakpoint
CREATE TABLE "reauth_proofs" (
	"session_hash" text PRIMARY KEY NOT NULL,
	"proved_at" timestamp with time zone NOT NULL,
	"factor" text NOT NULL
);
--> statement-breakpoint
CREATE TABLE "world_backups" (
	"id" uuid PRIMARY KEY DEFAULT gen_random_uuid() NOT NULL,
	"server_name" text NOT NULL,
	"former_owner" uuid,
	"reason" text NOT NULL,
	"status" text NOT NULL,
	"storage_key" text NOT NULL,
	"size_bytes" bigint DEFAULT 0 NOT NULL,
	"sha256" text,
	"skipped_entries" integer DEFAULT 0 NOT NULL,
	"corrupt" boolean DEFAULT false NOT NULL,
	"verified_at" timestamp with time zone,
	"created_at" timestamp with time zone NOT NULL,
	"expires_at" timestamp with time zone NOT NULL
);
--> statement-breakpoint
CREATE TABLE "world_exports" (
	"ticket" uuid PRIMARY KEY NOT NULL,
	"server_name" text NOT NULL,
	"requested_by" uuid NOT NULL,
	"source" text NOT NULL,
	"state" text NOT NULL,
	"message" text,
	"storage_key" text NOT NULL,
	"filename" text NOT NULL,
	"content_type" text NOT NULL,
	"created_at" timestamp with time zone NOT NULL,
	"expires_at" timestamp with time zone NOT NULL
);
--> statement-breakpoint
CREATE TABLE "world_jobs" (
	"id" uuid PRIMARY KEY DEFAULT gen_random_uuid() NOT NULL,
	"server_name" text NOT NULL,
	"kind" text NOT NULL,
	"state" text NOT NULL,
	"message" text,
	"backup_id" uuid,
	"requested_by" text,
	"lock_holder" uuid NOT NULL,
	"started_at" timestamp with time zone NOT NULL,
	"finished_at" timestamp with time zone
);
--> statement-breakpoint
CREATE TABLE "world_locks" (
	"server_name" text PRIMARY KEY NOT NULL,
	"holder" uuid NOT NULL,
	"kind" text NOT NULL,
	"acquired_at" timestamp with time zone NOT NULL,
	"lease_until" timestamp with time zone NOT NULL
);
--> statement-breakpoint
ALTER TABLE "build_log_lines" ADD CONSTRAINT "build_log_lines_build_id_builds_id_fk" FOREIGN KEY ("build_id") REFERENCES "public"."builds"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "build_scans" ADD CONSTRAINT "build_scans_build_id_builds_id_fk" FOREIGN KEY ("build_id") REFERENCES "public"."builds"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "submission_uploads" ADD CONSTRAINT "submission_uploads_submission_id_submissions_id_fk" FOREIGN KEY ("submission_id") REFERENCES "public"."submissions"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "event_streams" ADD CONSTRAINT "event_streams_user_id_users_id_fk" FOREIGN KEY ("user_id") REFERENCES "public"."users"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "op_login_requests" ADD CONSTRAINT "op_login_requests_user_id_users_id_fk" FOREIGN KEY ("user_id") REFERENCES "public"."users"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "account_migrations" ADD CONSTRAINT "account_migrations_source_user_id_users_id_fk" FOREIGN KEY ("source_user_id") REFERENCES "public"."users"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "account_migrations" ADD CONSTRAINT "account_migrations_target_user_id_users_id_fk" FOREIGN KEY ("target_user_id") REFERENCES "public"."users"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "passkey_ceremonies" ADD CONSTRAINT "passkey_ceremonies_user_id_users_id_fk" FOREIGN KEY ("user_id") REFERENCES "public"."users"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "passkey_credentials" ADD CONSTRAINT "passkey_credentials_user_id_users_id_fk" FOREIGN KEY ("user_id") REFERENCES "public"."users"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "reauth_proofs" ADD CONSTRAINT "reauth_proofs_session_hash_sessions_token_hash_fk" FOREIGN KEY ("session_hash") REFERENCES "public"."sessions"("token_hash") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "world_backups" ADD CONSTRAINT "world_backups_former_owner_users_id_fk" FOREIGN KEY ("former_owner") REFERENCES "public"."users"("id") ON DELETE set null ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "world_exports" ADD CONSTRAINT "world_exports_requested_by_users_id_fk" FOREIGN KEY ("requested_by") REFERENCES "public"."users"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "server_guest_wakes_waker_idx" ON "server_guest_wakes" USING btree ("waker");--> statement-breakpoint
CREATE INDEX "db_backups_at_idx" ON "db_backups" USING btree ("at");--> statement-breakpoint
CREATE INDEX "update_reports_checked_at_idx" ON "update_reports" USING btree ("checked_at");--> statement-breakpoint
CREATE INDEX "build_log_lines_build_seq_idx" ON "build_log_lines" USING btree ("build_id","seq");--> statement-breakpoint
CREATE INDEX "builds_created_at_idx" ON "builds" USING btree ("created_at");--> statement-breakpoint
CREATE INDEX "submissions_submitted_by_idx" ON "submissions" USING btree ("submitted_by","created_at");--> statement-breakpoint
CREATE INDEX "submissions_created_at_idx" ON "submissions" USING btree ("created_at");--> statement-breakpoint
CREATE INDEX "event_streams_user_idx" ON "event_streams" USING btree ("user_id","expires_at");--> statement-breakpoint
CREATE INDEX "link_codes_expires_idx" ON "link_codes" USING btree ("expires_at");--> statement-breakpoint
CREATE INDEX "op_login_requests_status_idx" ON "op_login_requests" USING btree ("status","created_at");--> statement-breakpoint
CREATE INDEX "op_login_requests_user_idx" ON "op_login_requests" USING btree ("user_id","created_at");--> statement-breakpoint
CREATE UNIQUE INDEX "account_migrations_live_key" ON "account_migrations" USING btree ("source_user_id") WHERE "account_migrations"."state" in ('initiated', 'confirmed', 'code_issued');--> statement-breakpoint
CREATE INDEX "account_migrations_source_idx" ON "account_migrations" USING btree ("source_user_id","state");--> statement-breakpoint
CREATE INDEX "account_migrations_code_idx" ON "account_migrations" USING btree ("code_hash");--> statement-breakpoint
CREATE UNIQUE INDEX "passkey_ceremonies_subject_key" ON "passkey_ceremonies" USING btree ("purpose","subject","challenge");--> statement-breakpoint
CREATE INDEX "passkey_ceremonies_network_idx" ON "passkey_ceremonies" USING btree ("purpose","network","expires_at");--> statement-breakpoint
CREATE INDEX "passkey_ceremonies_expiry_idx" ON "passkey_ceremonies" USING btree ("expires_at");--> statement-breakpoint
CREATE UNIQUE INDEX "passkey_credentials_credential_id_key" ON "passkey_credentials" USING btree ("credential_id");--> statement-breakpoint
CREATE INDEX "passkey_credentials_user_idx" ON "passkey_credentials" USING btree ("user_id","created_at");--> statement-breakpoint
CREATE INDEX "world_backups_server_idx" ON "world_backups" USING btree ("server_name","created_at");--> statement-breakpoint
CREATE INDEX "world_backups_owner_idx" ON "world_backups" USING btree ("former_owner");--> statement-breakpoint
CREATE INDEX "world_exports_user_idx" ON "world_exports" USING btree ("requested_by");--> statement-breakpoint
CREATE INDEX "world_jobs_server_idx" ON "world_jobs" USING btree ("server_name","started_at");