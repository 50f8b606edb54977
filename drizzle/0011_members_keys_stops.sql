CREATE TABLE "api_keys" (
	"id" uuid PRIMARY KEY DEFAULT gen_random_uuid() NOT NULL,
	"user_id" uuid NOT NULL,
	"name" text NOT NULL,
	"prefix" text NOT NULL,
	"secret_hash" text NOT NULL,
	"scopes" text[] NOT NULL,
	"created_at" timestamp with time zone NOT NULL,
	"expires_at" timestamp with time zone,
	"revoked_at" timestamp with time zone,
	"last_used_at" timestamp with time zone,
	"window_start" timestamp with time zone,
	"window_count" integer DEFAULT 0 NOT NULL
);
--> statement-breakpoint
CREATE TABLE "server_members" (
	"server_name" text NOT NULL,
	"user_id" uuid NOT NULL,
	"owner_id" uuid NOT NULL,
	"permissions" text[] NOT NULL,
	"added_at" timestamp with time zone NOT NULL,
	"added_by" uuid NOT NULL,
	CONSTRAINT "server_members_server_name_user_id_pk" PRIMARY KEY("server_name","user_id")
);
--> statement-breakpoint
CREATE TABLE "server_stops" (
	"server_name" text PRIMARY KEY NOT NULL,
	"stopped_at" timestamp with time zone NOT NULL,
	"stopped_by" text NOT NULL,
	"kind" text NOT NULL
);
--> statement-breakpoint
ALTER TABLE "api_keys" ADD CONSTRAINT "api_keys_user_id_users_id_fk" FOREIGN KEY ("user_id") REFERENCES "public"."users"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "server_members" ADD CONSTRAINT "server_members_user_id_users_id_fk" FOREIGN KEY ("user_id") REFERENCES "public"."users"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE UNIQUE INDEX "api_keys_secret_hash_key" ON "api_keys" USING btree ("secret_hash");--> statement-breakpoint
CREATE INDEX "api_keys_user_idx" ON "api_keys" USING btree ("user_id");--> statement-breakpoint
CREATE INDEX "server_members_user_idx" ON "server_members" USING btree ("user_id");--> statement-breakpoint
-- A member removed or changed, or an API key revoked: every replica's change feed hears it (the
-- open console streams check their access again at once, as for a session revoked).
CREATE TRIGGER "server_members_notify_change" AFTER UPDATE OR DELETE ON "server_members"
  FOR EACH STATEMENT EXECUTE FUNCTION "felis_notify_session_change"();--> statement-breakpoint
CREATE TRIGGER "api_keys_notify_change" AFTER UPDATE OF "revoked_at" OR DELETE ON "api_keys"
  FOR EACH STATEMENT EXECUTE FUNCTION "felis_notify_session_change"();
