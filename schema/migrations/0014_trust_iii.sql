ALTER TABLE "projects" ADD COLUMN "sso_provider_ids" uuid[] DEFAULT '{}'::uuid[] NOT NULL;--> statement-breakpoint
ALTER TABLE "sessions" ADD COLUMN "identity_provider_id" uuid;--> statement-breakpoint
ALTER TABLE "outbox" ADD COLUMN "streamed_at" timestamp with time zone;--> statement-breakpoint
ALTER TABLE "sessions" ADD CONSTRAINT "sessions_identity_provider_id_identity_providers_id_fk" FOREIGN KEY ("identity_provider_id") REFERENCES "public"."identity_providers"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "outbox_unstreamed_idx" ON "outbox" USING btree ("created_at") WHERE "outbox"."streamed_at" is null;--> statement-breakpoint
-- Events written before streams were tracked are not handed over again.
UPDATE "outbox" SET "streamed_at" = "created_at";--> statement-breakpoint
-- A project that required SSO before providers were named keeps accepting every provider that exists now.
UPDATE "projects" SET "sso_provider_ids" = coalesce((SELECT array_agg("id") FROM "identity_providers"), '{}') WHERE "sso_required";
