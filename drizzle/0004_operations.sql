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
CREATE INDEX "db_backups_at_idx" ON "db_backups" USING btree ("at");--> statement-breakpoint
CREATE INDEX "update_reports_checked_at_idx" ON "update_reports" USING btree ("checked_at");