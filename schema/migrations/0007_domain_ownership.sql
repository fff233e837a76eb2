CREATE TABLE "inbound_usage" (
	"project_id" uuid PRIMARY KEY NOT NULL,
	"stored_bytes" bigint NOT NULL,
	"quota_reached" boolean NOT NULL
);
--> statement-breakpoint
DROP INDEX "domains_name_idx";--> statement-breakpoint
ALTER TABLE "domains" ADD COLUMN "ownership_proven_at" timestamp with time zone;--> statement-breakpoint
-- Ownership is sticky, so every registration that was ever verified keeps its name and its mail:
-- verified now, a check found its DKIM record, or a check recorded that it lost a verification
-- (`failed`); so does one made before sending existed (no key yet), which had no way to prove.
-- Every other one waits for its proof. One owner per name (the index below): the oldest.
UPDATE "domains" SET "ownership_proven_at" = coalesce("verified_at", "last_checked_at", now())
  WHERE "id" IN (SELECT DISTINCT ON ("name") "id" FROM "domains"
    WHERE "verified_at" IS NOT NULL OR "verification"->'dkim'->>'ok' = 'true' OR "verification"->'failed' IS NOT NULL
      OR "dkim_public_key" IS NULL
    ORDER BY "name", "created_at", "id");--> statement-breakpoint
ALTER TABLE "inbound_usage" ADD CONSTRAINT "inbound_usage_project_id_projects_id_fk" FOREIGN KEY ("project_id") REFERENCES "public"."projects"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE UNIQUE INDEX "domains_name_owner_idx" ON "domains" USING btree ("name") WHERE "domains"."ownership_proven_at" IS NOT NULL;--> statement-breakpoint
CREATE UNIQUE INDEX "domains_project_id_name_idx" ON "domains" USING btree ("project_id","name");