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
ALTER TABLE "op_login_requests" ADD CONSTRAINT "op_login_requests_user_id_users_id_fk" FOREIGN KEY ("user_id") REFERENCES "public"."users"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "account_migrations" ADD CONSTRAINT "account_migrations_source_user_id_users_id_fk" FOREIGN KEY ("source_user_id") REFERENCES "public"."users"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "account_migrations" ADD CONSTRAINT "account_migrations_target_user_id_users_id_fk" FOREIGN KEY ("target_user_id") REFERENCES "public"."users"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "link_codes_expires_idx" ON "link_codes" USING btree ("expires_at");--> statement-breakpoint
CREATE INDEX "op_login_requests_status_idx" ON "op_login_requests" USING btree ("status","created_at");--> statement-breakpoint
CREATE INDEX "op_login_requests_user_idx" ON "op_login_requests" USING btree ("user_id","created_at");--> statement-breakpoint
CREATE UNIQUE INDEX "account_migrations_live_key" ON "account_migrations" USING btree ("source_user_id") WHERE "account_migrations"."state" in ('initiated', 'confirmed', 'code_issued');--> statement-breakpoint
CREATE INDEX "account_migrations_source_idx" ON "account_migrations" USING btree ("source_user_id","state");--> statement-breakpoint
CREATE INDEX "account_migrations_code_idx" ON "account_migrations" USING btree ("code_hash");