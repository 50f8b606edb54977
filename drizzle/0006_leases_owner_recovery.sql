CREATE TABLE "leases" (
	"key" text PRIMARY KEY NOT NULL,
	"holder" text NOT NULL,
	"purpose" text NOT NULL,
	"acquired_at" timestamp with time zone NOT NULL,
	"lease_until" timestamp with time zone NOT NULL
);
--> statement-breakpoint
ALTER TABLE "world_locks" DISABLE ROW LEVEL SECURITY;--> statement-breakpoint
ALTER TABLE "world_rounds" DISABLE ROW LEVEL SECURITY;--> statement-breakpoint
DROP TABLE "world_locks" CASCADE;--> statement-breakpoint
DROP TABLE "world_rounds" CASCADE;--> statement-breakpoint
ALTER TABLE "setup_tokens" ADD COLUMN "owner_id" uuid;--> statement-breakpoint
ALTER TABLE "setup_tokens" ADD CONSTRAINT "setup_tokens_owner_id_users_id_fk" FOREIGN KEY ("owner_id") REFERENCES "public"."users"("id") ON DELETE cascade ON UPDATE no action;