CREATE TABLE "server_restarts" (
	"id" uuid PRIMARY KEY DEFAULT gen_random_uuid() NOT NULL,
	"server_name" text NOT NULL,
	"requested_by" text NOT NULL,
	"state" text NOT NULL,
	"detail" text,
	"requested_at" timestamp with time zone NOT NULL,
	"step_at" timestamp with time zone NOT NULL,
	"finished_at" timestamp with time zone
);
--> statement-breakpoint
CREATE TABLE "server_schedules" (
	"id" bigint PRIMARY KEY GENERATED ALWAYS AS IDENTITY (sequence name "server_schedules_id_seq" INCREMENT BY 1 MINVALUE 1 MAXVALUE 9223372036854775807 START WITH 1 CACHE 1),
	"server_name" text NOT NULL,
	"owner_id" uuid,
	"label" text DEFAULT '' NOT NULL,
	"action" text NOT NULL,
	"command" text DEFAULT '' NOT NULL,
	"every_minutes" integer DEFAULT 0 NOT NULL,
	"minute_of_day" integer DEFAULT 0 NOT NULL,
	"weekdays" integer NOT NULL,
	"timezone" text NOT NULL,
	"warn_minutes" integer DEFAULT 0 NOT NULL,
	"enabled" boolean DEFAULT true NOT NULL,
	"next_run_at" timestamp with time zone,
	"warned_for" timestamp with time zone,
	"run_state" text,
	"run_holder" text,
	"run_step_at" timestamp with time zone,
	"run_resume" boolean DEFAULT false NOT NULL,
	"run_ref" text,
	"last_run_at" timestamp with time zone,
	"last_result" text,
	"last_detail" text,
	"created_by" text NOT NULL,
	"created_at" timestamp with time zone NOT NULL
);
--> statement-breakpoint
CREATE TABLE "webhook_deliveries" (
	"id" uuid PRIMARY KEY DEFAULT gen_random_uuid() NOT NULL,
	"endpoint_id" uuid NOT NULL,
	"event_key" text NOT NULL,
	"event_type" text NOT NULL,
	"payload" jsonb NOT NULL,
	"status" text NOT NULL,
	"attempts" integer DEFAULT 0 NOT NULL,
	"next_attempt_at" timestamp with time zone NOT NULL,
	"last_attempt_at" timestamp with time zone,
	"last_status" integer,
	"last_error" text,
	"created_at" timestamp with time zone NOT NULL,
	"delivered_at" timestamp with time zone,
	CONSTRAINT "webhook_deliveries_event_uq" UNIQUE("endpoint_id","event_key")
);
--> statement-breakpoint
CREATE TABLE "webhook_endpoints" (
	"id" uuid PRIMARY KEY DEFAULT gen_random_uuid() NOT NULL,
	"name" text NOT NULL,
	"url" text NOT NULL,
	"secret" text NOT NULL,
	"format" text NOT NULL,
	"events" jsonb NOT NULL,
	"enabled" boolean NOT NULL,
	"created_by" text NOT NULL,
	"created_at" timestamp with time zone NOT NULL,
	"updated_at" timestamp with time zone NOT NULL
);
--> statement-breakpoint
CREATE TABLE "server_usage" (
	"server_name" text NOT NULL,
	"resolution" text NOT NULL,
	"at" timestamp with time zone NOT NULL,
	"players_avg" real NOT NULL,
	"players_max" integer NOT NULL,
	"cpu_milli" integer,
	"memory_mib" integer,
	"samples" integer NOT NULL,
	CONSTRAINT "server_usage_server_name_resolution_at_pk" PRIMARY KEY("server_name","resolution","at")
);
--> statement-breakpoint
CREATE TABLE "node_tasks" (
	"id" text PRIMARY KEY NOT NULL,
	"action" text NOT NULL,
	"node" text NOT NULL,
	"request" jsonb NOT NULL,
	"actor" text NOT NULL,
	"state" text NOT NULL,
	"stage" text NOT NULL,
	"started_at" timestamp with time zone NOT NULL,
	"finished_at" timestamp with time zone,
	"error" text,
	"log" text DEFAULT '' NOT NULL
);
--> statement-breakpoint
CREATE TABLE "server_moves" (
	"id" text PRIMARY KEY NOT NULL,
	"server" text NOT NULL,
	"state" text NOT NULL,
	"stage" text NOT NULL,
	"source_node" text NOT NULL,
	"target_node" text NOT NULL,
	"switched" boolean DEFAULT false NOT NULL,
	"attempt" integer DEFAULT 0 NOT NULL,
	"actor" text NOT NULL,
	"started_at" timestamp with time zone NOT NULL,
	"updated_at" timestamp with time zone NOT NULL,
	"error" text
);
--> statement-breakpoint
ALTER TABLE "settings" ADD COLUMN "revision" integer DEFAULT 0 NOT NULL;--> statement-breakpoint
ALTER TABLE "server_wake_allowlist" ADD COLUMN "can_wake" boolean DEFAULT true NOT NULL;--> statement-breakpoint
ALTER TABLE "event_streams" ADD COLUMN "replica" text;--> statement-breakpoint
ALTER TABLE "world_backups" ADD COLUMN "retention" text;--> statement-breakpoint
ALTER TABLE "leases" ADD COLUMN "replica" text;--> statement-breakpoint
ALTER TABLE "server_schedules" ADD CONSTRAINT "server_schedules_owner_id_users_id_fk" FOREIGN KEY ("owner_id") REFERENCES "public"."users"("id") ON DELETE set null ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "webhook_deliveries" ADD CONSTRAINT "webhook_deliveries_endpoint_id_webhook_endpoints_id_fk" FOREIGN KEY ("endpoint_id") REFERENCES "public"."webhook_endpoints"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE UNIQUE INDEX "server_restarts_active_idx" ON "server_restarts" USING btree ("server_name") WHERE state in ('stopping', 'starting');--> statement-breakpoint
CREATE INDEX "server_schedules_server_idx" ON "server_schedules" USING btree ("server_name","id");--> statement-breakpoint
CREATE INDEX "server_schedules_next_idx" ON "server_schedules" USING btree ("next_run_at");--> statement-breakpoint
CREATE INDEX "webhook_deliveries_due_idx" ON "webhook_deliveries" USING btree ("status","next_attempt_at");--> statement-breakpoint
CREATE INDEX "webhook_deliveries_endpoint_idx" ON "webhook_deliveries" USING btree ("endpoint_id","created_at");--> statement-breakpoint
CREATE UNIQUE INDEX "node_tasks_one_running" ON "node_tasks" USING btree ("state") WHERE "node_tasks"."state" = 'running';--> statement-breakpoint
CREATE INDEX "node_tasks_node_started" ON "node_tasks" USING btree ("node","started_at");--> statement-breakpoint
CREATE UNIQUE INDEX "server_moves_one_open" ON "server_moves" USING btree ("server") WHERE "server_moves"."state" <> 'succeeded';--> statement-breakpoint
CREATE INDEX "server_moves_server_started" ON "server_moves" USING btree ("server","started_at");--> statement-breakpoint
CREATE INDEX "audit_log_actor_idx" ON "audit_log" USING btree ("actor","at");