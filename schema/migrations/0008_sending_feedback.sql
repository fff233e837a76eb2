CREATE TYPE "public"."suppression_reason" AS ENUM('hard_bounce', 'complaint', 'manual', 'unsubscribe');--> statement-breakpoint
CREATE TYPE "public"."bounce_type" AS ENUM('hard', 'soft', 'complaint');--> statement-breakpoint
ALTER TYPE "public"."email_status" ADD VALUE 'bounced';--> statement-breakpoint
ALTER TYPE "public"."email_status" ADD VALUE 'complained';--> statement-breakpoint
ALTER TYPE "public"."email_status" ADD VALUE 'canceled';--> statement-breakpoint
CREATE TABLE "bounces" (
	"id" uuid PRIMARY KEY DEFAULT gen_random_uuid() NOT NULL,
	"project_id" uuid NOT NULL,
	"email_id" uuid,
	"recipient" text NOT NULL,
	"type" "bounce_type" NOT NULL,
	"source" text NOT NULL,
	"source_ref" text,
	"smtp_code" integer,
	"status" text,
	"diagnostic" text,
	"remote_mta" text,
	"feedback_type" text,
	"original_message_id" text,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE TABLE "email_daily_counts" (
	"project_id" uuid NOT NULL,
	"day" date NOT NULL,
	"from_domain" text NOT NULL,
	"tag" text DEFAULT '' NOT NULL,
	"status" "email_status" NOT NULL,
	"count" bigint DEFAULT 0 NOT NULL,
	CONSTRAINT "email_daily_counts_project_id_day_from_domain_tag_status_pk" PRIMARY KEY("project_id","day","from_domain","tag","status")
);
--> statement-breakpoint
ALTER TABLE "suppressions" ADD COLUMN "detail" text;--> statement-breakpoint
-- Reasons were free text: the hard bounce's own words become its enum value,
-- any other text is kept as the detail of a manual entry.
UPDATE "suppressions" SET "reason" = 'hard_bounce' WHERE "reason" = 'hard bounce';--> statement-breakpoint
UPDATE "suppressions" SET "detail" = "reason", "reason" = 'manual' WHERE "reason" NOT IN ('hard_bounce', 'complaint', 'manual', 'unsubscribe');--> statement-breakpoint
ALTER TABLE "suppressions" ALTER COLUMN "reason" DROP DEFAULT;--> statement-breakpoint
ALTER TABLE "suppressions" ALTER COLUMN "reason" SET DATA TYPE "public"."suppression_reason" USING "reason"::"public"."suppression_reason";--> statement-breakpoint
ALTER TABLE "suppressions" ALTER COLUMN "reason" SET DEFAULT 'manual'::"public"."suppression_reason";--> statement-breakpoint
ALTER TABLE "suppressions" ADD COLUMN "source_email_id" uuid;--> statement-breakpoint
ALTER TABLE "suppressions" ADD COLUMN "expires_at" timestamp with time zone;--> statement-breakpoint
ALTER TABLE "outbound_messages" ADD COLUMN "origin" text DEFAULT 'api' NOT NULL;--> statement-breakpoint
ALTER TABLE "outbound_messages" ADD COLUMN "send_at" timestamp with time zone;--> statement-breakpoint
ALTER TABLE "bounces" ADD CONSTRAINT "bounces_project_id_projects_id_fk" FOREIGN KEY ("project_id") REFERENCES "public"."projects"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "bounces" ADD CONSTRAINT "bounces_email_id_emails_id_fk" FOREIGN KEY ("email_id") REFERENCES "public"."emails"("id") ON DELETE set null ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "email_daily_counts" ADD CONSTRAINT "email_daily_counts_project_id_projects_id_fk" FOREIGN KEY ("project_id") REFERENCES "public"."projects"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "bounces_project_id_created_at_idx" ON "bounces" USING btree ("project_id","created_at" DESC NULLS LAST,"id" DESC NULLS LAST);--> statement-breakpoint
CREATE INDEX "bounces_email_id_idx" ON "bounces" USING btree ("email_id");--> statement-breakpoint
CREATE UNIQUE INDEX "bounces_project_id_source_ref_idx" ON "bounces" USING btree ("project_id","source","source_ref") WHERE "bounces"."source_ref" is not null;--> statement-breakpoint
CREATE INDEX "suppressions_project_id_created_at_idx" ON "suppressions" USING btree ("project_id","created_at" DESC NULLS LAST,"id" DESC NULLS LAST);