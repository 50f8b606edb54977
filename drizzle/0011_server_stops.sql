CREATE TABLE "server_stops" (
	"server_name" text PRIMARY KEY NOT NULL,
	"stopped_at" timestamp with time zone NOT NULL,
	"stopped_by" text NOT NULL,
	"kind" text NOT NULL
);
