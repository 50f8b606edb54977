CREATE TABLE "barred_players" (
	"mc_uuid" uuid PRIMARY KEY NOT NULL,
	"username" text NOT NULL,
	"barred_at" timestamp with time zone NOT NULL,
	"hold_expires_at" timestamp with time zone NOT NULL,
	"data_ref" text
);
