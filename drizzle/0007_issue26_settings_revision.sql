ALTER TABLE "settings" ADD COLUMN "revision" integer DEFAULT 0 NOT NULL;--> statement-breakpoint
ALTER TABLE "server_wake_allowlist" ADD COLUMN "can_wake" boolean DEFAULT true NOT NULL;