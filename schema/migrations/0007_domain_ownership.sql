CREATE TABLE "inbound_usage" (
	"project_id" uuid PRIMARY KEY NOT NULL,
	"stored_bytes" bigint NOT NULL,
	"quota_reached" boolean NOT NULL
);
--> statement-breakpoint
DROP INDEX "domains_name_idx";--> statement-breakpoint
ALTER TABLE "domains" ADD COLUMN "ownership_proven_at" timestamp with time zone;--> statement-breakpoint
-- Registrations whose DKIM record a check found keep their mail; every other one waits for its proof.
UPDATE "domains" SET "ownership_proven_at" = coalesce("verified_at", "last_checked_at", now())
  WHERE "verified_at" IS NOT NULL OR "verification"->'dkim'->>'ok' = 'true';--> statement-breakpoint
ALTER TABLE "inbound_usage" ADD CONSTRAINT "inbound_usage_project_id_projects_id_fk" FOREIGN KEY ("project_id") REFERENCES "public"."projects"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE UNIQUE INDEX "domains_name_owner_idx" ON "domains" USING btree ("name") WHERE "domains"."ownership_proven_at" IS NOT NULL;--> statement-breakpoint
CREATE UNIQUE INDEX "domains_project_id_name_idx" ON "domains" USING btree ("project_id","name");