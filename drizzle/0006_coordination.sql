CREATE TABLE "leases" (
	"key" text PRIMARY KEY NOT NULL,
	"holder" text NOT NULL,
	"purpose" text NOT NULL,
	"acquired_at" timestamp with time zone NOT NULL,
	"lease_until" timestamp with time zone NOT NULL
);
--> statement-breakpoint
DROP TABLE "world_locks" CASCADE;--> statement-breakpoint
DROP TABLE "world_rounds" CASCADE;