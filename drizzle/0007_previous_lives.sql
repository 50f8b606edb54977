ALTER TABLE "event_streams" ADD COLUMN "replica" text;--> statement-breakpoint
ALTER TABLE "leases" ADD COLUMN "replica" text;