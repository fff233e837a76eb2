CREATE TABLE "domain_tracking" (
	"domain_id" uuid PRIMARY KEY NOT NULL,
	"project_id" uuid NOT NULL,
	"opens" boolean DEFAULT false NOT NULL,
	"clicks" boolean DEFAULT false NOT NULL,
	"host" text,
	"host_verified_at" timestamp with time zone,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE TABLE "tracking_daily_counts" (
	"project_id" uuid NOT NULL,
	"day" date NOT NULL,
	"from_domain" text NOT NULL,
	"tag" text DEFAULT '' NOT NULL,
	"kind" text NOT NULL,
	"machine" boolean NOT NULL,
	"count" bigint DEFAULT 0 NOT NULL,
	CONSTRAINT "tracking_daily_counts_project_id_day_from_domain_tag_kind_machine_pk" PRIMARY KEY("project_id","day","from_domain","tag","kind","machine")
);
--> statement-breakpoint
ALTER TABLE "outbound_messages" ADD COLUMN "tracking" jsonb;--> statement-breakpoint
ALTER TABLE "domain_tracking" ADD CONSTRAINT "domain_tracking_domain_id_domains_id_fk" FOREIGN KEY ("domain_id") REFERENCES "public"."domains"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "domain_tracking" ADD CONSTRAINT "domain_tracking_project_id_projects_id_fk" FOREIGN KEY ("project_id") REFERENCES "public"."projects"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "tracking_daily_counts" ADD CONSTRAINT "tracking_daily_counts_project_id_projects_id_fk" FOREIGN KEY ("project_id") REFERENCES "public"."projects"("id") ON DELETE cascade ON UPDATE no action;