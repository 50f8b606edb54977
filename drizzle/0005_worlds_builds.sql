CREATE TABLE "build_log_sources" (
	"build_id" uuid NOT NULL,
	"source" text NOT NULL,
	"lines" integer DEFAULT 0 NOT NULL,
	"done" boolean DEFAULT false NOT NULL,
	CONSTRAINT "build_log_sources_build_id_source_pk" PRIMARY KEY("build_id","source")
);
--> statement-breakpoint
CREATE TABLE "world_file_ops" (
	"id" uuid PRIMARY KEY NOT NULL,
	"server_name" text NOT NULL,
	"op" text NOT NULL,
	"path" text NOT NULL,
	"done" bigint DEFAULT 0 NOT NULL,
	"total" bigint DEFAULT 0 NOT NULL,
	"files" integer,
	"bytes" bigint,
	"error" jsonb,
	"created_at" timestamp with time zone NOT NULL
);
--> statement-breakpoint
CREATE TABLE "world_upload_sessions" (
	"id" uuid PRIMARY KEY NOT NULL,
	"user_id" uuid NOT NULL,
	"server_name" text NOT NULL,
	"path" text NOT NULL,
	"size" bigint NOT NULL,
	"received" bigint DEFAULT 0 NOT NULL,
	"parts" jsonb DEFAULT '[]'::jsonb NOT NULL,
	"busy_until" timestamp with time zone,
	"commit_job" uuid,
	"created_at" timestamp with time zone NOT NULL,
	"touched_at" timestamp with time zone NOT NULL
);
--> statement-breakpoint
CREATE TABLE "world_rounds" (
	"name" text PRIMARY KEY NOT NULL,
	"holder" text NOT NULL,
	"lease_until" timestamp with time zone NOT NULL
);
--> statement-breakpoint
ALTER TABLE "build_log_sources" ADD CONSTRAINT "build_log_sources_build_id_builds_id_fk" FOREIGN KEY ("build_id") REFERENCES "public"."builds"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "world_upload_sessions" ADD CONSTRAINT "world_upload_sessions_user_id_users_id_fk" FOREIGN KEY ("user_id") REFERENCES "public"."users"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "world_file_ops_server_idx" ON "world_file_ops" USING btree ("server_name","created_at");--> statement-breakpoint
CREATE INDEX "world_upload_sessions_user_idx" ON "world_upload_sessions" USING btree ("user_id");--> statement-breakpoint
CREATE INDEX "world_upload_sessions_touched_idx" ON "world_upload_sessions" USING btree ("touched_at");