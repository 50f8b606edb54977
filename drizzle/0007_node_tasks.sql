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
CREATE UNIQUE INDEX "node_tasks_one_running" ON "node_tasks" USING btree ("state") WHERE "node_tasks"."state" = 'running';--> statement-breakpoint
CREATE INDEX "node_tasks_node_started" ON "node_tasks" USING btree ("node","started_at");