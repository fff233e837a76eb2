CREATE TABLE "inbound_rules" (
	"id" uuid PRIMARY KEY DEFAULT gen_random_uuid() NOT NULL,
	"project_id" uuid NOT NULL,
	"position" integer NOT NULL,
	"name" text DEFAULT '' NOT NULL,
	"match" jsonb NOT NULL,
	"action" text NOT NULL,
	"refuse_text" text,
	"webhook_ids" uuid[],
	"forward_to" text,
	"matched_count" bigint DEFAULT 0 NOT NULL,
	"last_matched_at" timestamp with time zone,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
ALTER TABLE "outbox" ADD COLUMN "webhook_ids" uuid[];--> statement-breakpoint
ALTER TABLE "inbound_rules" ADD CONSTRAINT "inbound_rules_project_id_projects_id_fk" FOREIGN KEY ("project_id") REFERENCES "public"."projects"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "inbound_rules_project_id_position_idx" ON "inbound_rules" USING btree ("project_id","position");