CREATE TABLE "build_log_sources" (
	"build_id" uuid NOT NULL,
	"source" text NOT NULL,
	"lines" integer DEFAULT 0 NOT NULL,
	"done" boolean DEFAULT false NOT NULL,
	CONSTRAINT "build_log_sources_build_id_source_pk" PRIMARY KEY("build_id","source")
);
--> statement-breakpoint
ALTER TABLE "build_log_sources" ADD CONSTRAINT "build_log_sources_build_id_builds_id_fk" FOREIGN KEY ("build_id") REFERENCES "public"."builds"("id") ON DELETE cascade ON UPDATE no action;