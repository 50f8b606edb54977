ALTER TABLE "server_moves" ADD COLUMN "source_volume" text;--> statement-breakpoint
ALTER TABLE "server_moves" ADD COLUMN "target_volume" text;--> statement-breakpoint
ALTER TABLE "server_moves" ADD COLUMN "backup_id" text;