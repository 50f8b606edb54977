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
ALTER TABLE "world_backups" ADD CONSTRAINT "world_backups_former_owner_users_id_fk" FOREIGN KEY ("former_owner") REFERENCES "public"."users"("id") ON DELETE set null ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "world_exports" ADD CONSTRAINT "world_exports_requested_by_users_id_fk" FOREIGN KEY ("requested_by") REFERENCES "public"."users"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "world_backups_server_idx" ON "world_backups" USING btree ("server_name","created_at");--> statement-breakpoint
CREATE INDEX "world_backups_owner_idx" ON "world_backups" USING btree ("former_owner");--> statement-breakpoint
CREATE INDEX "world_exports_user_idx" ON "world_exports" USING btree ("requested_by");--> statement-breakpoint
CREATE INDEX "world_jobs_server_idx" ON "world_jobs" USING btree ("server_name","started_at");