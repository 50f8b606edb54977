CREATE TABLE "images" (
	"image_ref" text PRIMARY KEY NOT NULL,
	"source" text NOT NULL,
	"added_by" text NOT NULL,
	"enabled" boolean DEFAULT true NOT NULL,
	"added_at" timestamp with time zone NOT NULL,
	"build_id" text
);
--> statement-breakpoint
CREATE TABLE "server_activity" (
	"server_name" text PRIMARY KEY NOT NULL,
	"ready_at" timestamp with time zone,
	"last_join_at" timestamp with time zone,
	"last_join_uuid" uuid
);
--> statement-breakpoint
CREATE TABLE "server_claims" (
	"server_name" text PRIMARY KEY NOT NULL,
	"subdomain" text NOT NULL,
	"user_id" uuid NOT NULL,
	"claimed_at" timestamp with time zone NOT NULL,
	"cpu_milli" integer DEFAULT 0 NOT NULL,
	"memory_mb" integer DEFAULT 0 NOT NULL,
	"storage_gb" integer DEFAULT 0 NOT NULL
);
--> statement-breakpoint
CREATE TABLE "server_maintenance" (
	"server_name" text PRIMARY KEY NOT NULL,
	"reason" text NOT NULL,
	"since" timestamp with time zone NOT NULL
);
--> statement-breakpoint
CREATE TABLE "server_wake_allowlist" (
	"server_name" text NOT NULL,
	"mc_uuid" uuid NOT NULL,
	"added_at" timestamp with time zone NOT NULL,
	CONSTRAINT "server_wake_allowlist_server_name_mc_uuid_pk" PRIMARY KEY("server_name","mc_uuid")
);
--> statement-breakpoint
CREATE TABLE "server_wakes" (
	"server_name" text PRIMARY KEY NOT NULL,
	"last_wake_at" timestamp with time zone NOT NULL
);
--> statement-breakpoint
ALTER TABLE "server_claims" ADD CONSTRAINT "server_claims_user_id_users_id_fk" FOREIGN KEY ("user_id") REFERENCES "public"."users"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "server_claims_user_idx" ON "server_claims" USING btree ("user_id");