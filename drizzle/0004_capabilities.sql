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
ALTER TABLE "build_log_lines" ADD CONSTRAINT "build_log_lines_build_id_builds_id_fk" FOREIGN KEY ("build_id") REFERENCES "public"."builds"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "build_scans" ADD CONSTRAINT "build_scans_build_id_builds_id_fk" FOREIGN KEY ("build_id") REFERENCES "public"."builds"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "submission_uploads" ADD CONSTRAINT "submission_uploads_submission_id_submissions_id_fk" FOREIGN KEY ("submission_id") REFERENCES "public"."submissions"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "event_streams" ADD CONSTRAINT "event_streams_user_id_users_id_fk" FOREIGN KEY ("user_id") REFERENCES "public"."users"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "db_backups_at_idx" ON "db_backups" USING btree ("at");--> statement-breakpoint
CREATE INDEX "update_reports_checked_at_idx" ON "update_reports" USING btree ("checked_at");--> statement-breakpoint
CREATE INDEX "build_log_lines_build_seq_idx" ON "build_log_lines" USING btree ("build_id","seq");--> statement-breakpoint
CREATE INDEX "builds_created_at_idx" ON "builds" USING btree ("created_at");--> statement-breakpoint
CREATE INDEX "submissions_submitted_by_idx" ON "submissions" USING btree ("submitted_by","created_at");--> statement-breakpoint
CREATE INDEX "submissions_created_at_idx" ON "submissions" USING btree ("created_at");--> statement-breakpoint
CREATE INDEX "event_streams_user_idx" ON "event_streams" USING btree ("user_id","expires_at");