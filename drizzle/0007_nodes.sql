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
CREATE UNIQUE INDEX "node_tasks_one_running" ON "node_tasks" USING btree ("state") WHERE "node_tasks"."state" = 'running';--> statement-breakpoint
CREATE INDEX "node_tasks_node_started" ON "node_tasks" USING btree ("node","started_at");--> statement-breakpoint
CREATE UNIQUE INDEX "server_moves_one_open" ON "server_moves" USING btree ("server") WHERE "server_moves"."state" <> 'succeeded';--> statement-breakpoint
CREATE INDEX "server_moves_server_started" ON "server_moves" USING btree ("server","started_at");