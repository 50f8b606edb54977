CREATE TABLE "passkey_ceremonies" (
	"id" uuid PRIMARY KEY DEFAULT gen_random_uuid() NOT NULL,
	"purpose" text NOT NULL,
	"subject" text NOT NULL,
	"challenge" text NOT NULL,
	"user_id" uuid,
	"network" text,
	"created_at" timestamp with time zone NOT NULL,
	"expires_at" timestamp with time zone NOT NULL
);
--> statement-breakpoint
CREATE TABLE "passkey_credentials" (
	"id" uuid PRIMARY KEY DEFAULT gen_random_uuid() NOT NULL,
	"user_id" uuid NOT NULL,
	"credential_id" text NOT NULL,
	"public_key" text NOT NULL,
	"counter" bigint NOT NULL,
	"transports" text[] NOT NULL,
	"device_type" text NOT NULL,
	"backed_up" boolean NOT NULL,
	"aaguid" text,
	"name" text DEFAULT '' NOT NULL,
	"created_at" timestamp with time zone NOT NULL,
	"last_used_at" timestamp with time zone
);
--> statement-breakpoint
CREATE TABLE "reauth_proofs" (
	"session_hash" text PRIMARY KEY NOT NULL,
	"proved_at" timestamp with time zone NOT NULL,
	"factor" text NOT NULL
);
--> statement-breakpoint
ALTER TABLE "passkey_ceremonies" ADD CONSTRAINT "passkey_ceremonies_user_id_users_id_fk" FOREIGN KEY ("user_id") REFERENCES "public"."users"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "passkey_credentials" ADD CONSTRAINT "passkey_credentials_user_id_users_id_fk" FOREIGN KEY ("user_id") REFERENCES "public"."users"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "reauth_proofs" ADD CONSTRAINT "reauth_proofs_session_hash_sessions_token_hash_fk" FOREIGN KEY ("session_hash") REFERENCES "public"."sessions"("token_hash") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE UNIQUE INDEX "passkey_ceremonies_subject_key" ON "passkey_ceremonies" USING btree ("purpose","subject","challenge");--> statement-breakpoint
CREATE INDEX "passkey_ceremonies_network_idx" ON "passkey_ceremonies" USING btree ("purpose","network","expires_at");--> statement-breakpoint
CREATE INDEX "passkey_ceremonies_expiry_idx" ON "passkey_ceremonies" USING btree ("expires_at");--> statement-breakpoint
CREATE UNIQUE INDEX "passkey_credentials_credential_id_key" ON "passkey_credentials" USING btree ("credential_id");--> statement-breakpoint
CREATE INDEX "passkey_credentials_user_idx" ON "passkey_credentials" USING btree ("user_id","created_at");