CREATE TABLE "server_guest_wakes" (
	"server_name" text PRIMARY KEY NOT NULL,
	"waker" text NOT NULL,
	"woken_at" timestamp with time zone NOT NULL
);
--> statement-breakpoint
CREATE TABLE "server_retirements" (
	"server_name" text PRIMARY KEY NOT NULL,
	"requested_at" timestamp with time zone NOT NULL,
	"requested_by" uuid NOT NULL,
	"delete" boolean NOT NULL
);
--> statement-breakpoint
CREATE INDEX "server_guest_wakes_waker_idx" ON "server_guest_wakes" USING btree ("waker");